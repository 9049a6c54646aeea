// lists.go holds the encoded topic lists (GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
// GET_TOPICS_BY_CLUSTER, GET_SYSTEM_TOPIC_LIST_FROM_NS and the unit lists):
// each is encoded once per generation of the table and shared by every
// answer, as route bodies are.

package route

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketns/rocketns/codec/body"
)

// A topic list depends on the topic entries and the broker view only, and
// commit counts each write that stores either as a new generation
// (Table.listGen), after it has stored them. A reader loads the generation
// before it reads the table, so a list it encodes reflects at least that
// generation; when the next commit counts another, every list is encoded
// afresh on its next request. A list encoded while a commit is storing its
// entries shard by shard may show part of that commit, as TopicList does,
// until the commit's generation replaces it.
//
// What the lists hold is bounded by what the table holds: at most one of
// each list, and one per cluster the view knows (a request naming another
// cluster is answered without being kept). A list nobody asks for is never
// encoded; one asked for once stays until the table changes.

// EncodedList is a TopicList body and the number of topics it names. The
// body is shared: the caller must not modify it.
type EncodedList struct {
	Body   []byte
	Topics int
}

// topicLists are the lists encoded for one generation.
type topicLists struct {
	gen       uint64
	all       atomic.Pointer[EncodedList]
	system    atomic.Pointer[EncodedList]
	unit      [3]atomic.Pointer[EncodedList] // by UnitKind
	mu        sync.RWMutex
	byCluster map[string]*EncodedList // clusters of the view only
}

// currentLists returns the lists of the current generation, making them empty on
// the first request after a commit.
func (t *Table) currentLists() *topicLists {
	for {
		g := t.listGen.Load()
		l := t.lists.Load()
		if l != nil && l.gen >= g {
			return l
		}
		if nl := (&topicLists{gen: g}); t.lists.CompareAndSwap(l, nl) {
			return nl
		}
	}
}

// encodedList returns what slot holds, else encodes the list build returns
// and keeps it there (the first encoding stored wins).
func encodedList(slot *atomic.Pointer[EncodedList], build func() ([]string, string)) *EncodedList {
	if e := slot.Load(); e != nil {
		return e
	}
	topics, addr := build()
	e := &EncodedList{Body: body.AppendTopicList(nil, topics, addr), Topics: len(topics)}
	if slot.CompareAndSwap(nil, e) {
		return e
	}
	return slot.Load()
}

func noAddr(topics []string) ([]string, string) { return topics, "" }

// TopicListBody is TopicList encoded (GET_ALL_TOPIC_LIST_FROM_NAMESERVER).
func (t *Table) TopicListBody() *EncodedList {
	return encodedList(&t.currentLists().all, func() ([]string, string) { return noAddr(t.TopicList()) })
}

// SystemTopicListBody is SystemTopicList encoded
// (GET_SYSTEM_TOPIC_LIST_FROM_NS).
func (t *Table) SystemTopicListBody() *EncodedList {
	return encodedList(&t.currentLists().system, t.SystemTopicList)
}

// UnitTopicListBody is UnitTopicList(kind) encoded.
func (t *Table) UnitTopicListBody(kind UnitKind) *EncodedList {
	l := t.currentLists()
	if int(kind) >= len(l.unit) {
		return &EncodedList{Body: body.AppendTopicList(nil, []string{}, "")}
	}
	return encodedList(&l.unit[kind], func() ([]string, string) { return noAddr(t.UnitTopicList(kind)) })
}

// TopicsByClusterBody is TopicsByCluster(cluster) encoded
// (GET_TOPICS_BY_CLUSTER). Only the lists of clusters the table knows are
// kept, so a peer naming clusters at random costs an encoding of an empty
// list each time and no memory.
func (t *Table) TopicsByClusterBody(cluster string) *EncodedList {
	l := t.currentLists()
	l.mu.RLock()
	e := l.byCluster[cluster]
	l.mu.RUnlock()
	if e != nil {
		return e
	}
	topics := t.TopicsByCluster(cluster)
	e = &EncodedList{Body: body.AppendTopicList(nil, topics, ""), Topics: len(topics)}
	if _, known := t.view.Load().clusters[cluster]; !known {
		return e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if kept := l.byCluster[cluster]; kept != nil {
		return kept
	}
	if l.byCluster == nil {
		l.byCluster = map[string]*EncodedList{}
	}
	// The request's string may alias its buffer.
	l.byCluster[strings.Clone(cluster)] = e
	return e
}
