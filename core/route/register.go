// REGISTER_BROKER: Java RouteInfoManager.registerBroker, step by step.
package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// Registration is one REGISTER_BROKER request. Its strings may alias a
// network buffer: the table clones what it keeps.
type Registration struct {
	Cluster, BrokerAddr, BrokerName, HAServerAddr, ZoneName string
	BrokerID                                                int64
	HeartbeatTimeoutMillis                                  int64 // 0 = default
	EnableActingMaster                                      *bool // nil = old (4.x) broker
	Body                                                    *body.RegisterBroker
	Conn                                                    ConnID
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

// Register applies a REGISTER_BROKER. It fails only with ErrFirstSingleTopic
// (wrapped with the broker's identity).
func (t *Table) Register(r *Registration) (RegisterResult, error) {
	var res RegisterResult
	rb := r.Body
	if rb == nil {
		rb = &body.RegisterBroker{}
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()

	cluster, name, addr := r.Cluster, r.BrokerName, r.BrokerAddr

	// 1. clusterAddrTable.
	clustersDirty := false
	set := t.clusters[cluster]
	if set == nil {
		cluster = strings.Clone(cluster)
		set = map[string]struct{}{}
		t.clusters[cluster] = set
	}
	if _, ok := set[name]; !ok {
		set[strings.Clone(name)] = struct{}{}
		clustersDirty = true
		res.BrokerChanged = true
	}

	// 2. brokerAddrTable; an existing group keeps its cluster.
	g := t.groups[name]
	registerFirst := false
	if g == nil {
		g = &brokerGroup{cluster: strings.Clone(cluster), name: strings.Clone(name)}
		t.groups[g.name] = g
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

	// 6. A stale registration for an id now held by a newer, live address.
	if old, ok := g.addrOf(r.BrokerID); ok && old != addr {
		if li := t.live[addrKey{cluster, old}]; li != nil && li.dv.StateVersion > rb.DataVersion.StateVersion {
			t.dropLive(addrKey{cluster, addr})
			t.afterGroupChange(name, clustersDirty, nil)
			return RegisterResult{}, nil
		}
	}

	// 7. The one-topic guard.
	if _, ok := g.addrOf(r.BrokerID); !ok && len(rb.Topics) == 1 {
		t.afterGroupChange(name, clustersDirty, nil)
		return RegisterResult{}, fmt.Errorf("register %s/%s id %d at %s: %w", cluster, name, r.BrokerID, addr, ErrFirstSingleTopic)
	}

	// 8.
	if prev, _ := g.addrOf(r.BrokerID); prev != addr {
		if prev == "" {
			registerFirst = true
		}
		g.put(r.BrokerID, strings.Clone(addr))
		res.BrokerChanged = true
	}
	key := addrKey{cluster, addr}
	if li := t.live[key]; li != nil {
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
	filterNames := t.setFilters(key, rb.FilterServerList)

	var ups []topicUpdate
	var added []string
	if isMaster || isPrimeSlave {
		li := t.live[key]
		dvChanged := li == nil || li.dv != rb.DataVersion
		ups, added = t.registerTopics(g, rb, registerFirst, dvChanged, isPrimeSlave && g.actingMaster)
		res.TopicsChanged = len(ups)
	}
	t.afterGroupChange(name, clustersDirty, filterNames, ups...)
	for _, topic := range added {
		t.indexAdd(name, topic)
	}

	// 11. Liveness, always replaced so the latest connection counts.
	timeout := r.HeartbeatTimeoutMillis
	if timeout <= 0 {
		timeout = t.opts.DefaultBrokerTimeout
	}
	t.setLive(key, &liveInfo{
		lastUpdate: now,
		timeout:    timeout,
		dv:         rb.DataVersion,
		conn:       r.Conn,
		haAddr:     strings.Clone(r.HAServerAddr),
		name:       name,
		id:         r.BrokerID,
	})

	// 13. A slave learns its master.
	if r.BrokerID != 0 {
		if m, ok := g.addrOf(0); ok {
			if ml := t.live[addrKey{cluster, m}]; ml != nil {
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

// afterGroupChange publishes the view of name (and of the groups in extra)
// and then the topic updates ups, republishing with empty caches every topic
// of a group whose view changed. Called under mu.
func (t *Table) afterGroupChange(name string, clustersDirty bool, extra []string, ups ...topicUpdate) {
	changed := t.publishGroups(append(extra, name), clustersDirty)
	if len(changed) == 0 {
		t.applyTopics(ups)
		return
	}
	pending := make(map[string]struct{}, len(ups))
	for _, u := range ups {
		pending[u.key] = struct{}{}
	}
	for _, n := range changed {
		for topic := range t.brokerTopics[n] {
			if _, ok := pending[topic]; ok {
				continue
			}
			if e, ok := t.topics.Load(topic); ok {
				pending[topic] = struct{}{}
				ups = append(ups, topicUpdate{e.topic, e.refreshed()})
			}
		}
	}
	t.applyTopics(ups)
}

// registerTopics is step 10: it computes the topic updates of a master or
// prime-slave registration and the topics that gain a queue of g (to add to
// the index once applied). Called under mu.
func (t *Table) registerTopics(g *brokerGroup, rb *body.RegisterBroker, registerFirst, dvChanged, clearWrite bool) (ups []topicUpdate, added []string) {
	known := t.brokerTopics[g.name]
	// pos maps a topic to its index in ups when a topic occurs twice (a
	// mapping after its queue); allocated only when needed.
	var pos map[string]int

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
		// Deleted topics leave the index now: nothing below touches them.
		for _, u := range ups {
			t.indexDel(g.name, u.key)
		}
	}

	// 10c. Queue data: all topics on a new DataVersion or first
	// registration, otherwise only topics missing this broker.
	if registerFirst || dvChanged {
		// Every topic may change: size the slices once instead of
		// growing them through 100k appends.
		ups = slices.Grow(ups, len(rb.Topics))
		if len(known) < len(rb.Topics) {
			added = make([]string, 0, len(rb.Topics)-len(known))
		}
	}
	for i := range rb.Topics {
		tc := &rb.Topics[i]
		_, has := known[tc.TopicName]
		if !registerFirst && !dvChanged && has {
			continue
		}
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
			ne = &topicEntry{topic: strings.Clone(tc.TopicName), queues: []body.QueueData{q}}
		}
		if !has {
			added = append(added, ne.topic)
		}
		if pos != nil {
			if j, ok := pos[ne.topic]; ok {
				ups[j].nv = ne
				continue
			}
		}
		ups = append(ups, topicUpdate{ne.topic, ne})
	}

	// 10d. Static topic mappings, on a new DataVersion or first registration.
	if (registerFirst || dvChanged) && len(rb.MappingInfo) > 0 {
		pos = make(map[string]int, len(ups))
		for j, u := range ups {
			pos[u.key] = j
		}
		for _, topic := range slices.Sorted(maps.Keys(rb.MappingInfo)) {
			info := rb.MappingInfo[topic]
			bname := mappingBrokerName(info, g.name)
			var e *topicEntry
			j, pending := pos[topic]
			if pending {
				e = ups[j].nv
			} else if cur, ok := t.topics.Load(topic); ok {
				e = cur
			}
			if e == nil {
				// Java keeps mappings in a table of their own; here they
				// live with the topic's queues, so a mapping for a topic
				// without queue data is not kept.
				continue
			}
			if old, ok := e.mapping[bname]; ok && bytes.Equal(old, info) {
				continue
			}
			m := make(map[string][]byte, len(e.mapping)+1)
			maps.Copy(m, e.mapping)
			m[strings.Clone(bname)] = bytes.Clone(info)
			if pending {
				e.mapping = m // e is still private to this call
			} else {
				ne := e.refreshed()
				ne.mapping = m
				pos[e.topic] = len(ups)
				ups = append(ups, topicUpdate{e.topic, ne})
			}
		}
	}
	return ups, added
}

// mappingBrokerName reads bname from a TopicQueueMappingInfo; def when it
// has none.
func mappingBrokerName(info []byte, def string) string {
	var v struct {
		Bname string `json:"bname"`
	}
	if json.Unmarshal(info, &v) != nil || v.Bname == "" {
		return def
	}
	return v.Bname
}

// setFilters is step 12 and returns the groups whose view it may change.
// Called under mu.
func (t *Table) setFilters(key addrKey, list []string) []string {
	switch {
	case list == nil:
		return nil
	case len(list) == 0:
		if _, ok := t.filters[key]; !ok {
			return nil
		}
		delete(t.filters, key)
	default:
		if slices.Equal(t.filters[key], list) {
			return nil
		}
		owned := make([]string, len(list))
		for i, s := range list {
			owned[i] = strings.Clone(s)
		}
		t.filters[key] = owned
	}
	return t.groupsWithAddr(key.cluster, key.addr)
}
