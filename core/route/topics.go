// Topic entries, route assembly (Java pickupTopicRouteData) and the cached
// route bodies handed to GET_ROUTEINFO_BY_TOPIC.

package route

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/rocketns/rocketns/codec/body"
)

// topicEntry is one topic's queue data. It is immutable once stored in the
// shard table, except for the body caches, which are filled once (first CAS
// wins) and never replaced: a change to the topic or to a broker group it
// references stores a new entry with empty caches.
type topicEntry struct {
	topic   string                        // the table key, owned (cloned) by the table
	queues  []body.QueueData              // sorted by BrokerName, one per broker group
	mapping map[string][]byte             // Table.mappings[topic], shared; nil when none
	source  string                        // the Registration.Source that created it (Table.sourceTopics)
	bodies  [4]atomic.Pointer[cachedBody] // by bodySlot
	// ordered caches the body decorated with an orderTopicConf, keyed by
	// that conf, by bodySlot (see RouteBodyOrdered).
	ordered [4]atomic.Pointer[orderedBody]
	// cachedBytes is the size of the bodies counted in
	// Table.cachedBytes, with droppedMark once replaced (metrics.go).
	cachedBytes atomic.Int64
}

// bodySlot indexes the body caches by dialect and by the acting-master
// switch the body was built under: a switch flip selects other slots instead
// of invalidating every topic.
func bodySlot(d body.Dialect, actingMaster bool) int {
	i := int(d & 1)
	if actingMaster {
		i |= 2
	}
	return i
}

// orderedBody is an encoded route carrying an orderTopicConf. The conf it
// was built with is its key: a KV change is a cache miss, never a stale body.
type orderedBody struct {
	conf string
	b    []byte
	ok   bool
}

// cachedBody is an encoded route; ok=false caches "topic not found" (every
// queue's broker group is gone).
type cachedBody struct {
	b  []byte
	ok bool
}

func (e *topicEntry) queueOf(brokerName string) (int, bool) {
	return slices.BinarySearchFunc(e.queues, brokerName, func(q body.QueueData, n string) int {
		return strings.Compare(q.BrokerName, n)
	})
}

// withQueue returns a new entry whose queue for q.BrokerName is q.
func (e *topicEntry) withQueue(q body.QueueData) *topicEntry {
	n := &topicEntry{topic: e.topic, mapping: e.mapping, source: e.source}
	i, ok := e.queueOf(q.BrokerName)
	if ok {
		n.queues = slices.Clone(e.queues)
		n.queues[i] = q
	} else {
		n.queues = make([]body.QueueData, 0, len(e.queues)+1)
		n.queues = append(append(append(n.queues, e.queues[:i]...), q), e.queues[i:]...)
	}
	return n
}

// refreshed returns a copy of e with empty body caches.
func (e *topicEntry) refreshed() *topicEntry {
	return &topicEntry{topic: e.topic, queues: e.queues, mapping: e.mapping, source: e.source}
}

// assemble builds topic's route from e and v. With deep it copies everything
// so the caller may modify the result; otherwise the result shares immutable
// slices and maps with e and v and is only fit for encoding.
//
// Unlike Java, a QueueData whose broker group is gone is left out together
// with the missing BrokerData: writers publish broker removals before the
// topic updates that follow from them, and a reader in between must not see
// queues it cannot route to.
func (t *Table) assemble(e *topicEntry, v *brokerView, deep, actingMaster bool) (*body.TopicRoute, bool) {
	r := &body.TopicRoute{
		BrokerDatas:       make([]body.BrokerData, 0, len(e.queues)),
		QueueDatas:        make([]body.QueueData, 0, len(e.queues)),
		FilterServerTable: map[string][]string{},
	}
	for _, q := range e.queues {
		g := v.groups[q.BrokerName]
		if g == nil {
			continue
		}
		r.QueueDatas = append(r.QueueDatas, q)
		bd := g.data
		if deep {
			bd.Addrs = slices.Clone(bd.Addrs)
		}
		r.BrokerDatas = append(r.BrokerDatas, bd)
		for addr, fs := range g.filters {
			if deep {
				fs = slices.Clone(fs)
			}
			r.FilterServerTable[addr] = fs
		}
	}
	if len(r.QueueDatas) == 0 {
		return nil, false
	}
	if len(e.mapping) > 0 {
		r.MappingByBroker = e.mapping
		if deep {
			r.MappingByBroker = make(map[string][]byte, len(e.mapping))
			for k, b := range e.mapping {
				r.MappingByBroker[k] = slices.Clone(b)
			}
		}
	}
	if actingMaster && !strings.HasPrefix(e.topic, syncBrokerMemberPrefix) {
		actingMasterRewrite(r)
	}
	return r, true
}

// actingMasterRewrite is 3.4 step 6: a master-less acting-master group whose
// queues are read-only shows its smallest-id slave as id 0, so clients can
// do master-only reads against it.
func actingMasterRewrite(r *body.TopicRoute) {
	need := false
	for i := range r.BrokerDatas {
		if a := r.BrokerDatas[i].Addrs; len(a) > 0 && a[0].ID != 0 {
			need = true
			break
		}
	}
	if !need {
		return
	}
	for i := range r.BrokerDatas {
		bd := &r.BrokerDatas[i]
		if len(bd.Addrs) == 0 || bd.Addrs[0].ID == 0 || !bd.EnableActingMaster {
			continue
		}
		for _, q := range r.QueueDatas {
			if q.BrokerName != bd.BrokerName {
				continue
			}
			if q.Perm&PermWrite == 0 {
				// Addrs is sorted: the smallest id is first and becomes 0,
				// which keeps the slice sorted. Copy: it may be shared.
				addrs := slices.Clone(bd.Addrs)
				addrs[0].ID = 0
				bd.Addrs = addrs
			}
			break
		}
	}
}

// RouteBody returns the encoded GET_ROUTEINFO_BY_TOPIC body of topic in
// dialect d, or false when the topic has no route (TOPIC_NOT_EXIST). It takes
// no lock. The returned slice is shared by every caller and stays valid
// forever; it must not be modified.
func (t *Table) RouteBody(topic string, d body.Dialect) ([]byte, bool) {
	e, ok := t.topics.Load(topic)
	if !ok {
		return nil, false
	}
	acting := t.actingMaster.Load()
	slot := &e.bodies[bodySlot(d, acting)]
	if c := slot.Load(); c != nil {
		return c.b, c.ok
	}
	c := &cachedBody{}
	if r, ok := t.assemble(e, t.view.Load(), false, acting); ok {
		c.b, c.ok = body.AppendTopicRoute(nil, r, d), true
	}
	if slot.CompareAndSwap(nil, c) {
		t.cacheFilled(e, len(c.b))
	} else {
		c = slot.Load()
	}
	return c.b, c.ok
}

// RouteBodyOrdered is RouteBody with orderTopicConf set to conf (the
// topic's ORDER_TOPIC_CONFIG value when orderMessageEnable is on). The body
// is cached beside the plain ones and rebuilt when conf differs from the one
// it was built with, or when the topic's route changes. conf must be owned
// by the caller (it is kept as the cache key); the result is shared and must
// not be modified.
func (t *Table) RouteBodyOrdered(topic string, d body.Dialect, conf string) ([]byte, bool) {
	e, ok := t.topics.Load(topic)
	if !ok {
		return nil, false
	}
	acting := t.actingMaster.Load()
	slot := &e.ordered[bodySlot(d, acting)]
	old := slot.Load()
	if old != nil && old.conf == conf {
		return old.b, old.ok
	}
	c := &orderedBody{conf: conf}
	if r, ok := t.assemble(e, t.view.Load(), false, acting); ok {
		r.OrderTopicConf = conf
		c.b, c.ok = body.AppendTopicRoute(nil, r, d), true
	}
	if slot.CompareAndSwap(old, c) {
		n := len(c.b)
		if old != nil {
			n -= len(old.b)
		}
		t.cacheFilled(e, n)
	}
	return c.b, c.ok
}

// Route returns a fresh copy of topic's route, for callers that decorate it
// (orderTopicConf, zone filtering) before encoding.
func (t *Table) Route(topic string) (*body.TopicRoute, bool) {
	e, ok := t.topics.Load(topic)
	if !ok {
		return nil, false
	}
	return t.assemble(e, t.view.Load(), true, t.actingMaster.Load())
}

// ZoneRoute is topic's route as a zone-mode client in zone sees it (Java's
// ZoneRouteRPCHook, applied after the acting-master rewrite): broker groups
// that have no master (id 0) or whose zoneName equals zone, ignoring case,
// stay; the others go with their queue data and their addresses' filter
// servers. The result shares immutable data with the table: the caller may
// set its top-level fields (OrderTopicConf) and encode it, nothing more.
func (t *Table) ZoneRoute(topic, zone string) (*body.TopicRoute, bool) {
	e, ok := t.topics.Load(topic)
	if !ok {
		return nil, false
	}
	r, ok := t.assemble(e, t.view.Load(), false, t.actingMaster.Load())
	if !ok {
		return nil, false
	}
	FilterZone(r, zone)
	return r, true
}

// FilterZone applies the zone rule of ZoneRoute to r in place. It replaces
// r's slices rather than writing into them, and deletes keys from
// r.FilterServerTable, which must therefore be r's own map.
func FilterZone(r *body.TopicRoute, zone string) {
	var removed map[string]bool
	keep := make([]body.BrokerData, 0, len(r.BrokerDatas))
	for _, bd := range r.BrokerDatas {
		if len(bd.Addrs) == 0 || bd.Addrs[0].ID != 0 || strings.EqualFold(bd.ZoneName, zone) {
			keep = append(keep, bd)
			continue
		}
		if removed == nil {
			removed = map[string]bool{}
		}
		removed[bd.BrokerName] = true
		for _, a := range bd.Addrs {
			delete(r.FilterServerTable, a.Addr)
		}
	}
	if removed == nil {
		return
	}
	r.BrokerDatas = keep
	qs := make([]body.QueueData, 0, len(r.QueueDatas))
	for _, q := range r.QueueDatas {
		if !removed[q.BrokerName] {
			qs = append(qs, q)
		}
	}
	r.QueueDatas = qs
}

// TopicList returns every topic (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), sorted.
// It walks the shard snapshots without a lock: a registration running at the
// same time may show in some shards and not yet in others.
func (t *Table) TopicList() []string {
	out := make([]string, 0, t.topics.Len())
	t.topics.Range(func(k string, _ *topicEntry) bool {
		out = append(out, k)
		return true
	})
	slices.Sort(out)
	return out
}

// TopicPage returns up to limit topics sorted after the name after ("" is
// from the start), and whether more follow: one page of TopicList, for a
// list too large for one frame. Pages are read from the live table, so a
// topic added or removed between two pages shows or not as it sorts.
func (t *Table) TopicPage(after string, limit int) (page []string, more bool) {
	page = []string{}
	t.topics.Range(func(k string, _ *topicEntry) bool {
		if k > after {
			page = append(page, k)
		}
		return true
	})
	slices.Sort(page)
	if limit > 0 && len(page) > limit {
		return page[:limit], true
	}
	return page, false
}

// TopicsByCluster returns the topics with queue data on any broker group of
// cluster (GET_TOPICS_BY_CLUSTER); empty for an unknown cluster.
func (t *Table) TopicsByCluster(cluster string) []string {
	v := t.view.Load()
	names := v.clusters[cluster]
	out := []string{}
	if len(names) == 0 {
		return out
	}
	t.topics.Range(func(k string, e *topicEntry) bool {
		for _, q := range e.queues {
			if _, ok := slices.BinarySearch(names, q.BrokerName); ok {
				out = append(out, k)
				break
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}

// UnitKind selects a unit topic list.
type UnitKind uint8

const (
	UnitTopics             UnitKind = iota // GET_UNIT_TOPIC_LIST: UNIT set
	HasUnitSubTopics                       // GET_HAS_UNIT_SUB_TOPIC_LIST: UNIT_SUB set
	HasUnitSubUnunitTopics                 // GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: UNIT_SUB set, UNIT clear
)

// UnitTopicList returns the topics whose first QueueData (Java: first in hash
// order; here: smallest brokerName) carries the flags kind asks for.
func (t *Table) UnitTopicList(kind UnitKind) []string {
	out := []string{}
	t.topics.Range(func(k string, e *topicEntry) bool {
		if len(e.queues) == 0 {
			return true
		}
		f := e.queues[0].TopicSysFlag
		var hit bool
		switch kind {
		case UnitTopics:
			hit = f&FlagUnit != 0
		case HasUnitSubTopics:
			hit = f&FlagUnitSub != 0
		case HasUnitSubUnunitTopics:
			hit = f&FlagUnitSub != 0 && f&FlagUnit == 0
		}
		if hit {
			out = append(out, k)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// topicUpdate is one staged change to a topic.
type topicUpdate struct {
	key string      // owned by the table
	nv  *topicEntry // nil deletes the topic
}

// indexAdd and indexDel maintain brokerTopics. Called under mu, by commit.
func (t *Table) indexAdd(brokerName, topic string) {
	set := t.brokerTopics[brokerName]
	if set == nil {
		set = map[string]struct{}{}
		t.brokerTopics[brokerName] = set
	}
	set[topic] = struct{}{}
}

func (t *Table) indexDel(brokerName, topic string) {
	if set := t.brokerTopics[brokerName]; set != nil {
		delete(set, topic)
		if len(set) == 0 {
			delete(t.brokerTopics, brokerName)
		}
	}
}

// queueRule is what rewriteQueues does to a broker group's queue in each of
// its topics.
type queueRule struct {
	name    string
	drop    bool              // remove the queue
	perm    func(int32) int32 // the new permission; nil keeps it
	refresh bool              // republish unchanged topics too: the group's view changed
}

// rewriteQueues stages, for every topic holding a queue of a group in
// rules, one new entry with each such queue rewritten by its group's rule,
// and returns how many queues it visited.
func (w *write) rewriteQueues(rules []queueRule) int {
	byName := make(map[string]*queueRule, len(rules))
	for i := range rules {
		byName[rules[i].name] = &rules[i]
	}
	var seen map[string]struct{} // a topic of two groups is rewritten once
	visited := 0
	for _, r := range rules {
		for topic := range w.t.brokerTopics[r.name] {
			if len(rules) > 1 {
				if _, ok := seen[topic]; ok {
					continue
				}
				put(&seen, topic, struct{}{})
			}
			e, ok := w.t.topics.Load(topic)
			if !ok {
				continue
			}
			ne, n := e.rewritten(byName)
			visited += n
			if ne != e {
				w.topics = append(w.topics, topicUpdate{e.topic, ne})
			}
		}
	}
	return visited
}

// rewritten applies rules to e's queues. It returns e itself when no rule
// changes a queue or asks for a refresh, nil when every queue went, and how
// many queues a rule applied to.
func (e *topicEntry) rewritten(rules map[string]*queueRule) (*topicEntry, int) {
	var kept []body.QueueData // nil until a queue changes
	changed, refresh, n := false, false, 0
	for i, q := range e.queues {
		r := rules[q.BrokerName]
		if r == nil {
			if changed {
				kept = append(kept, q)
			}
			continue
		}
		n++
		refresh = refresh || r.refresh
		nq := q
		if r.perm != nil {
			nq.Perm = r.perm(q.Perm)
		}
		if !changed && !r.drop && nq == q {
			continue
		}
		if !changed {
			changed = true
			kept = append(make([]body.QueueData, 0, len(e.queues)), e.queues[:i]...)
		}
		if !r.drop {
			kept = append(kept, nq)
		}
	}
	switch {
	case changed && len(kept) == 0:
		return nil, n
	case changed:
		ne := e.refreshed()
		ne.queues = kept
		return ne, n
	case refresh:
		return e.refreshed(), n
	}
	return e, n
}

// without returns e minus queue i, or nil when that was the last queue.
func (e *topicEntry) without(i int) *topicEntry {
	if len(e.queues) == 1 {
		return nil
	}
	n := e.refreshed()
	n.queues = slices.Delete(slices.Clone(e.queues), i, i+1)
	return n
}

// WipeWritePerm clears the write bit of brokerName's queues in every topic
// (WIPE_WRITE_PERM_OF_BROKER) and returns how many topics hold a queue of
// that broker, as Java counts them.
func (t *Table) WipeWritePerm(brokerName string) int {
	return t.setPerm(brokerName, clearWrite)
}

// AddWritePerm sets brokerName's queues to exactly read|write in every topic
// (ADD_WRITE_PERM_OF_BROKER; Java drops the other bits too) and returns how
// many topics hold a queue of that broker.
func (t *Table) AddWritePerm(brokerName string) int {
	return t.setPerm(brokerName, readWrite)
}

func readWrite(int32) int32 { return PermRead | PermWrite }

func (t *Table) setPerm(brokerName string, perm func(int32) int32) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	n := w.setPerm(brokerName, perm)
	w.commit()
	return n
}

func (w *write) setPerm(brokerName string, perm func(int32) int32) int {
	return w.rewriteQueues([]queueRule{{name: brokerName, perm: perm}})
}

// DeleteTopic removes topic (DELETE_TOPIC_IN_NAMESRV): only its queues on
// cluster's broker groups when cluster is not empty, all of it otherwise.
// Its static-topic mappings stay in t.mappings, as in Java: a broker that
// still has the topic re-creates its queue data with its next registration
// and the route carries them again.
func (t *Table) DeleteTopic(topic, cluster string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	w.deleteTopic(topic, cluster)
	w.commit()
}

func (w *write) deleteTopic(topic, cluster string) {
	e, ok := w.t.topics.Load(topic)
	if !ok {
		return
	}
	var ne *topicEntry // nil: gone everywhere
	if cluster != "" {
		ne = e
		for name := range w.cluster(cluster) {
			if i, ok := ne.queueOf(name); ok {
				if ne = ne.without(i); ne == nil {
					break
				}
			}
		}
		if ne == e {
			return
		}
	}
	w.topics = append(w.topics, topicUpdate{e.topic, ne})
}

// RegisterTopic stores queue data sent by a broker for one topic
// (REGISTER_TOPIC_IN_NAMESRV). Java aborts at the first QueueData whose
// broker group is unknown: a new topic is then not created at all, an
// existing one keeps the entries put before the bad one.
func (t *Table) RegisterTopic(topic string, queues []body.QueueData) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	w.registerTopic(topic, queues)
	w.commit()
}

func (w *write) registerTopic(topic string, queues []body.QueueData) {
	if len(queues) == 0 {
		return
	}
	e, exists := w.t.topics.Load(topic)
	if !exists {
		for _, q := range queues {
			if w.group(q.BrokerName) == nil {
				return
			}
		}
		e = &topicEntry{topic: strings.Clone(topic), mapping: w.mapping(topic)}
	}
	ne := e
	for _, q := range queues {
		g := w.group(q.BrokerName)
		if g == nil {
			break
		}
		if i, ok := ne.queueOf(q.BrokerName); ok && ne.queues[i] == q {
			continue
		}
		q.BrokerName = g.name
		ne = ne.withQueue(q)
	}
	if ne != e {
		w.topics = append(w.topics, topicUpdate{ne.topic, ne})
	}
}
