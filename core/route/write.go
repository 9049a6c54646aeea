// write.go holds write: one writer's changes, staged beside the tables
// while the writer works them out, then committed whole.

package route

import (
	"container/heap"
	"maps"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/shard"
)

// A writer never changes a table while it works out what to change: it
// reads the tables through a write, which answers from what the writer has
// staged first, and stages every change there (a group, a cluster's set of
// names, a live entry, filter servers, mappings, topic entries, the next
// broker view). Nothing staged is seen by readers or by the tables until
// commit, so a writer that panics (a bug, an exhausted resource) leaves
// them as it found them and there is nothing to undo. Commit only stores
// what was prepared: map assignments, heap moves and atomic stores, none of
// which can panic (running out of memory there ends the process, it does
// not unwind). Every write is thus applied whole or not at all by
// construction; a new table needs no undo record, only its place in
// commit.
//
// Staged values are the write's own: a group, a cluster's set or a live
// entry is copied before it changes (editGroup, editCluster, touch), a
// filter list or a mapping is replaced, so the tables' values stay as they
// were until commit swaps them. A staged value that commit stores under its key must carry an owned
// key (cloned from the request, or taken from the table), as Go maps keep
// the key of every assignment.
//
// A heartbeat has nothing to work out and needs no write (Table.touch).
//
// The brokerName -> topics index, the expiry heap and the connection index
// are never staged: commit derives them from the topic entries and live
// entries it stores, so they cannot disagree with those.
type write struct {
	t        *Table
	groups   map[string]*brokerGroup        // nil: removed
	clusters map[string]map[string]struct{} // nil: removed
	live     map[addrKey]*liveInfo          // nil: removed
	filters  map[addrKey][]string           // nil: removed
	mappings map[string]map[string][]byte
	view     *brokerView   // to publish; nil: unchanged
	topics   []topicUpdate // each topic at most once per write
	source   string        // the source of the topics a registration creates (createdBy)
	owned    bool          // source is the write's own copy
}

// createdBy returns the source of a topic the write creates, copied from
// the request on first use: an unchanged re-registration creates none and
// copies nothing.
func (w *write) createdBy() string {
	if !w.owned {
		w.source, w.owned = strings.Clone(w.source), true
	}
	return w.source
}

// A writer's method takes the writers' lock, prepares its write through a
// write on its stack (a function value taking it would make it escape), and
// commits it unless it refused the request.

// commit stores what w staged: the writers' tables, then the broker view,
// then the topic entries, so that a reader that sees an entry sees a view
// at least as new. Called under mu.
func (w *write) commit() {
	t := w.t
	if len(w.groups)+len(w.clusters)+len(w.live)+len(w.filters)+len(w.mappings)+len(w.topics) > 0 || w.view != nil {
		t.gen.Add(1)
	}
	for name, g := range w.groups {
		if g == nil {
			delete(t.groups, name)
		} else {
			t.groups[name] = g
		}
	}
	for name, set := range w.clusters {
		if set == nil {
			delete(t.clusters, name)
		} else {
			t.clusters[name] = set
		}
	}
	for key, list := range w.filters {
		if list == nil {
			delete(t.filters, key)
		} else {
			t.filters[key] = list
		}
	}
	maps.Copy(t.mappings, w.mappings)
	for key, li := range w.live {
		t.storeLive(key, li)
	}
	if w.view != nil {
		t.view.Store(w.view)
	}
	t.applyTopics(w.topics)
	if w.view != nil || len(w.topics) > 0 {
		// After the entries: a topic list encoded for this generation
		// shows all of them (lists.go).
		t.listGen.Add(1)
	}
}

// get reads k through a write: what the write staged, else the table's
// value.
func get[K comparable, V any](staged, table map[K]V, k K) V {
	if v, ok := staged[k]; ok {
		return v
	}
	return table[k]
}

func (w *write) group(name string) *brokerGroup { return get(w.groups, w.t.groups, name) }

// cluster returns cluster's brokerNames; the set must not be modified.
func (w *write) cluster(name string) map[string]struct{} { return get(w.clusters, w.t.clusters, name) }

// editCluster returns the write's own set of cluster's brokerNames, copied
// from the table's on first use.
func (w *write) editCluster(name string) map[string]struct{} {
	if set := w.clusters[name]; set != nil {
		return set
	}
	set := maps.Clone(w.cluster(name))
	if set == nil {
		set = map[string]struct{}{}
	}
	put(&w.clusters, strings.Clone(name), set)
	return set
}

func (w *write) liveOf(key addrKey) *liveInfo { return get(w.live, w.t.live, key) }

// filter returns key's filter servers, nil when none (never empty).
func (w *write) filter(key addrKey) []string { return get(w.filters, w.t.filters, key) }

func (w *write) mapping(topic string) map[string][]byte { return get(w.mappings, w.t.mappings, topic) }

// editGroup returns the write's own copy of name's group, nil when there is
// none.
func (w *write) editGroup(name string) *brokerGroup {
	if g, ok := w.groups[name]; ok {
		return g
	}
	g := w.t.groups[name]
	if g == nil {
		return nil
	}
	c := *g
	c.addrs = slices.Clone(g.addrs)
	put(&w.groups, c.name, &c)
	return &c
}

// dropLive stages the removal of key's live entry, if any, and returns it.
func (w *write) dropLive(key addrKey) *liveInfo {
	li := w.liveOf(key)
	if li != nil {
		put(&w.live, key, nil)
	}
	return li
}

// connEmpty reports whether no live entry is left on conn once w commits.
func (w *write) connEmpty(conn ConnID) bool {
	for key := range w.t.conns[conn] {
		if li := w.liveOf(key); li != nil && li.conn == conn {
			return false
		}
	}
	for _, li := range w.live {
		if li != nil && li.conn == conn {
			return false
		}
	}
	return true
}

// put stages v under k in *m, making the map on first use. A value commit
// stores must come with an owned key (see write).
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// storeLive makes li (nil: none) the live entry of key, keeping the expiry
// heap and the connection index in step. Called under mu, by commit.
func (t *Table) storeLive(key addrKey, li *liveInfo) {
	old := t.live[key]
	switch {
	case li == nil:
		if old != nil {
			delete(t.live, key)
			heap.Remove(&t.expiry, old.idx)
			t.connDel(old.conn, old.key)
		}
	case old != nil:
		if old.conn != li.conn {
			t.connDel(old.conn, old.key)
			t.connAdd(li.conn, old.key)
		}
		li.key, li.idx = old.key, old.idx
		*old = *li
		heap.Fix(&t.expiry, old.idx)
	default:
		t.live[li.key] = li
		heap.Push(&t.expiry, li)
		t.connAdd(li.conn, li.key)
	}
}

// applyTopics stores updates in one batch and keeps brokerTopics in step
// with what each entry's queues became. Called under mu, by commit.
func (t *Table) applyTopics(ups []topicUpdate) {
	if len(ups) == 0 {
		return
	}
	keys := make([]string, len(ups))
	for i := range ups {
		keys[i] = ups[i].key
	}
	olds := make([]*topicEntry, len(ups))
	t.topics.UpdateMany(keys, func(i int, key string, old *topicEntry, ok bool) (*topicEntry, shard.Action) {
		nv := ups[i].nv
		if ok && old != nv {
			t.cacheDropped(old)
		}
		olds[i] = old
		if nv == nil {
			return nil, shard.Delete
		}
		return nv, shard.Store
	})
	// Reindexed after the batch, in the order the write staged the entries,
	// which is the order they were made in: the shards' order would chase
	// 100k fresh entries all over the heap (25 % more CPU for a first
	// registration of 100k topics).
	for i := range ups {
		t.reindex(ups[i].key, olds[i], ups[i].nv)
		t.countSource(olds[i], ups[i].nv)
	}
}

// countSource keeps sourceTopics in step with a topic's entry going from
// old to nv (either may be nil). Called under mu, by commit.
func (t *Table) countSource(old, nv *topicEntry) {
	switch {
	case old == nil && nv != nil && nv.source != "":
		t.sourceTopics[nv.source]++
	case old != nil && nv == nil && old.source != "":
		if t.sourceTopics[old.source]--; t.sourceTopics[old.source] <= 0 {
			delete(t.sourceTopics, old.source)
		}
	}
}

// reindex moves topic in brokerTopics from the groups of old's queues to
// those of nv's (either may be nil). Both are sorted by broker name, so one
// merge finds the groups only one of them has. topic must be owned.
func (t *Table) reindex(topic string, old, nv *topicEntry) {
	var oq, nq []body.QueueData
	if old != nil {
		oq = old.queues
	}
	if nv != nil {
		nq = nv.queues
	}
	if len(oq) == len(nq) && (len(oq) == 0 || &oq[0] == &nq[0]) {
		return // the same queues: a refreshed entry
	}
	i, j := 0, 0
	for i < len(oq) || j < len(nq) {
		switch {
		case j == len(nq) || i < len(oq) && oq[i].BrokerName < nq[j].BrokerName:
			t.indexDel(oq[i].BrokerName, topic)
			i++
		case i == len(oq) || nq[j].BrokerName < oq[i].BrokerName:
			t.indexAdd(nq[j].BrokerName, topic)
			j++
		default:
			i++
			j++
		}
	}
}
