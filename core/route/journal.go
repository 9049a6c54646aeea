// The writers' undo journal: what every change is about to overwrite, so
// that a writer that panics part-way is rolled back to where it began.

package route

import (
	"container/heap"
	"slices"

	"github.com/rocketns/rocketns/shard"
)

// A writer validates its request before it changes anything, so a refusal
// leaves nothing to undo; the journal is for what validation cannot rule
// out, a panic in the middle (a bug, an exhausted resource). Every change to
// the writers' state goes through a helper that first records what it
// overwrites; settle, deferred by each writer, restores the records in
// reverse order when the writer panics and lets the panic go on, so the
// server still answers SYSTEM_ERROR and logs it. The journal's slices are
// reused from writer to writer and cleared when one ends, so steady-state
// writes record into memory they already have.
//
// The expiry heap and the connection index are not recorded: both follow
// the live table, and a rollback rebuilds them from it.
type journal struct {
	on       bool
	view     *brokerView // published when the writer began
	groups   []savedGroup
	clusters []savedCluster
	live     []savedLive
	filters  []savedFilter
	index    []savedIndex
	mappings []savedMapping
	topics   []savedTopic
	// fresh names the brokerTopics sets this writer created: a rollback
	// drops them whole, so what is added to them needs no record (a first
	// registration of 100k topics would otherwise record each).
	fresh map[string]struct{}
}

type savedGroup struct {
	name string
	ptr  *brokerGroup // nil: no group of that name
	val  brokerGroup  // *ptr as it was, addrs copied
}

type savedCluster struct {
	name string
	set  map[string]struct{} // a copy; nil: no such cluster
}

type savedLive struct {
	key addrKey
	ptr *liveInfo // nil: no live entry
	val liveInfo
}

type savedFilter struct {
	key  addrKey
	list []string
	ok   bool
}

// savedIndex is one brokerTopics change: topic added to or removed from
// name's set (had says whether it was there), or, when whole, name's set
// dropped entirely.
type savedIndex struct {
	name, topic string
	had, whole  bool
	set         map[string]struct{}
}

type savedMapping struct {
	topic string
	m     map[string][]byte
	ok    bool
}

type savedTopic struct {
	key string
	old *topicEntry
	ok  bool
}

// begin starts a writer's journal. Called under mu.
func (t *Table) begin() {
	t.j.on = true
	t.j.view = t.view.Load()
}

// settle ends a writer, deferred right after begin: a panic rolls back
// what the writer changed and goes on. Called under mu.
func (t *Table) settle() {
	if p := recover(); p != nil {
		t.rollback()
		t.j.reset()
		panic(p)
	}
	t.j.reset()
}

// maxKeptJournal bounds the entries a journal slice keeps for the next
// writer; a first registration of 100k topics should not pin its records.
const maxKeptJournal = 4096

func resetSlice[E any](s []E) []E {
	if cap(s) > maxKeptJournal {
		return nil
	}
	clear(s)
	return s[:0]
}

func (j *journal) reset() {
	j.on, j.view = false, nil
	j.groups = resetSlice(j.groups)
	j.clusters = resetSlice(j.clusters)
	j.live = resetSlice(j.live)
	j.filters = resetSlice(j.filters)
	j.index = resetSlice(j.index)
	j.mappings = resetSlice(j.mappings)
	j.topics = resetSlice(j.topics)
	clear(j.fresh)
}

// The save helpers record what the next change overwrites. Called under mu.

func (t *Table) saveGroup(name string) {
	if !t.j.on {
		return
	}
	s := savedGroup{name: name, ptr: t.groups[name]}
	if s.ptr != nil {
		s.val = *s.ptr
		s.val.addrs = slices.Clone(s.ptr.addrs)
	}
	t.j.groups = append(t.j.groups, s)
}

func (t *Table) saveCluster(name string) {
	if !t.j.on {
		return
	}
	s := savedCluster{name: name}
	if set, ok := t.clusters[name]; ok {
		s.set = make(map[string]struct{}, len(set))
		for n := range set {
			s.set[n] = struct{}{}
		}
	}
	t.j.clusters = append(t.j.clusters, s)
}

func (t *Table) saveLive(key addrKey) {
	if !t.j.on {
		return
	}
	s := savedLive{key: key, ptr: t.live[key]}
	if s.ptr != nil {
		s.val = *s.ptr
	}
	t.j.live = append(t.j.live, s)
}

func (t *Table) saveFilter(key addrKey) {
	if !t.j.on {
		return
	}
	list, ok := t.filters[key]
	t.j.filters = append(t.j.filters, savedFilter{key: key, list: list, ok: ok})
}

func (t *Table) saveIndex(name, topic string) {
	if !t.j.on {
		return
	}
	if _, ok := t.j.fresh[name]; ok {
		return
	}
	set, ok := t.brokerTopics[name]
	if !ok {
		// The set is about to be created: record its absence once.
		t.j.index = append(t.j.index, savedIndex{name: name, whole: true})
		if t.j.fresh == nil {
			t.j.fresh = map[string]struct{}{}
		}
		t.j.fresh[name] = struct{}{}
		return
	}
	_, had := set[topic]
	t.j.index = append(t.j.index, savedIndex{name: name, topic: topic, had: had})
}

func (t *Table) saveIndexSet(name string) {
	if !t.j.on {
		return
	}
	t.j.index = append(t.j.index, savedIndex{name: name, whole: true, set: t.brokerTopics[name]})
}

func (t *Table) saveMapping(topic string) {
	if !t.j.on {
		return
	}
	m, ok := t.mappings[topic]
	t.j.mappings = append(t.j.mappings, savedMapping{topic: topic, m: m, ok: ok})
}

// growTopics makes room for n topic records at once.
func (t *Table) growTopics(n int) {
	if t.j.on {
		t.j.topics = slices.Grow(t.j.topics, n)
	}
}

func (t *Table) saveTopic(key string, old *topicEntry, ok bool) {
	if !t.j.on {
		return
	}
	t.j.topics = append(t.j.topics, savedTopic{key: key, old: old, ok: ok})
}

// rollback restores what the journal recorded, newest first, so each table
// ends as the writer found it. Called under mu.
//
// The broker view goes back first: a reader may have filled a cache from
// the abandoned view, so every topic entry the writer replaced comes back
// as a copy with empty caches, and so does every topic of a group whose
// view the writer had changed.
func (t *Table) rollback() {
	j := &t.j
	cur := t.view.Load()
	t.view.Store(j.view)

	for i := len(j.groups) - 1; i >= 0; i-- {
		s := j.groups[i]
		if s.ptr == nil {
			delete(t.groups, s.name)
			continue
		}
		*s.ptr = s.val
		t.groups[s.name] = s.ptr
	}
	for i := len(j.clusters) - 1; i >= 0; i-- {
		s := j.clusters[i]
		if s.set == nil {
			delete(t.clusters, s.name)
		} else {
			t.clusters[s.name] = s.set
		}
	}
	for i := len(j.filters) - 1; i >= 0; i-- {
		s := j.filters[i]
		if s.ok {
			t.filters[s.key] = s.list
		} else {
			delete(t.filters, s.key)
		}
	}
	for i := len(j.mappings) - 1; i >= 0; i-- {
		s := j.mappings[i]
		if s.ok {
			t.mappings[s.topic] = s.m
		} else {
			delete(t.mappings, s.topic)
		}
	}
	for i := len(j.index) - 1; i >= 0; i-- {
		s := j.index[i]
		switch {
		case s.whole:
			if s.set == nil {
				delete(t.brokerTopics, s.name)
			} else {
				t.brokerTopics[s.name] = s.set
			}
		case s.had:
			set := t.brokerTopics[s.name]
			if set == nil {
				set = map[string]struct{}{}
				t.brokerTopics[s.name] = set
			}
			set[s.topic] = struct{}{}
		default:
			if set := t.brokerTopics[s.name]; set != nil {
				delete(set, s.topic)
				if len(set) == 0 {
					delete(t.brokerTopics, s.name)
				}
			}
		}
	}
	if len(j.live) > 0 {
		for i := len(j.live) - 1; i >= 0; i-- {
			s := j.live[i]
			if s.ptr == nil {
				delete(t.live, s.key)
				continue
			}
			*s.ptr = s.val
			t.live[s.key] = s.ptr
		}
		t.rebuildLiveIndexes()
	}

	// Topic entries: the oldest record of each key is what it was.
	restore := make(map[string]savedTopic, len(j.topics))
	for i := len(j.topics) - 1; i >= 0; i-- {
		restore[j.topics[i].key] = j.topics[i]
	}
	if cur != j.view {
		for name, g := range cur.groups {
			if j.view.groups[name] != g {
				t.refreshIndexed(name, restore)
			}
		}
		for name := range j.view.groups {
			if _, ok := cur.groups[name]; !ok {
				t.refreshIndexed(name, restore)
			}
		}
	}
	if len(restore) == 0 {
		return
	}
	keys := make([]string, 0, len(restore))
	for k := range restore {
		keys = append(keys, k)
	}
	t.topics.UpdateMany(keys, func(_ int, key string, now *topicEntry, ok bool) (*topicEntry, shard.Action) {
		if ok {
			t.cacheDropped(now)
		}
		s := restore[key]
		if !s.ok {
			return nil, shard.Delete
		}
		// A copy even of an entry the writer left in place: its caches
		// may hold bodies of the abandoned view.
		return s.old.refreshed(), shard.Store
	})
}

// refreshIndexed adds to restore, as unchanged, every topic holding a
// queue of name that is not there yet, so that it is republished with empty
// caches. Called under mu, after the index is restored.
func (t *Table) refreshIndexed(name string, restore map[string]savedTopic) {
	for topic := range t.brokerTopics[name] {
		if _, ok := restore[topic]; ok {
			continue
		}
		if e, ok := t.topics.Load(topic); ok {
			restore[e.topic] = savedTopic{key: e.topic, old: e, ok: true}
		}
	}
}

// rebuildLiveIndexes rebuilds the expiry heap and the connection index from
// the live table. Called under mu.
func (t *Table) rebuildLiveIndexes() {
	t.expiry = t.expiry[:0]
	clear(t.conns)
	for key, li := range t.live {
		li.idx = len(t.expiry)
		t.expiry = append(t.expiry, li)
		t.connAdd(li.conn, key)
	}
	heap.Init(&t.expiry)
}
