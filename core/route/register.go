// REGISTER_BROKER: Java RouteInfoManager.registerBroker, step by step.

package route

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// Registration is one REGISTER_BROKER request.
//
// Ownership: the header's strings (Cluster, BrokerAddr, BrokerName,
// HAServerAddr, ZoneName) may alias the request's network buffer, which is
// reused after the call: the table clones what it keeps of them. Body is
// decoded by codec/body into memory of its own (topic names, filter
// servers, mapping JSON) and handed over: the table keeps those strings
// and slices as they are, so the caller must not change or reuse Body
// after Register.
type Registration struct {
	Cluster, BrokerAddr, BrokerName, HAServerAddr, ZoneName string
	BrokerID                                                int64 // 0 = master, slaves from 1
	HeartbeatTimeoutMillis                                  int64 // <= 0 = default (see Register step 11)
	EnableActingMaster                                      *bool // nil = old (4.x) broker
	Body                                                    *body.RegisterBroker
	Conn                                                    ConnID
	// Owner names the credentials the registration came with (the
	// account that signed it; "" for none) and Override says they own the
	// broker name by configuration (an admin, an account bound to the
	// name). A registration whose Owner differs from that of a live
	// registration it would replace, at its address or of its brokerId
	// at another address, is refused with ErrTakeover unless Override.
	// With no signatures every Owner is "" and nothing changes: Java's
	// rules, as the differential suites check them.
	Owner    string
	Override bool
	// Source is the host the registration came from (the connection's
	// peer address, not the brokerAddr the broker names itself by): the
	// topics it creates count against that host's quota
	// (Options.MaxTopicsPerSource). "" counts against no quota.
	Source string
}

// RegisterResult is what a registration produced.
type RegisterResult struct {
	// MasterAddr and HAServerAddr are set only for slaves whose master is
	// registered and live.
	MasterAddr, HAServerAddr string
	// BrokerChanged reports a new broker group, address or cluster entry.
	BrokerChanged bool
	// TopicsChanged counts topics whose queue data changed.
	TopicsChanged int
	// MinIDChange is set when this broker's id is lower than every id its
	// group had (Java's minBrokerIdChanged), for NOTIFY_MIN_BROKER_ID_CHANGE.
	MinIDChange *MinBrokerIDChange
}

// Register applies a REGISTER_BROKER. It fails only with
// ErrNegativeBrokerID, ErrEmptyBrokerAddr, ErrFirstSingleTopic, ErrTakeover
// ErrTooManyTopics or ErrTopicQuota (wrapped with the broker's identity),
// and a registration it refuses changes nothing, except that one refused
// for its topics (ErrTooManyTopics, ErrTopicQuota) refreshes the broker's
// liveness (KeepAlive).
func (t *Table) Register(r *Registration) (RegisterResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	res, err := w.register(r)
	switch {
	case err == nil:
		w.commit()
	case errors.Is(err, ErrTooManyTopics), errors.Is(err, ErrTopicQuota):
		t.keepAlive(r)
	}
	return res, err
}

// KeepAlive refreshes the liveness of the broker a registration refused for
// its topics names, as a heartbeat does, and reports whether it did. The
// refusal says the broker is alive; without the refresh a broker whose new
// topics do not fit would lose the routes it holds while it retries. Only
// the registration's own live entry is refreshed (its address, brokerName
// and brokerId), never one r would take over; the stored data version
// stays the last accepted one, so the broker keeps registering. Register
// calls it for the refusals it makes; the server calls it for those it
// makes before the table (maxTopicsPerBroker).
func (t *Table) KeepAlive(r *Registration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keepAlive(r)
}

// keepAlive is KeepAlive. Called under mu.
func (t *Table) keepAlive(r *Registration) bool {
	li := t.live[addrKey{r.Cluster, r.BrokerAddr}]
	if li == nil || li.name != r.BrokerName || li.id != r.BrokerID || !r.Override && t.takesOver(r) {
		return false
	}
	t.touch(li.key, t.now())
	return true
}

func (w *write) register(r *Registration) (RegisterResult, error) {
	t := w.t
	var res RegisterResult
	if r.BrokerID < 0 {
		// Without the broker's strings: the server answers with this
		// text, and they are only an echo of the request.
		return res, fmt.Errorf("register with brokerId %d: %w", r.BrokerID, ErrNegativeBrokerID)
	}
	if r.BrokerAddr == "" {
		return res, fmt.Errorf("register with brokerId %d: %w", r.BrokerID, ErrEmptyBrokerAddr)
	}
	rb := r.Body
	if rb == nil {
		rb = &body.RegisterBroker{}
	}
	cluster, name, addr := r.Cluster, r.BrokerName, r.BrokerAddr

	// 7 first, as a refusal: a one-topic registration of an id the group
	// does not have. Steps 1-6 cannot make the id appear (5 removes other
	// ids, 6 fires only when the id is there), so the outcome is the same,
	// but Java refuses after steps 1-5, which leave the cluster entry and an
	// empty group behind; here a refusal changes nothing. Java counts its
	// map's keys, so duplicates of one topic are one topic.
	if g := t.groups[name]; (g == nil || !g.has(r.BrokerID)) && singleTopic(rb.Topics) {
		return res, fmt.Errorf("register %s/%s id %d at %s: %w", cluster, name, r.BrokerID, addr, ErrFirstSingleTopic)
	}
	if !r.Override && t.takesOver(r) {
		return res, fmt.Errorf("register %s id %d: %w", name, r.BrokerID, ErrTakeover)
	}
	if err := t.checkTopics(r.Source, rb.Topics); err != nil {
		return res, fmt.Errorf("register %s/%s id %d at %s: %w", cluster, name, r.BrokerID, addr, err)
	}
	w.source = r.Source // cloned when a topic is created (createdBy)

	// 1. clusterAddrTable.
	clustersDirty := false
	if _, ok := w.cluster(cluster)[name]; !ok {
		w.editCluster(cluster)[strings.Clone(name)] = struct{}{}
		clustersDirty = true
		res.BrokerChanged = true
	}

	// 2. brokerAddrTable; an existing group keeps its cluster.
	g := w.editGroup(name)
	registerFirst := false
	if g == nil {
		g = &brokerGroup{cluster: strings.Clone(cluster), name: strings.Clone(name)}
		put(&w.groups, g.name, g)
		registerFirst = true
		res.BrokerChanged = true
	}
	name = g.name

	// 3. Old-version detection, acting master flag, zone (overwritten every
	// time, may become empty).
	oldVersion := r.EnableActingMaster == nil
	g.actingMaster = !oldVersion && *r.EnableActingMaster
	if g.zone != r.ZoneName {
		g.zone = strings.Clone(r.ZoneName)
	}

	// 4. minBrokerIdChanged: an empty group counts as min id 0, so a first
	// registration never notifies.
	var prevMin int64
	if len(g.addrs) > 0 {
		prevMin = g.addrs[0].ID
	}
	minChanged := r.BrokerID < prevMin

	// 5. The same ip:port keeps only one id (slave -> master switch).
	if g.removeAddrExcept(addr, r.BrokerID) {
		res.BrokerChanged = true
	}

	// 6. A stale registration for an id now held by a newer, live address:
	// SUCCESS without master info, steps 1-5 kept, as in Java.
	if old, ok := g.addrOf(r.BrokerID); ok && old != addr {
		if li := w.liveOf(addrKey{cluster, old}); li != nil && li.dv.StateVersion > rb.DataVersion.StateVersion {
			w.dropLive(addrKey{cluster, addr})
			w.afterGroupChange(name, clustersDirty, nil)
			return RegisterResult{}, nil
		}
	}

	// 8.
	if prev, ok := g.addrOf(r.BrokerID); !ok || prev != addr {
		if !ok {
			registerFirst = true
		}
		g.put(r.BrokerID, strings.Clone(addr))
		res.BrokerChanged = true
	}
	key := addrKey{cluster, addr}
	if li := w.liveOf(key); li != nil {
		key = li.key // the owned strings
	} else {
		key = addrKey{strings.Clone(cluster), strings.Clone(addr)}
	}

	// 9. Only a master or a 5.x prime slave (smallest id, no master) writes
	// topic data.
	isMaster := r.BrokerID == 0
	isPrimeSlave := !oldVersion && !isMaster && r.BrokerID == g.addrs[0].ID

	// 12 before 10: filter servers feed the group view, which must be
	// published before the topic entries that use it.
	filterNames := w.setFilters(key, rb.FilterServerList)

	if isMaster || isPrimeSlave {
		li := w.liveOf(key)
		dvChanged := li == nil || li.dv != rb.DataVersion
		res.TopicsChanged = w.registerTopics(g, rb, registerFirst, dvChanged, isPrimeSlave && g.actingMaster)
	}
	w.afterGroupChange(name, clustersDirty, filterNames)

	// 11. Liveness, always replaced so the latest connection counts. Java
	// stores any heartbeatTimeoutMillis it is sent, so 0 or less expires
	// the broker at the next scan and its routes flap until its next
	// registration. A broker sends the field only with a positive
	// brokerNotActiveTimeoutMillis; anything else is a misconfiguration
	// (or the field's absence, which the server passes as 0) and gets the
	// default, as an absent field does in Java. The time is read here, as
	// Java reads it for the new BrokerLiveInfo.
	timeout := r.HeartbeatTimeoutMillis
	if timeout <= 0 {
		timeout = t.opts.DefaultBrokerTimeout
	}
	owner := r.Owner
	if li := w.liveOf(key); li != nil && li.owner == owner {
		owner = li.owner // already owned
	} else {
		owner = strings.Clone(owner)
	}
	timeout = min(timeout, t.opts.MaxBrokerTimeout) // deadline() saturates as well
	put(&w.live, key, &liveInfo{
		key:        key,
		lastUpdate: t.now(),
		timeout:    timeout,
		dv:         rb.DataVersion,
		conn:       r.Conn,
		haAddr:     strings.Clone(r.HAServerAddr),
		name:       name,
		id:         r.BrokerID,
		owner:      owner,
	})

	// 13. A slave learns its master.
	if r.BrokerID != 0 {
		if m, ok := g.addrOf(0); ok {
			if ml := w.liveOf(addrKey{cluster, m}); ml != nil {
				res.MasterAddr, res.HAServerAddr = m, ml.haAddr
			}
		}
	}

	// 14.
	if minChanged {
		res.MinIDChange = minIDChange(name, g.addrs, "", strings.Clone(r.HAServerAddr))
	}
	return res, nil
}

// takesOver reports whether r would replace a live registration made with
// other credentials: the one at its own address (whatever broker it is
// of), or the one of its brokerId at another address. Called under mu.
func (t *Table) takesOver(r *Registration) bool {
	if li := t.live[addrKey{r.Cluster, r.BrokerAddr}]; li != nil && li.owner != r.Owner {
		return true
	}
	g := t.groups[r.BrokerName]
	if g == nil {
		return false
	}
	old, ok := g.addrOf(r.BrokerID)
	if !ok || old == r.BrokerAddr {
		return false
	}
	// The live entry is keyed by the cluster its registration named,
	// which is the group's unless a registration named another one.
	for _, c := range []string{r.Cluster, g.cluster} {
		if li := t.live[addrKey{c, old}]; li != nil && li.owner != r.Owner {
			return true
		}
	}
	return false
}

// afterGroupChange stages the view of name (and of the groups in extra)
// and republishes with empty caches every topic of a group whose view
// changed that w does not update already.
func (w *write) afterGroupChange(name string, clustersDirty bool, extra []string) {
	changed := w.updateView(append(extra, name), clustersDirty)
	if len(changed) == 0 {
		return
	}
	pending := make(map[string]struct{}, len(w.topics))
	for _, u := range w.topics {
		pending[u.key] = struct{}{}
	}
	for _, n := range changed {
		for topic := range w.t.brokerTopics[n] {
			if _, ok := pending[topic]; ok {
				continue
			}
			if e, ok := w.t.topics.Load(topic); ok {
				pending[topic] = struct{}{}
				w.topics = append(w.topics, topicUpdate{e.topic, e.refreshed()})
			}
		}
	}
}

// singleTopic reports whether topics names exactly one topic, however many
// times.
func singleTopic(topics []body.TopicConfig) bool {
	if len(topics) == 0 {
		return false
	}
	for i := 1; i < len(topics); i++ {
		if topics[i].TopicName != topics[0].TopicName {
			return false
		}
	}
	return true
}

// lastWins drops every TopicConfig a later one of the same name overrides:
// the body decoder keeps duplicate keys in order and Java, reading them
// into a map, keeps the last. topics itself is returned when it has no
// duplicates.
func lastWins(topics []body.TopicConfig) []body.TopicConfig {
	if len(topics) < 2 {
		return topics
	}
	last := make(map[string]int, len(topics))
	for i := range topics {
		last[topics[i].TopicName] = i
	}
	if len(last) == len(topics) {
		return topics
	}
	out := make([]body.TopicConfig, 0, len(last))
	for i := range topics {
		if last[topics[i].TopicName] == i {
			out = append(out, topics[i])
		}
	}
	return out
}

// registerTopics is step 10: it stages the topic updates of a master or
// prime-slave registration and returns how many it staged.
func (w *write) registerTopics(g *brokerGroup, rb *body.RegisterBroker, registerFirst, dvChanged, clearWrite bool) int {
	t := w.t
	known := t.brokerTopics[g.name]
	ups, staged := w.topics, len(w.topics)

	// 10b. Drop this broker's queues of topics it no longer has; a static
	// topic mapping means the table is not the broker's whole truth.
	if t.deleteWithReg.Load() && len(rb.MappingInfo) == 0 && len(known) > 0 {
		incoming := make(map[string]struct{}, len(rb.Topics))
		for i := range rb.Topics {
			incoming[rb.Topics[i].TopicName] = struct{}{}
		}
		for topic := range known {
			if _, ok := incoming[topic]; ok {
				continue
			}
			if e, ok := t.topics.Load(topic); ok {
				if i, ok := e.queueOf(g.name); ok {
					ups = append(ups, topicUpdate{e.topic, e.without(i)})
				}
			}
		}
	}

	// 10c. Queue data: all topics on a new DataVersion or first
	// registration, otherwise only topics missing this broker. Each topic
	// is processed once, with its last value: an earlier duplicate would
	// otherwise be compared with the stored queue, not with the later one.
	topics := rb.Topics
	if registerFirst || dvChanged {
		topics = lastWins(topics)
		// Every topic may change: size the slice once instead of growing
		// it through 100k appends.
		ups = slices.Grow(ups, len(topics))
	} else {
		// Steady state: usually no topic is missing and this allocates
		// nothing.
		var missing []body.TopicConfig
		for i := range topics {
			if _, has := known[topics[i].TopicName]; !has {
				missing = append(missing, topics[i])
			}
		}
		topics = lastWins(missing)
	}
	for i := range topics {
		tc := &topics[i]
		perm := tc.Perm
		if clearWrite {
			perm &^= PermWrite
		}
		q := body.QueueData{
			BrokerName:     g.name,
			ReadQueueNums:  tc.ReadQueueNums,
			WriteQueueNums: tc.WriteQueueNums,
			Perm:           perm,
			TopicSysFlag:   tc.TopicSysFlag,
		}
		var ne *topicEntry
		if e, ok := t.topics.Load(tc.TopicName); ok {
			if j, ok := e.queueOf(g.name); ok && e.queues[j] == q {
				continue
			}
			ne = e.withQueue(q)
		} else {
			// A topic deleted by DELETE_TOPIC_IN_NAMESRV and re-created here
			// gets back the mappings Java never deleted.
			ne = &topicEntry{topic: tc.TopicName, queues: []body.QueueData{q}, mapping: w.mapping(tc.TopicName), source: w.createdBy()}
		}
		ups = append(ups, topicUpdate{ne.topic, ne})
	}

	// 10d. Static topic mappings, on a new DataVersion or first
	// registration, into t.mappings whether or not the topic has queue
	// data (Java's topicQueueMappingInfoTable), and into the topic's entry.
	if (registerFirst || dvChanged) && len(rb.MappingInfo) > 0 {
		pos := make(map[string]int, len(ups)) // topic -> its update in ups
		for j, u := range ups {
			pos[u.key] = j
		}
		for _, topic := range slices.Sorted(maps.Keys(rb.MappingInfo)) {
			info := rb.MappingInfo[topic]
			bname, ok := body.MappingBrokerName(info)
			if !ok {
				bname = g.name
			}
			cur := w.mapping(topic)
			if old, ok := cur[bname]; ok && bytes.Equal(old, info) {
				continue
			}
			// Copied, not updated: entries share the map with readers.
			m := make(map[string][]byte, len(cur)+1)
			maps.Copy(m, cur)
			m[bname] = info
			// The map keeps the key of every assignment: it must be owned
			// (ups' keys and the body's topics are).
			key := ""
			if j, pending := pos[topic]; pending {
				key = ups[j].key
				ups[j].nv.mapping = m // still private to this write
			} else if e, ok := t.topics.Load(topic); ok {
				key = e.topic
				ne := e.refreshed()
				ne.mapping = m
				pos[key] = len(ups)
				ups = append(ups, topicUpdate{key, ne})
			} else {
				key = topic
			}
			put(&w.mappings, key, m)
		}
	}
	w.topics = ups
	return len(ups) - staged
}

// setFilters is step 12 and returns the groups whose view it may change.
// key is owned.
func (w *write) setFilters(key addrKey, list []string) []string {
	switch {
	case list == nil:
		return nil
	case len(list) == 0:
		if w.filter(key) == nil {
			return nil
		}
		put(&w.filters, key, nil)
	default:
		if slices.Equal(w.filter(key), list) {
			return nil
		}
		// The strings are the body's own (Registration); the slice is
		// copied so the table's entry does not share the body's.
		put(&w.filters, key, slices.Clone(list))
	}
	return w.groupsWithAddr(key.cluster, key.addr)
}

// checkTopics refuses topics that would take the table past
// Options.MaxTopics, or source past Options.MaxTopicsPerSource (the quota
// first: it names who is at fault). Topics the table has already cost
// nothing: the names are looked up only when the table's size, or the
// source's count, plus the registration's could pass a bound. Called under
// mu.
func (t *Table) checkTopics(source string, topics []body.TopicConfig) error {
	limit, quota := t.opts.MaxTopics, t.opts.MaxTopicsPerSource
	if source == "" {
		quota = 0
	}
	have, held := t.topics.Len(), t.sourceTopics[source]
	overLimit := limit > 0 && have+len(topics) > limit
	overQuota := quota > 0 && held+len(topics) > quota
	if !overLimit && !overQuota {
		return nil
	}
	added := map[string]struct{}{}
	for i := range topics {
		name := topics[i].TopicName
		if _, ok := t.topics.Load(name); !ok {
			added[name] = struct{}{}
		}
	}
	switch {
	case overQuota && held+len(added) > quota:
		return fmt.Errorf("%w: %d new topics from %s, which brought %d of its %d", ErrTopicQuota, len(added), source, held, quota)
	case overLimit && have+len(added) > limit:
		return fmt.Errorf("%w of %d topics (%d held, more than %d new)", ErrTooManyTopics, limit, have, limit-have)
	}
	return nil
}
