// java.go holds Java, the route rules of the Java 5.3.3 NameServer
// (RouteInfoManager, spec sections 3.3-3.7) as plain maps, with a switch for
// each place where rocketns differs on purpose.

package routetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// AddrKey keys liveness and filter servers: (cluster, broker address).
type AddrKey struct{ Cluster, Addr string }

// Group is one brokerAddrTable entry.
type Group struct {
	Cluster, Name, Zone string
	Acting              bool
	Addrs               map[int64]string
}

// Live is one brokerLiveTable entry. Name and ID are not Java's: they are
// the brokerName and brokerId of the registration that made the entry,
// which rocketns's fence and broker lookup use.
type Live struct {
	Last, Timeout int64
	DV            body.DataVersion
	Conn          uint64
	HA            string
	Name          string
	ID            int64
}

// Registration is a REGISTER_BROKER as Java's processor hands it to
// registerBroker: the caller does the decoding Java does.
type Registration struct {
	Cluster, Addr, Name, HA, Zone string
	// NoName is a header without brokerName (Java: null).
	NoName bool
	ID     int64
	// Timeout is heartbeatTimeoutMillis; nil when the header has none.
	Timeout *int64
	// Acting is enableActingMaster; nil for a 4.x broker.
	Acting *bool
	// Topics in body order; a later duplicate wins, as in Java's map.
	Topics []body.TopicConfig
	DV     body.DataVersion
	// Filters is filterServerList as Java sees it: nil only for an explicit
	// JSON null or a pre-3.0.11 body; a body without the key, or no body,
	// is an empty list (RegisterBrokerBody's default).
	Filters []string
	// Mappings is topicQueueMappingInfoMap: topic -> the info's JSON.
	Mappings map[string][]byte
	Conn     uint64
}

// Refusal is why a registration got no SUCCESS.
type Refusal int

// Refusals.
const (
	Accepted Refusal = iota
	// RegisterFailed is Java's own: a one-topic registration of an id the
	// group does not have (SYSTEM_ERROR "register broker failed").
	RegisterFailed
	// The rest are rocketns's, with the Deviations switch that makes them.
	RefusedNegativeID  // NegativeIDs
	RefusedEmptyAddr   // EmptyAddr
	RefusedMissingName // MissingFields
)

// Deviations switch the model from Java's rule to rocketns's at each place
// where rocketns differs on purpose. Each field names the bold item of the
// README's "Where rocketns differs from Java on purpose" that states it.
// The zero value is Java 5.3.3.
type Deviations struct {
	ConnClose            bool // "Connection close": every broker of the connection, not the first in hash order
	LivenessWithoutGroup bool // "Liveness without a group": expiry and connection close drop such entries
	ExpiredConns         bool // "Expired brokers' connections": left open while another live registration came over them
	Fence                bool // "Unregistration fenced by identity"
	AllOrNothing         bool // "All or nothing": the one-topic refusal changes nothing
	EmptyAddr            bool // "Empty broker address": refused
	MissingFields        bool // "Missing header fields": a REGISTER_BROKER without brokerName is refused
	NegativeIDs          bool // "Negative broker ids and timeouts"
	SortedLists          bool // "Sorted lists": 304's brokerAddr and the unit lists decided by name
	GoneGroups           bool // "Gone groups": no queue data without its broker data
}

// Rocketns is every deviation: the rules rocketns follows.
func Rocketns() Deviations {
	return Deviations{ConnClose: true, LivenessWithoutGroup: true, ExpiredConns: true, Fence: true,
		AllOrNothing: true, EmptyAddr: true, MissingFields: true, NegativeIDs: true, SortedLists: true, GoneGroups: true}
}

// DefaultTimeout is Java's DEFAULT_BROKER_CHANNEL_EXPIRED_TIME in ms.
const DefaultTimeout int64 = 120000

// Java is the route tables of a Java NameServer.
type Java struct {
	Dev Deviations
	// Switches of NamesrvConfig the rules read.
	ActingMaster, DeleteWithReg bool

	Topics   map[string]map[string]body.QueueData // topic -> brokerName -> queue data
	Mappings map[string]map[string][]byte         // topic -> bname -> TopicQueueMappingInfo
	Groups   map[string]*Group
	Clusters map[string]map[string]bool
	Live     map[AddrKey]*Live
	Filters  map[AddrKey][]string

	// Ambiguous, once set, says why the model cannot tell what Java does
	// next (it would depend on hash order): a run must stop there.
	Ambiguous string
}

// NewJava is an empty NameServer following Java except where dev says.
func NewJava(dev Deviations) *Java {
	return &Java{
		Dev:      dev,
		Topics:   map[string]map[string]body.QueueData{},
		Mappings: map[string]map[string][]byte{},
		Groups:   map[string]*Group{},
		Clusters: map[string]map[string]bool{},
		Live:     map[AddrKey]*Live{},
		Filters:  map[AddrKey][]string{},
	}
}

func (m *Java) ambiguous(format string, args ...any) {
	if m.Ambiguous == "" {
		m.Ambiguous = fmt.Sprintf(format, args...)
	}
}

// MinID is the smallest id of addrs (0 when empty, as Java's
// prevMinBrokerId starts).
func MinID(addrs map[int64]string) int64 {
	first, mn := true, int64(0)
	for id := range addrs {
		if first || id < mn {
			mn, first = id, false
		}
	}
	return mn
}

// RegisterResult is what a SUCCESS answer of REGISTER_BROKER carries.
type RegisterResult struct{ MasterAddr, HAServerAddr string }

// Register is registerBroker (spec 3.3) at time now.
func (m *Java) Register(r *Registration, now int64) (RegisterResult, Refusal) {
	var res RegisterResult
	d := m.Dev
	if r.NoName {
		if d.MissingFields {
			return res, RefusedMissingName
		}
		m.ambiguous("a REGISTER_BROKER without brokerName: Java registers a group named null, which this model does not hold")
		return res, Accepted
	}
	if d.NegativeIDs && r.ID < 0 {
		return res, RefusedNegativeID
	}
	if d.EmptyAddr && r.Addr == "" {
		return res, RefusedEmptyAddr
	}
	topics := map[string]body.TopicConfig{}
	var order []string
	for _, tc := range r.Topics {
		if _, ok := topics[tc.TopicName]; !ok {
			order = append(order, tc.TopicName)
		}
		topics[tc.TopicName] = tc
	}
	if d.AllOrNothing {
		if g := m.Groups[r.Name]; len(topics) == 1 && (g == nil || !hasID(g, r.ID)) {
			return res, RegisterFailed
		}
	}
	// 1
	if m.Clusters[r.Cluster] == nil {
		m.Clusters[r.Cluster] = map[string]bool{}
	}
	m.Clusters[r.Cluster][r.Name] = true
	// 2
	g := m.Groups[r.Name]
	registerFirst := false
	if g == nil {
		g = &Group{Cluster: r.Cluster, Name: r.Name, Addrs: map[int64]string{}}
		m.Groups[r.Name] = g
		registerFirst = true
	}
	// 3
	old := r.Acting == nil
	g.Acting = !old && *r.Acting
	g.Zone = r.Zone
	// 4 (notification only) and 5
	for id, a := range g.Addrs {
		if a == r.Addr && id != r.ID {
			delete(g.Addrs, id)
		}
	}
	// 6
	if oa, ok := g.Addrs[r.ID]; ok && oa != r.Addr {
		if li := m.Live[AddrKey{r.Cluster, oa}]; li != nil && li.DV.StateVersion > r.DV.StateVersion {
			delete(m.Live, AddrKey{r.Cluster, r.Addr})
			return res, Accepted
		}
	}
	// 7
	if !hasID(g, r.ID) && len(topics) == 1 {
		return res, RegisterFailed
	}
	// 8
	prev, had := g.Addrs[r.ID]
	g.Addrs[r.ID] = r.Addr
	registerFirst = registerFirst || !had || prev == ""
	// 9
	isMaster := r.ID == 0
	isPrime := !old && !isMaster && r.ID == MinID(g.Addrs)
	key := AddrKey{r.Cluster, r.Addr}
	prevLive := m.Live[key]
	dvChanged := prevLive == nil || prevLive.DV != r.DV
	if isMaster || isPrime {
		// 10b
		if m.DeleteWithReg && len(r.Mappings) == 0 {
			for topic, qs := range m.Topics {
				if _, ok := qs[g.Name]; !ok {
					continue
				}
				if _, in := topics[topic]; !in {
					delete(qs, g.Name)
					if len(qs) == 0 {
						delete(m.Topics, topic)
					}
				}
			}
		}
		// 10c
		for _, name := range order {
			tc := topics[name]
			qs := m.Topics[name]
			_, has := qs[g.Name]
			if !registerFirst && !dvChanged && has {
				continue
			}
			perm := tc.Perm
			if isPrime && g.Acting {
				perm &^= 2
			}
			if qs == nil {
				qs = map[string]body.QueueData{}
				m.Topics[name] = qs
			}
			qs[g.Name] = body.QueueData{BrokerName: g.Name, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: perm, TopicSysFlag: tc.TopicSysFlag}
		}
		// 10d
		if registerFirst || dvChanged {
			for topic, info := range r.Mappings {
				var v struct {
					Bname string `json:"bname"`
				}
				if json.Unmarshal(info, &v) != nil || v.Bname == "" {
					m.ambiguous("a static-topic mapping without bname: Java files it under null")
					continue
				}
				if m.Mappings[topic] == nil {
					m.Mappings[topic] = map[string][]byte{}
				}
				m.Mappings[topic][v.Bname] = info
			}
		}
	}
	// 11
	timeout := DefaultTimeout
	if r.Timeout != nil {
		timeout = *r.Timeout
		if d.NegativeIDs && timeout <= 0 {
			timeout = DefaultTimeout
		}
	}
	m.Live[key] = &Live{Last: now, Timeout: timeout, DV: r.DV, Conn: r.Conn, HA: r.HA, Name: g.Name, ID: r.ID}
	// 12
	if r.Filters != nil {
		if len(r.Filters) == 0 {
			delete(m.Filters, key)
		} else {
			m.Filters[key] = slices.Clone(r.Filters)
		}
	}
	// 13
	if r.ID != 0 {
		if ma, ok := g.Addrs[0]; ok {
			if ml := m.Live[AddrKey{r.Cluster, ma}]; ml != nil {
				res = RegisterResult{MasterAddr: ma, HAServerAddr: ml.HA}
			}
		}
	}
	return res, Accepted
}

func hasID(g *Group, id int64) bool {
	_, ok := g.Addrs[id]
	return ok
}

// unreg is one UnRegisterBrokerRequestHeader.
type unreg struct {
	cluster, addr, name string
	id                  int64
	// newer, under Fence, is the live entry of a newer registration of the
	// address under another identity: it stays, with its filter servers
	// and its own id in its group.
	newer *Live
}

// unregister is BatchUnregistrationService's pass over one batch (spec 3.5).
func (m *Java) unregister(reqs []unreg) {
	removed := map[string]bool{}
	reduced := map[string]bool{}
	for _, r := range reqs {
		key := AddrKey{r.cluster, r.addr}
		if r.newer == nil {
			delete(m.Live, key)
			delete(m.Filters, key)
		}
		g := m.Groups[r.name]
		if g == nil {
			continue
		}
		touched := false
		for id, a := range g.Addrs {
			if a == r.addr && (r.newer == nil || r.newer.Name != g.Name || r.newer.ID != id) {
				delete(g.Addrs, id)
				touched = true
			}
		}
		switch {
		case len(g.Addrs) == 0:
			delete(m.Groups, r.name)
			if set := m.Clusters[r.cluster]; set != nil {
				delete(set, r.name)
				if len(set) == 0 {
					delete(m.Clusters, r.cluster)
				}
			}
			removed[r.name] = true
		case r.newer == nil || touched:
			reduced[r.name] = true
		}
	}
	for n := range removed {
		delete(reduced, n)
	}
	for topic, qs := range m.Topics {
		for n := range removed {
			delete(qs, n)
		}
		if len(qs) == 0 {
			delete(m.Topics, topic)
			continue
		}
		for n := range reduced {
			q, ok := qs[n]
			g := m.Groups[n]
			if !ok || g == nil || !g.Acting {
				continue
			}
			if len(g.Addrs) == 0 || MinID(g.Addrs) > 0 {
				q.Perm &^= 2
				qs[n] = q
			}
		}
	}
}

// Unregister is UNREGISTER_BROKER, applied at once (Java queues it and
// answers SUCCESS first). fenced reports the Fence deviation at work.
func (m *Java) Unregister(cluster, addr, name string, id int64) (fenced bool) {
	r := unreg{cluster: cluster, addr: addr, name: name, id: id}
	if li := m.Live[AddrKey{cluster, addr}]; m.Dev.Fence && li != nil && (li.Name != name || li.ID != id) {
		r.newer = li
	}
	m.unregister([]unreg{r})
	return r.newer != nil
}

// findBroker is setupUnRegisterRequest: the group of the entry's cluster
// that holds its address. ok is false when none does. Java takes the first
// such group in hash order; rocketns the group of the entry's latest
// registration, when it still holds the address.
func (m *Java) findBroker(key AddrKey, li *Live) (r unreg, ok bool) {
	r = unreg{cluster: key.Cluster, addr: key.Addr}
	var names []string
	for _, g := range m.Groups {
		if g.Cluster != key.Cluster {
			continue
		}
		for _, a := range g.Addrs {
			if a == key.Addr {
				names = append(names, g.Name)
				break
			}
		}
	}
	if len(names) == 0 {
		return r, false
	}
	name := names[0]
	if len(names) > 1 {
		if g := m.Groups[li.Name]; m.Dev.ConnClose && slices.Contains(names, li.Name) && g != nil {
			name = li.Name
		} else {
			m.ambiguous("address %s is in groups %v of cluster %s: Java unregisters the first in hash order", key.Addr, names, key.Cluster)
		}
	}
	g := m.Groups[name]
	for id, a := range g.Addrs {
		if a == key.Addr {
			r.name, r.id = g.Name, id
		}
	}
	return r, true
}

// ConnClosed is onChannelDestroy(channel) for conn.
func (m *Java) ConnClosed(conn uint64) {
	if conn == 0 {
		return
	}
	var keys []AddrKey
	for k, li := range m.Live {
		if li.Conn == conn {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	if !m.Dev.ConnClose && len(keys) > 1 {
		m.ambiguous("connection %d carried the live registrations %v: Java unregisters the first in hash order", conn, keys)
		keys = keys[:1]
	}
	m.connClosed(keys)
}

// ConnClosedFinding is Java's ConnClosed of conn when its hash order finds
// first before the connection's other live entries: the one branch of an
// ambiguous close, for tests that play each.
func (m *Java) ConnClosedFinding(conn uint64, first AddrKey) {
	if li := m.Live[first]; li == nil || li.Conn != conn {
		panic(fmt.Sprintf("%v has no live entry on connection %d", first, conn))
	}
	m.connClosed([]AddrKey{first})
}

func (m *Java) connClosed(keys []AddrKey) {
	var reqs []unreg
	for _, k := range keys {
		if r, ok := m.findBroker(k, m.Live[k]); ok {
			reqs = append(reqs, r)
		} else if m.Dev.LivenessWithoutGroup {
			reqs = append(reqs, unreg{cluster: k.Cluster, addr: k.Addr})
		}
	}
	m.unregister(reqs)
}

// Scan is scanNotActiveBroker at time now. It returns the connections
// closed: Java closes the channel of every expired entry and then handles
// each close as ConnClosed; rocketns (ExpiredConns) keeps a connection that
// a live registration still uses.
func (m *Java) Scan(now int64) (closed []uint64) {
	var reqs []unreg
	var conns []uint64
	for k, li := range m.Live {
		if li.Last+li.Timeout >= now {
			continue
		}
		if li.Conn != 0 && !slices.Contains(conns, li.Conn) {
			conns = append(conns, li.Conn)
		}
		if r, ok := m.findBroker(k, li); ok {
			reqs = append(reqs, r)
		} else if m.Dev.LivenessWithoutGroup {
			reqs = append(reqs, unreg{cluster: k.Cluster, addr: k.Addr})
		}
	}
	m.unregister(reqs)
	slices.Sort(conns)
	for _, c := range conns {
		if m.Dev.ExpiredConns && m.connUsed(c) {
			continue
		}
		closed = append(closed, c)
		m.ConnClosed(c)
	}
	return closed
}

func (m *Java) connUsed(c uint64) bool {
	for _, li := range m.Live {
		if li.Conn == c {
			return true
		}
	}
	return false
}

// Touch is a heartbeat (904) of (cluster, addr), or the liveness side of
// QUERY_DATA_VERSION.
func (m *Java) Touch(cluster, addr string, now int64) {
	if li := m.Live[AddrKey{cluster, addr}]; li != nil {
		li.Last = now
	}
}

// QueryDataVersion is 322: changed is decided before the refresh; stored
// is nil when (cluster, addr) has no live entry.
func (m *Java) QueryDataVersion(cluster, addr string, dv body.DataVersion, now int64) (changed bool, stored *body.DataVersion) {
	li := m.Live[AddrKey{cluster, addr}]
	changed = li == nil || li.DV != dv
	m.Touch(cluster, addr, now)
	if li != nil {
		v := li.DV
		stored = &v
	}
	return changed, stored
}

// SetPerm is 205 (wipe) or 327 (add to exactly read|write); it counts the
// topics holding a queue of name.
func (m *Java) SetPerm(name string, wipe bool) int {
	n := 0
	for _, qs := range m.Topics {
		q, ok := qs[name]
		if !ok {
			continue
		}
		if wipe {
			q.Perm &^= 2
		} else {
			q.Perm = 6
		}
		qs[name] = q
		n++
	}
	return n
}

// DeleteTopic is 216 with clusterName as the processor passes it: empty
// deletes the topic, anything else only its queues on the cluster's groups.
func (m *Java) DeleteTopic(topic, cluster string) {
	if cluster == "" {
		delete(m.Topics, topic)
		return
	}
	names := m.Clusters[cluster]
	qs := m.Topics[topic]
	if len(names) == 0 || qs == nil {
		return
	}
	for n := range names {
		delete(qs, n)
	}
	if len(qs) == 0 {
		delete(m.Topics, topic)
	}
}

// RegisterTopic is 217: the queue data stored as sent, stopping at the
// first one naming an unknown group (a new topic is then not created).
func (m *Java) RegisterTopic(topic string, queues []body.QueueData) {
	if len(queues) == 0 {
		return
	}
	qs := m.Topics[topic]
	if qs == nil {
		for _, q := range queues {
			if m.Groups[q.BrokerName] == nil {
				return
			}
		}
		qs = map[string]body.QueueData{}
		m.Topics[topic] = qs
	}
	for _, q := range queues {
		if m.Groups[q.BrokerName] == nil {
			return
		}
		qs[q.BrokerName] = q
	}
}

// BrokerData is g as routes and the cluster info show it.
func (g *Group) BrokerData() body.BrokerData {
	bd := body.BrokerData{Cluster: g.Cluster, BrokerName: g.Name, ZoneName: g.Zone, EnableActingMaster: g.Acting}
	for id, a := range g.Addrs {
		bd.Addrs = append(bd.Addrs, body.BrokerAddr{ID: id, Addr: a})
	}
	slices.SortFunc(bd.Addrs, body.ByBrokerID)
	return bd
}

// Route is pickupTopicRouteData (spec 3.4), broker and queue data sorted by
// name.
func (m *Java) Route(topic string) (*body.TopicRoute, bool) {
	qs := m.Topics[topic]
	if qs == nil {
		return nil, false
	}
	r := &body.TopicRoute{FilterServerTable: map[string][]string{}}
	found := false
	for _, n := range sortedKeys(qs) {
		g := m.Groups[n]
		if g == nil {
			if !m.Dev.GoneGroups {
				r.QueueDatas = append(r.QueueDatas, qs[n])
			}
			continue
		}
		found = true
		r.QueueDatas = append(r.QueueDatas, qs[n])
		r.BrokerDatas = append(r.BrokerDatas, g.BrokerData())
		for _, a := range g.Addrs {
			if fs := m.Filters[AddrKey{g.Cluster, a}]; len(fs) > 0 {
				r.FilterServerTable[a] = slices.Clone(fs)
			}
		}
	}
	if !found {
		return nil, false
	}
	if mp := m.Mappings[topic]; len(mp) > 0 {
		r.MappingByBroker = mp
	}
	if m.ActingMaster && !strings.HasPrefix(topic, "rmq_sys_SYNC_BROKER_MEMBER_") {
		need := false
		for _, bd := range r.BrokerDatas {
			if len(bd.Addrs) > 0 && bd.Addrs[0].ID != 0 {
				need = true
			}
		}
		for i := range r.BrokerDatas {
			bd := &r.BrokerDatas[i]
			if !need || len(bd.Addrs) == 0 || bd.Addrs[0].ID == 0 || !bd.EnableActingMaster {
				continue
			}
			for _, q := range r.QueueDatas {
				if q.BrokerName == bd.BrokerName {
					if q.Perm&2 == 0 {
						bd.Addrs[0].ID = 0
					}
					break
				}
			}
		}
	}
	return r, true
}

// ZoneFilter is ZoneRouteRPCHook's filter (spec 8.4) applied to r.
func ZoneFilter(r *body.TopicRoute, zone string) {
	removed := map[string]bool{}
	var keep []body.BrokerData
	for _, bd := range r.BrokerDatas {
		if len(bd.Addrs) == 0 || bd.Addrs[0].ID != 0 || strings.EqualFold(bd.ZoneName, zone) {
			keep = append(keep, bd)
			continue
		}
		removed[bd.BrokerName] = true
		for _, a := range bd.Addrs {
			delete(r.FilterServerTable, a.Addr)
		}
	}
	r.BrokerDatas = keep
	var qs []body.QueueData
	for _, q := range r.QueueDatas {
		if !removed[q.BrokerName] {
			qs = append(qs, q)
		}
	}
	r.QueueDatas = qs
}

// ClusterInfo is GET_BROKER_CLUSTER_INFO's data, broker names sorted.
func (m *Java) ClusterInfo() *body.ClusterInfo {
	ci := &body.ClusterInfo{Brokers: []body.BrokerData{}, Clusters: map[string][]string{}}
	for _, n := range sortedKeys(m.Groups) {
		ci.Brokers = append(ci.Brokers, m.Groups[n].BrokerData())
	}
	for c, set := range m.Clusters {
		ci.Clusters[c] = sortedKeys(set)
	}
	return ci
}

// TopicList is 206, sorted.
func (m *Java) TopicList() []string { return sortedKeys(m.Topics) }

// TopicsByCluster is 224, sorted; empty for an unknown cluster.
func (m *Java) TopicsByCluster(cluster string) []string {
	out := []string{}
	for _, topic := range sortedKeys(m.Topics) {
		for n := range m.Clusters[cluster] {
			if _, ok := m.Topics[topic][n]; ok {
				out = append(out, topic)
				break
			}
		}
	}
	return out
}

// Unit list kinds: 311, 312, 313.
const (
	UnitTopics = iota
	HasUnitSubTopics
	HasUnitSubUnunitTopics
)

func unitHit(kind int, f int32) bool {
	switch kind {
	case UnitTopics:
		return f&1 != 0
	case HasUnitSubTopics:
		return f&2 != 0
	}
	return f&2 != 0 && f&1 == 0
}

// UnitTopics is 311-313, sorted. Java decides on the first queue data in
// hash order; SortedLists on the smallest broker name. Without it a topic
// whose queue data disagree is ambiguous.
func (m *Java) UnitTopics(kind int) []string {
	out := []string{}
	for _, topic := range sortedKeys(m.Topics) {
		names := sortedKeys(m.Topics[topic])
		hit := unitHit(kind, m.Topics[topic][names[0]].TopicSysFlag)
		if !m.Dev.SortedLists {
			for _, n := range names[1:] {
				if unitHit(kind, m.Topics[topic][n].TopicSysFlag) != hit {
					m.ambiguous("topic %s: its queue data disagree on the unit flags, Java reads the first in hash order", topic)
				}
			}
		}
		if hit {
			out = append(out, topic)
		}
	}
	return out
}

// SystemTopics is 304: cluster names and broker names, sorted, and the
// brokerAddr Java may answer: the first address (smallest id) of any
// non-empty group; under SortedLists, of the first by name only.
func (m *Java) SystemTopics() (topics, addrs []string) {
	seen := map[string]bool{}
	for c, set := range m.Clusters {
		seen[c] = true
		for n := range set {
			seen[n] = true
		}
	}
	topics = sortedKeys(seen)
	for _, n := range sortedKeys(m.Groups) {
		g := m.Groups[n]
		if len(g.Addrs) == 0 {
			continue
		}
		addrs = append(addrs, g.Addrs[MinID(g.Addrs)])
		if m.Dev.SortedLists {
			break
		}
	}
	return topics, addrs
}

// MemberGroup is 901's brokerAddrs: nil for an unknown group.
func (m *Java) MemberGroup(name string) []body.BrokerAddr {
	if g := m.Groups[name]; g != nil {
		return g.BrokerData().Addrs
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
