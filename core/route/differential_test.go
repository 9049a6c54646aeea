// A plain, Java-faithful model of RouteInfoManager (spec 3.3-3.7) and a
// randomized differential test of Table against it, plus a test of many
// writers and lock-free readers whose cached bodies must never go stale.
//
// The model follows Java except where rocketns deviates on purpose, each
// documented where the table does it: queues of a gone group are left out
// of routes, a closed connection drops every broker registered over it,
// findBroker prefers the group of the latest registration, the
// unregistration fence, a negative brokerId is refused, and a mapping
// without bname is filed under the registering group.

package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

type jGroup struct {
	cluster, name, zone string
	acting              bool
	addrs               map[int64]string
}

type jLive struct {
	last, timeout int64
	dv            body.DataVersion
	conn          ConnID
	ha            string
	name          string
	id            int64
}

// javaModel is RouteInfoManager's tables as plain maps.
type javaModel struct {
	topics        map[string]map[string]body.QueueData
	mappings      map[string]map[string][]byte // topicQueueMappingInfoTable
	groups        map[string]*jGroup
	clusters      map[string]map[string]bool
	live          map[addrKey]*jLive
	filters       map[addrKey][]string
	acting        bool
	deleteWithReg bool
	// ambiguous is set when findBroker had several candidate groups: the
	// table picks one in map order, so the run cannot go on.
	ambiguous bool
}

func newJavaModel() *javaModel {
	return &javaModel{
		topics:   map[string]map[string]body.QueueData{},
		mappings: map[string]map[string][]byte{},
		groups:   map[string]*jGroup{},
		clusters: map[string]map[string]bool{},
		live:     map[addrKey]*jLive{},
		filters:  map[addrKey][]string{},
	}
}

func minID(m map[int64]string) int64 {
	first := true
	var mn int64
	for id := range m {
		if first || id < mn {
			mn, first = id, false
		}
	}
	return mn
}

func (m *javaModel) register(r *Registration, now, defTimeout int64) (master, ha string, err error) {
	if r.BrokerID < 0 {
		return "", "", ErrNegativeBrokerID
	}
	rb := r.Body
	// Java reads the topic table into a map: the last duplicate wins.
	topics := map[string]body.TopicConfig{}
	var order []string
	for _, tc := range rb.Topics {
		if _, ok := topics[tc.TopicName]; !ok {
			order = append(order, tc.TopicName)
		}
		topics[tc.TopicName] = tc
	}
	// 7 first: rocketns refuses before anything changes (Java keeps
	// steps 1-5 of a refused registration).
	if g := m.groups[r.BrokerName]; len(topics) == 1 && (g == nil || g.addrs[r.BrokerID] == "") {
		return "", "", ErrFirstSingleTopic
	}
	// 1
	if m.clusters[r.Cluster] == nil {
		m.clusters[r.Cluster] = map[string]bool{}
	}
	m.clusters[r.Cluster][r.BrokerName] = true
	// 2
	g := m.groups[r.BrokerName]
	registerFirst := false
	if g == nil {
		g = &jGroup{cluster: r.Cluster, name: r.BrokerName, addrs: map[int64]string{}}
		m.groups[r.BrokerName] = g
		registerFirst = true
	}
	// 3
	old := r.EnableActingMaster == nil
	g.acting = !old && *r.EnableActingMaster
	g.zone = r.ZoneName
	// 5
	for id, a := range g.addrs {
		if a == r.BrokerAddr && id != r.BrokerID {
			delete(g.addrs, id)
		}
	}
	// 6
	if oa, ok := g.addrs[r.BrokerID]; ok && oa != "" && oa != r.BrokerAddr {
		if li := m.live[addrKey{r.Cluster, oa}]; li != nil && li.dv.StateVersion > rb.DataVersion.StateVersion {
			delete(m.live, addrKey{r.Cluster, r.BrokerAddr})
			return "", "", nil
		}
	}
	// 7
	if _, ok := g.addrs[r.BrokerID]; !ok && len(topics) == 1 {
		return "", "", ErrFirstSingleTopic
	}
	// 8
	oa := g.addrs[r.BrokerID]
	g.addrs[r.BrokerID] = r.BrokerAddr
	if oa == "" {
		registerFirst = true
	}
	// 9
	isMaster := r.BrokerID == 0
	isPrime := !old && !isMaster && r.BrokerID == minID(g.addrs)
	key := addrKey{r.Cluster, r.BrokerAddr}
	if isMaster || isPrime {
		// 10b
		if m.deleteWithReg && len(rb.MappingInfo) == 0 {
			for topic, qs := range m.topics {
				if _, ok := qs[g.name]; ok {
					if _, in := topics[topic]; !in {
						delete(qs, g.name)
						if len(qs) == 0 {
							delete(m.topics, topic)
						}
					}
				}
			}
		}
		// 10c
		prev := m.live[key]
		dvChanged := prev == nil || prev.dv != rb.DataVersion
		for _, name := range order {
			tc := topics[name]
			qs := m.topics[name]
			_, has := qs[g.name]
			if registerFirst || dvChanged || !has {
				perm := tc.Perm
				if isPrime && g.acting {
					perm &^= PermWrite
				}
				if qs == nil {
					qs = map[string]body.QueueData{}
					m.topics[name] = qs
				}
				qs[g.name] = body.QueueData{BrokerName: g.name, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: perm, TopicSysFlag: tc.TopicSysFlag}
			}
		}
		// 10d
		if registerFirst || dvChanged {
			for topic, info := range rb.MappingInfo {
				var v struct {
					Bname string `json:"bname"`
				}
				bname := g.name
				if json.Unmarshal(info, &v) == nil && v.Bname != "" {
					bname = v.Bname
				}
				if m.mappings[topic] == nil {
					m.mappings[topic] = map[string][]byte{}
				}
				m.mappings[topic][bname] = info
			}
		}
	}
	// 11
	to := r.HeartbeatTimeoutMillis
	if to <= 0 {
		to = defTimeout
	}
	m.live[key] = &jLive{last: now, timeout: to, dv: rb.DataVersion, conn: r.Conn, ha: r.HAServerAddr, name: g.name, id: r.BrokerID}
	// 12
	if rb.FilterServerList != nil {
		if len(rb.FilterServerList) == 0 {
			delete(m.filters, key)
		} else {
			m.filters[key] = slices.Clone(rb.FilterServerList)
		}
	}
	// 13
	if r.BrokerID != 0 {
		if ma, ok := g.addrs[0]; ok {
			if ml := m.live[addrKey{r.Cluster, ma}]; ml != nil {
				master, ha = ma, ml.ha
			}
		}
	}
	return master, ha, nil
}

type jUnreg struct {
	cluster, addr, name string
	id                  int64
	// newer is the live entry of a newer registration of the address
	// (rocketns's fence): it, the filter servers and its own id stay.
	newer *jLive
}

func (m *javaModel) unregisterBatch(reqs []jUnreg) {
	removed := map[string]bool{}
	reduced := map[string]bool{}
	for _, r := range reqs {
		key := addrKey{r.cluster, r.addr}
		if r.newer == nil {
			delete(m.live, key)
			delete(m.filters, key)
		}
		removeName, touched := false, false
		if g := m.groups[r.name]; g != nil {
			for id, a := range g.addrs {
				if a == r.addr && (r.newer == nil || r.newer.name != r.name || r.newer.id != id) {
					delete(g.addrs, id)
					touched = true
				}
			}
			if len(g.addrs) == 0 {
				delete(m.groups, r.name)
				removeName = true
			}
		}
		if removeName {
			if set := m.clusters[r.cluster]; set != nil {
				delete(set, r.name)
				if len(set) == 0 {
					delete(m.clusters, r.cluster)
				}
			}
			removed[r.name] = true
		} else if r.newer == nil || touched {
			reduced[r.name] = true
		}
	}
	for n := range removed {
		delete(reduced, n)
	}
	for topic, qs := range m.topics {
		for n := range removed {
			delete(qs, n)
		}
		if len(qs) == 0 {
			delete(m.topics, topic)
			continue
		}
		for n := range reduced {
			q, ok := qs[n]
			if !ok {
				continue
			}
			g := m.groups[n]
			if g == nil || !g.acting {
				continue
			}
			if len(g.addrs) == 0 || minID(g.addrs) > 0 {
				q.Perm &^= PermWrite
				qs[n] = q
			}
		}
	}
}

func (m *javaModel) findBroker(key addrKey, li *jLive) jUnreg {
	r := jUnreg{cluster: key.cluster, addr: key.addr, id: -1}
	if g := m.groups[li.name]; g != nil && g.cluster == key.cluster {
		for id, a := range g.addrs {
			if a == key.addr {
				r.name, r.id = g.name, id
				return r
			}
		}
	}
	var cands []string
	for _, g := range m.groups {
		if g.cluster != key.cluster {
			continue
		}
		for _, a := range g.addrs {
			if a == key.addr {
				cands = append(cands, g.name)
				break
			}
		}
	}
	if len(cands) > 1 {
		m.ambiguous = true
	}
	if len(cands) > 0 {
		g := m.groups[cands[0]]
		for id, a := range g.addrs {
			if a == key.addr {
				r.name, r.id = g.name, id
			}
		}
	}
	return r
}

func (m *javaModel) unregister(cluster, addr, name string, id int64) (fenced bool) {
	r := jUnreg{cluster: cluster, addr: addr, name: name, id: id}
	if li := m.live[addrKey{cluster, addr}]; li != nil && (li.name != name || li.id != id) {
		r.newer = li
	}
	m.unregisterBatch([]jUnreg{r})
	return r.newer != nil
}

func (m *javaModel) scan(now int64) {
	var reqs []jUnreg
	for k, li := range m.live {
		if li.last+li.timeout < now {
			reqs = append(reqs, m.findBroker(k, li))
		}
	}
	for _, r := range reqs {
		delete(m.live, addrKey{r.cluster, r.addr})
	}
	m.unregisterBatch(reqs)
}

func (m *javaModel) connClosed(c ConnID) {
	var reqs []jUnreg
	for k, li := range m.live {
		if li.conn == c && c != 0 {
			reqs = append(reqs, m.findBroker(k, li))
		}
	}
	m.unregisterBatch(reqs)
}

func (m *javaModel) touch(cluster, addr string, now int64) {
	if li := m.live[addrKey{cluster, addr}]; li != nil {
		li.last = now
	}
}

func (m *javaModel) setPerm(name string, f func(int32) int32) int {
	n := 0
	for _, qs := range m.topics {
		if q, ok := qs[name]; ok {
			q.Perm = f(q.Perm)
			qs[name] = q
			n++
		}
	}
	return n
}

func (m *javaModel) deleteTopic(topic, cluster string) {
	qs := m.topics[topic]
	if qs == nil {
		return
	}
	if cluster == "" {
		delete(m.topics, topic)
		return
	}
	for n := range m.clusters[cluster] {
		delete(qs, n)
	}
	if len(qs) == 0 {
		delete(m.topics, topic)
	}
}

func (m *javaModel) registerTopic(topic string, queues []body.QueueData) {
	if len(queues) == 0 {
		return
	}
	qs := m.topics[topic]
	if qs == nil {
		for _, q := range queues {
			if m.groups[q.BrokerName] == nil {
				return
			}
		}
		qs = map[string]body.QueueData{}
		m.topics[topic] = qs
	}
	for _, q := range queues {
		if m.groups[q.BrokerName] == nil {
			return
		}
		qs[q.BrokerName] = q
	}
}

func (m *javaModel) groupData(g *jGroup) body.BrokerData {
	bd := body.BrokerData{Cluster: g.cluster, BrokerName: g.name, ZoneName: g.zone, EnableActingMaster: g.acting}
	for id, a := range g.addrs {
		bd.Addrs = append(bd.Addrs, body.BrokerAddr{ID: id, Addr: a})
	}
	slices.SortFunc(bd.Addrs, body.ByBrokerID)
	return bd
}

func (m *javaModel) route(topic string) (*body.TopicRoute, bool) {
	qs := m.topics[topic]
	if qs == nil {
		return nil, false
	}
	r := &body.TopicRoute{FilterServerTable: map[string][]string{}}
	names := make([]string, 0, len(qs))
	for n := range qs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := m.groups[n]
		if g == nil {
			continue
		}
		r.QueueDatas = append(r.QueueDatas, qs[n])
		r.BrokerDatas = append(r.BrokerDatas, m.groupData(g))
		for _, a := range g.addrs {
			if fs := m.filters[addrKey{g.cluster, a}]; len(fs) > 0 {
				r.FilterServerTable[a] = fs
			}
		}
	}
	if len(r.QueueDatas) == 0 {
		return nil, false
	}
	if len(m.mappings[topic]) > 0 {
		r.MappingByBroker = m.mappings[topic]
	}
	if m.acting && !strings.HasPrefix(topic, syncBrokerMemberPrefix) {
		need := false
		for _, bd := range r.BrokerDatas {
			if len(bd.Addrs) > 0 && bd.Addrs[0].ID != 0 {
				need = true
			}
		}
		if need {
			for i := range r.BrokerDatas {
				bd := &r.BrokerDatas[i]
				if len(bd.Addrs) == 0 || bd.Addrs[0].ID == 0 || !bd.EnableActingMaster {
					continue
				}
				if r.QueueDatas[i].Perm&PermWrite == 0 {
					bd.Addrs[0].ID = 0
				}
			}
		}
	}
	return r, true
}

func (m *javaModel) clusterInfo() []byte {
	ci := &body.ClusterInfo{Clusters: map[string][]string{}}
	names := make([]string, 0, len(m.groups))
	for n := range m.groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ci.Brokers = append(ci.Brokers, m.groupData(m.groups[n]))
	}
	for c, set := range m.clusters {
		var l []string
		for n := range set {
			l = append(l, n)
		}
		sort.Strings(l)
		ci.Clusters[c] = l
	}
	if ci.Brokers == nil {
		ci.Brokers = []body.BrokerData{}
	}
	return body.AppendClusterInfo(nil, ci)
}

// A small world, so that random operations collide: three groups over two
// clusters, addresses mostly per group and sometimes shared, five topics.
var (
	diffClusters = []string{"c1", "c2"}
	diffGroups   = []string{"a", "b", "c"}
	diffTopics   = []string{"t1", "t2", "t3", "t4", "rmq_sys_SYNC_BROKER_MEMBER_a"}
)

func diffAddr(rng *rand.Rand, group string) string {
	if rng.IntN(8) == 0 {
		return fmt.Sprintf("shared%d:1", rng.IntN(2))
	}
	return fmt.Sprintf("%s%d:1", group, rng.IntN(3))
}

// diffRegistration is a random registration of the small world: 4.x and
// 5.x, duplicate topics, static-topic mappings, filter servers, now and
// then a negative id.
func diffRegistration(rng *rand.Rand) *Registration {
	g := diffGroups[rng.IntN(len(diffGroups))]
	r := &Registration{
		Cluster:      diffClusters[rng.IntN(len(diffClusters))],
		BrokerName:   g,
		BrokerAddr:   diffAddr(rng, g),
		BrokerID:     int64(rng.IntN(3)),
		HAServerAddr: fmt.Sprintf("ha%d", rng.IntN(3)),
		Conn:         ConnID(rng.IntN(4)),
	}
	if rng.IntN(40) == 0 {
		r.BrokerID = -1
	}
	if rng.IntN(3) > 0 {
		r.EnableActingMaster = boolp(rng.IntN(2) == 0)
	}
	if rng.IntN(4) == 0 {
		r.ZoneName = "z1"
	}
	if rng.IntN(3) == 0 {
		r.HeartbeatTimeoutMillis = 10000
	}
	rb := &body.RegisterBroker{DataVersion: body.DataVersion{StateVersion: int64(rng.IntN(2)), Timestamp: 1, Counter: int64(rng.IntN(3))}}
	switch rng.IntN(4) {
	case 1:
		rb.FilterServerList = []string{}
	case 2:
		rb.FilterServerList = []string{"f1"}
	case 3:
		rb.FilterServerList = []string{"f2", "f3"}
	}
	topic := func(name string) body.TopicConfig {
		n := int32(1 + rng.IntN(3))
		perm := []int32{6, 4, 7, 2}[rng.IntN(4)]
		return body.TopicConfig{TopicName: name, ReadQueueNums: n, WriteQueueNums: n, Perm: perm, TopicSysFlag: int32(rng.IntN(4))}
	}
	for _, tp := range diffTopics {
		if rng.IntN(2) == 0 {
			rb.Topics = append(rb.Topics, topic(tp))
		}
	}
	if len(rb.Topics) > 0 && rng.IntN(5) == 0 {
		dup := rb.Topics[rng.IntN(len(rb.Topics))].TopicName
		rb.Topics = slices.Insert(rb.Topics, rng.IntN(len(rb.Topics)+1), topic(dup))
	}
	if rng.IntN(4) == 0 {
		rb.MappingInfo = map[string][]byte{}
		for _, tp := range diffTopics[:3] {
			if rng.IntN(2) == 0 {
				bname := g
				if rng.IntN(4) == 0 {
					bname = diffGroups[rng.IntN(len(diffGroups))]
				}
				rb.MappingInfo[tp] = fmt.Appendf(nil, `{"bname":%q,"currIdMap":{"0":0},"epoch":%d,"topic":%q,"totalQueues":8}`, bname, rng.IntN(3), tp)
			}
		}
	}
	r.Body = rb
	return r
}

type diffHarness struct {
	t    *testing.T
	rng  *rand.Rand
	tb   *Table
	m    *javaModel
	clk  *clock
	log  []string
	seed uint64
}

func (h *diffHarness) step() {
	rng, tb, m := h.rng, h.tb, h.m
	switch op := rng.IntN(100); {
	case op < 45:
		r := diffRegistration(rng)
		h.log = append(h.log, fmt.Sprintf("Register %s/%s id=%d addr=%s conn=%d acting=%s zone=%q to=%d dv=%+v fs=%v topics=%v mappings=%q",
			r.Cluster, r.BrokerName, r.BrokerID, r.BrokerAddr, r.Conn, fmtBoolp(r.EnableActingMaster), r.ZoneName,
			r.HeartbeatTimeoutMillis, r.Body.DataVersion, r.Body.FilterServerList, r.Body.Topics, r.Body.MappingInfo))
		res, err := tb.Register(r)
		mm, mha, merr := m.register(r, h.clk.ms, DefaultBrokerTimeout)
		if (err != nil) != (merr != nil) || res.MasterAddr != mm || res.HAServerAddr != mha {
			h.fail("register result: got %+v %v, model %q %q %v", res, err, mm, mha, merr)
		}
	case op < 55:
		c := diffClusters[rng.IntN(2)]
		g := diffGroups[rng.IntN(3)]
		a := diffAddr(rng, g)
		id := int64(rng.IntN(3))
		h.log = append(h.log, fmt.Sprintf("Unregister %s %s %s %d", c, a, g, id))
		_, f := tb.Unregister(c, a, g, id)
		if mf := m.unregister(c, a, g, id); f != mf {
			h.fail("fenced %v model %v", f, mf)
		}
	case op < 63:
		h.clk.ms += int64([]int{3000, 8000, 11000, 60000, 121000}[rng.IntN(5)])
		h.log = append(h.log, fmt.Sprintf("clock=%d ScanExpired", h.clk.ms))
		tb.ScanExpired()
		m.scan(h.clk.ms)
	case op < 68:
		c := ConnID(rng.IntN(4))
		h.log = append(h.log, fmt.Sprintf("ConnClosed %d", c))
		tb.ConnClosed(c)
		m.connClosed(c)
	case op < 74:
		c := diffClusters[rng.IntN(2)]
		g := diffGroups[rng.IntN(3)]
		a := diffAddr(rng, g)
		h.log = append(h.log, fmt.Sprintf("Heartbeat %s %s", c, a))
		if rng.IntN(2) == 0 {
			tb.Heartbeat(c, a)
		} else {
			tb.QueryDataVersion(c, a, nil)
		}
		m.touch(c, a, h.clk.ms)
	case op < 79:
		g := diffGroups[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			h.log = append(h.log, "Wipe "+g)
			if n, mn := tb.WipeWritePerm(g), m.setPerm(g, func(p int32) int32 { return p &^ PermWrite }); n != mn {
				h.fail("wipe count %d model %d", n, mn)
			}
		} else {
			h.log = append(h.log, "Add "+g)
			if n, mn := tb.AddWritePerm(g), m.setPerm(g, func(int32) int32 { return PermRead | PermWrite }); n != mn {
				h.fail("add count %d model %d", n, mn)
			}
		}
	case op < 83:
		tp := diffTopics[rng.IntN(len(diffTopics))]
		c := []string{"", "c1", "c2"}[rng.IntN(3)]
		h.log = append(h.log, fmt.Sprintf("DeleteTopic %s %q", tp, c))
		tb.DeleteTopic(tp, c)
		m.deleteTopic(tp, c)
	case op < 88:
		tp := diffTopics[rng.IntN(len(diffTopics))]
		var qs []body.QueueData
		for i := 0; i < 1+rng.IntN(2); i++ {
			qs = append(qs, body.QueueData{BrokerName: []string{"a", "b", "c", "zz"}[rng.IntN(4)], ReadQueueNums: 5, WriteQueueNums: 5, Perm: 6})
		}
		h.log = append(h.log, fmt.Sprintf("RegisterTopic %s %v", tp, qs))
		tb.RegisterTopic(tp, qs)
		m.registerTopic(tp, qs)
	case op < 91:
		on := rng.IntN(2) == 0
		h.log = append(h.log, fmt.Sprintf("SetActing %v", on))
		tb.SetSupportActingMaster(on)
		m.acting = on
	case op < 93:
		on := rng.IntN(2) == 0
		h.log = append(h.log, fmt.Sprintf("SetDeleteWithReg %v", on))
		tb.SetDeleteTopicWithBrokerRegistration(on)
		m.deleteWithReg = on
	default:
		h.log = append(h.log, "reads only")
	}
	// Reads between writes fill the caches the next write must drop.
	for _, tp := range diffTopics {
		if rng.IntN(2) == 0 {
			tb.RouteBody(tp, body.Standard)
			tb.RouteBody(tp, body.Legacy)
		}
		if rng.IntN(4) == 0 {
			tb.RouteBodyOrdered(tp, body.Legacy, "a:4")
		}
	}
	if rng.IntN(2) == 0 {
		tb.AppendClusterInfo(nil)
	}
}

func fmtBoolp(b *bool) string {
	if b == nil {
		return "nil"
	}
	return strconv.FormatBool(*b)
}

func (h *diffHarness) fail(format string, args ...any) {
	h.t.Helper()
	from := max(0, len(h.log)-40)
	h.t.Fatalf("seed %d step %d: %s\nlast operations:\n  %s", h.seed, len(h.log)-1, fmt.Sprintf(format, args...), strings.Join(h.log[from:], "\n  "))
}

// check compares everything a client or the metrics can see, and the
// table's internal indexes, with the model.
func (h *diffHarness) check() {
	tb, m := h.tb, h.m
	for _, tp := range diffTopics {
		mr, mok := m.route(tp)
		for _, d := range []body.Dialect{body.Standard, body.Legacy} {
			got := "none"
			if b, ok := tb.RouteBody(tp, d); ok {
				got = string(b)
			}
			fresh := "none"
			if r, ok := tb.Route(tp); ok {
				fresh = string(body.AppendTopicRoute(nil, r, d))
			}
			want := "none"
			if mok {
				want = string(body.AppendTopicRoute(nil, mr, d))
			}
			if got != fresh {
				h.fail("stale cached body of %s, dialect %d:\n cached %s\n fresh  %s", tp, d, got, fresh)
			}
			if got != want {
				h.fail("route %s, dialect %d:\n got   %s\n model %s", tp, d, got, want)
			}
		}
		gotOrdered := "none"
		if b, ok := tb.RouteBodyOrdered(tp, body.Legacy, "a:4"); ok {
			gotOrdered = string(b)
		}
		wantOrdered := "none"
		if mok {
			mr.OrderTopicConf = "a:4"
			wantOrdered = string(body.AppendTopicRoute(nil, mr, body.Legacy))
		}
		if gotOrdered != wantOrdered {
			h.fail("ordered route %s:\n got   %s\n model %s", tp, gotOrdered, wantOrdered)
		}
	}
	if got, want := tb.AppendClusterInfo(nil), m.clusterInfo(); !bytes.Equal(got, want) {
		h.fail("cluster info:\n got   %s\n model %s", got, want)
	}
	var all []string
	for tp := range m.topics {
		all = append(all, tp)
	}
	sort.Strings(all)
	if got := tb.TopicList(); fmt.Sprint(got) != fmt.Sprint(all) {
		h.fail("topic list %v model %v", got, all)
	}
	for _, c := range []string{"c1", "c2", "zz"} {
		want := []string{}
		for tp, qs := range m.topics {
			for n := range qs {
				if m.clusters[c][n] {
					want = append(want, tp)
					break
				}
			}
		}
		sort.Strings(want)
		if got := tb.TopicsByCluster(c); fmt.Sprint(got) != fmt.Sprint(want) {
			h.fail("topics of cluster %s: %v model %v", c, got, want)
		}
	}
	for _, kind := range []UnitKind{UnitTopics, HasUnitSubTopics, HasUnitSubUnunitTopics} {
		want := []string{}
		for tp, qs := range m.topics {
			names := make([]string, 0, len(qs))
			for n := range qs {
				names = append(names, n)
			}
			sort.Strings(names)
			f := qs[names[0]].TopicSysFlag
			var hit bool
			switch kind {
			case UnitTopics:
				hit = f&FlagUnit != 0
			case HasUnitSubTopics:
				hit = f&FlagUnitSub != 0
			default:
				hit = f&FlagUnitSub != 0 && f&FlagUnit == 0
			}
			if hit {
				want = append(want, tp)
			}
		}
		sort.Strings(want)
		if got := tb.UnitTopicList(kind); fmt.Sprint(got) != fmt.Sprint(want) {
			h.fail("unit list %d: %v model %v", kind, got, want)
		}
	}
	for _, g := range diffGroups {
		var want []body.BrokerAddr
		if mg := m.groups[g]; mg != nil {
			want = m.groupData(mg).Addrs
		}
		if got := tb.BrokerMemberGroup(g); fmt.Sprint(got) != fmt.Sprint(want) {
			h.fail("member group %s: %v model %v", g, got, want)
		}
	}
	na := 0
	for _, g := range m.groups {
		na += len(g.addrs)
	}
	want := Stats{Clusters: len(m.clusters), BrokerGroups: len(m.groups), BrokerAddrs: na, Topics: len(m.topics), Live: len(m.live)}
	if st := tb.Stats(); st != want {
		h.fail("stats %+v model %+v", st, want)
	}

	// The rest reads the writers' state.
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if !maps.EqualFunc(tb.live, m.live, func(li *liveInfo, ml *jLive) bool {
		return li.lastUpdate == ml.last && li.timeout == ml.timeout && li.conn == ml.conn && li.dv == ml.dv
	}) {
		h.fail("live:\n got   %v\n model %v", tb.live, m.live)
	}
	if !maps.EqualFunc(tb.filters, m.filters, slices.Equal) {
		h.fail("filters:\n got   %v\n model %v", tb.filters, m.filters)
	}
	if !maps.EqualFunc(tb.mappings, m.mappings, mappingsEqual) {
		h.fail("mappings:\n got   %q\n model %q", tb.mappings, m.mappings)
	}
	// The brokerName -> topics index is the queue data, inverted; queue
	// data includes the queues of gone groups that routes leave out.
	idx := map[string]map[string]struct{}{}
	n := 0
	tb.topics.Range(func(k string, e *topicEntry) bool {
		n++
		for _, q := range e.queues {
			if idx[q.BrokerName] == nil {
				idx[q.BrokerName] = map[string]struct{}{}
			}
			idx[q.BrokerName][k] = struct{}{}
		}
		mq := m.topics[k]
		if len(mq) != len(e.queues) {
			h.fail("topic %s: queues %v model %v", k, e.queues, mq)
		}
		for _, q := range e.queues {
			if mq[q.BrokerName] != q {
				h.fail("topic %s: queues %v model %v", k, e.queues, mq)
			}
		}
		if !mappingsEqual(e.mapping, tb.mappings[k]) {
			h.fail("topic %s carries mappings %q, table %q", k, e.mapping, tb.mappings[k])
		}
		return true
	})
	if n != len(m.topics) {
		h.fail("%d topics, model %d", n, len(m.topics))
	}
	if !maps.EqualFunc(idx, tb.brokerTopics, maps.Equal) {
		h.fail("index:\n table %v\n index %v", idx, tb.brokerTopics)
	}
	if len(tb.expiry) != len(tb.live) {
		h.fail("expiry heap holds %d entries for %d live", len(tb.expiry), len(tb.live))
	}
	for i, li := range tb.expiry {
		if li.idx != i || tb.live[li.key] != li {
			h.fail("expiry heap entry %d broken", i)
		}
	}
	for k, li := range tb.live {
		if li.conn != 0 {
			if _, ok := tb.conns[li.conn][k]; !ok {
				h.fail("connection index misses %v", k)
			}
		}
	}
	for c, set := range tb.conns {
		for k := range set {
			if li := tb.live[k]; li == nil || li.conn != c {
				h.fail("connection index keeps %d %v", c, k)
			}
		}
	}
}

func mappingsEqual(a, b map[string][]byte) bool { return maps.EqualFunc(a, b, bytes.Equal) }

// envInt reads a test size from the environment.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// Random operations on the table and the model side by side; after every
// step all they show must agree. make test runs a few dozen seeds (some
// seconds with -race); ROCKETNS_SOAK runs thousands. ROCKETNS_DIFF_SEED
// reruns one seed, ROCKETNS_DIFF_SEEDS and ROCKETNS_DIFF_STEPS size a run.
func TestDifferentialJavaModel(t *testing.T) {
	if testing.Short() {
		t.Skip("randomized suite skipped under -short")
	}
	seeds := 30
	if os.Getenv("ROCKETNS_SOAK") != "" {
		seeds = 3000
	}
	first := uint64(1)
	seeds = envInt(t, "ROCKETNS_DIFF_SEEDS", seeds)
	if s := envInt(t, "ROCKETNS_DIFF_SEED", 0); s > 0 {
		first, seeds = uint64(s), 1
	}
	steps := envInt(t, "ROCKETNS_DIFF_STEPS", 150)
	for seed := first; seed < first+uint64(seeds); seed++ {
		tb, clk := newTable(Options{Shards: 4})
		h := &diffHarness{t: t, rng: rand.New(rand.NewPCG(seed, 99)), tb: tb, m: newJavaModel(), clk: clk, seed: seed}
		for range steps {
			h.step()
			if h.m.ambiguous {
				break
			}
			h.check()
		}
	}
}

// Writers run every operation of the small world at once while readers
// query without locks. Every body read must be self-consistent (each queue
// has its broker data), and once the writers are done every cached body
// must be what a fresh assembly encodes.
func TestConcurrentWritersLeaveNoStaleBody(t *testing.T) {
	rounds := 8
	if os.Getenv("ROCKETNS_SOAK") != "" {
		rounds = 60
	}
	for round := range rounds {
		var ms atomic.Int64
		ms.Store(1_000_000)
		tb := New(Options{Shards: 4}, func() int64 { return ms.Load() })
		var stop atomic.Bool
		var readers, writers sync.WaitGroup
		for w := range 4 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for range 400 {
					switch op := rng.IntN(100); {
					case op < 55:
						tb.Register(diffRegistration(rng))
					case op < 65:
						g := diffGroups[rng.IntN(3)]
						tb.Unregister(diffClusters[rng.IntN(2)], diffAddr(rng, g), g, int64(rng.IntN(3)))
					case op < 72:
						ms.Add(int64(rng.IntN(30000)))
						tb.ScanExpired()
					case op < 77:
						tb.ConnClosed(ConnID(rng.IntN(4)))
					case op < 83:
						tb.WipeWritePerm(diffGroups[rng.IntN(3)])
					case op < 88:
						tb.AddWritePerm(diffGroups[rng.IntN(3)])
					case op < 92:
						tb.DeleteTopic(diffTopics[rng.IntN(len(diffTopics))], []string{"", "c1"}[rng.IntN(2)])
					case op < 96:
						tb.RegisterTopic(diffTopics[rng.IntN(len(diffTopics))], []body.QueueData{{BrokerName: diffGroups[rng.IntN(3)], ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}})
					default:
						tb.SetSupportActingMaster(rng.IntN(2) == 0)
					}
				}
			}()
		}
		errs := make(chan error, 4)
		for range 4 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for !stop.Load() {
					for _, tp := range diffTopics {
						for _, d := range []body.Dialect{body.Standard, body.Legacy} {
							b, ok := tb.RouteBody(tp, d)
							if !ok {
								continue
							}
							rt, err := body.DecodeTopicRoute(b)
							if err != nil {
								errs <- fmt.Errorf("%s: %v: %s", tp, err, b)
								return
							}
							have := map[string]bool{}
							for _, bd := range rt.BrokerDatas {
								have[bd.BrokerName] = true
							}
							for _, q := range rt.QueueDatas {
								if !have[q.BrokerName] {
									errs <- fmt.Errorf("%s: queue of %s without its broker data: %s", tp, q.BrokerName, b)
									return
								}
							}
						}
						tb.RouteBodyOrdered(tp, body.Standard, "a:4")
						tb.Route(tp)
						tb.ZoneRoute(tp, "z1")
					}
					tb.AppendClusterInfo(nil)
					tb.TopicList()
					tb.TopicsByCluster("c1")
				}
			}()
		}
		writers.Wait()
		stop.Store(true)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		checkBodies(t, tb, diffTopics...)
	}
}
