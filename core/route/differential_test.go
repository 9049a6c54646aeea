// A randomized differential test of Table against routetest.Java, the
// model of the Java rules, with every deviation rocketns makes on purpose
// switched on (each is a README item; routetest names them), plus a test
// of many writers and lock-free readers whose cached bodies must never go
// stale.

package route

import (
	"bytes"
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
	"github.com/rocketns/rocketns/core/route/routetest"
)

// diffModel is the Java model with rocketns's deviations, fed the table's
// own request types.
type diffModel struct{ *routetest.Java }

func newJavaModel() *diffModel { return &diffModel{routetest.NewJava(routetest.Rocketns())} }

func (m *diffModel) register(r *Registration, now int64) (master, ha string, err error) {
	mr := &routetest.Registration{
		Cluster: r.Cluster, Addr: r.BrokerAddr, Name: r.BrokerName, HA: r.HAServerAddr, Zone: r.ZoneName,
		ID: r.BrokerID, Acting: r.EnableActingMaster, Conn: uint64(r.Conn),
	}
	if r.HeartbeatTimeoutMillis != 0 {
		v := r.HeartbeatTimeoutMillis
		mr.Timeout = &v
	}
	if rb := r.Body; rb != nil {
		mr.Topics, mr.DV, mr.Filters, mr.Mappings = rb.Topics, rb.DataVersion, rb.FilterServerList, rb.MappingInfo
	}
	res, ref := m.Register(mr, now)
	switch ref {
	case routetest.Accepted:
		return res.MasterAddr, res.HAServerAddr, nil
	case routetest.RegisterFailed:
		return "", "", ErrFirstSingleTopic
	case routetest.RefusedNegativeID:
		return "", "", ErrNegativeBrokerID
	case routetest.RefusedEmptyAddr:
		return "", "", ErrEmptyBrokerAddr
	}
	return "", "", fmt.Errorf("model refusal %d", ref)
}

func (m *diffModel) clusterInfo() []byte { return body.AppendClusterInfo(nil, m.ClusterInfo()) }

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
	m    *diffModel
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
		mm, mha, merr := m.register(r, h.clk.ms)
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
		if mf := m.Unregister(c, a, g, id); f != mf {
			h.fail("fenced %v model %v", f, mf)
		}
	case op < 63:
		h.clk.ms += int64([]int{3000, 8000, 11000, 60000, 121000}[rng.IntN(5)])
		h.log = append(h.log, fmt.Sprintf("clock=%d ScanExpired", h.clk.ms))
		var closeConns []uint64
		for _, ev := range tb.ScanExpired() {
			if ev.CloseConn && !slices.Contains(closeConns, uint64(ev.Conn)) {
				closeConns = append(closeConns, uint64(ev.Conn))
			}
		}
		slices.Sort(closeConns)
		if mc := m.Scan(h.clk.ms); fmt.Sprint(mc) != fmt.Sprint(closeConns) {
			h.fail("connections to close after the scan: %v, model %v", closeConns, mc)
		}
		for _, c := range closeConns {
			tb.ConnClosed(ConnID(c))
		}
	case op < 68:
		c := ConnID(rng.IntN(4))
		h.log = append(h.log, fmt.Sprintf("ConnClosed %d", c))
		tb.ConnClosed(c)
		m.ConnClosed(uint64(c))
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
		m.Touch(c, a, h.clk.ms)
	case op < 79:
		g := diffGroups[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			h.log = append(h.log, "Wipe "+g)
			if n, mn := tb.WipeWritePerm(g), m.SetPerm(g, true); n != mn {
				h.fail("wipe count %d model %d", n, mn)
			}
		} else {
			h.log = append(h.log, "Add "+g)
			if n, mn := tb.AddWritePerm(g), m.SetPerm(g, false); n != mn {
				h.fail("add count %d model %d", n, mn)
			}
		}
	case op < 83:
		tp := diffTopics[rng.IntN(len(diffTopics))]
		c := []string{"", "c1", "c2"}[rng.IntN(3)]
		h.log = append(h.log, fmt.Sprintf("DeleteTopic %s %q", tp, c))
		tb.DeleteTopic(tp, c)
		m.DeleteTopic(tp, c)
	case op < 88:
		tp := diffTopics[rng.IntN(len(diffTopics))]
		var qs []body.QueueData
		for i := 0; i < 1+rng.IntN(2); i++ {
			qs = append(qs, body.QueueData{BrokerName: []string{"a", "b", "c", "zz"}[rng.IntN(4)], ReadQueueNums: 5, WriteQueueNums: 5, Perm: 6})
		}
		h.log = append(h.log, fmt.Sprintf("RegisterTopic %s %v", tp, qs))
		tb.RegisterTopic(tp, qs)
		m.RegisterTopic(tp, qs)
	case op < 91:
		on := rng.IntN(2) == 0
		h.log = append(h.log, fmt.Sprintf("SetActing %v", on))
		tb.SetSupportActingMaster(on)
		m.ActingMaster = on
	case op < 93:
		on := rng.IntN(2) == 0
		h.log = append(h.log, fmt.Sprintf("SetDeleteWithReg %v", on))
		tb.SetDeleteTopicWithBrokerRegistration(on)
		m.DeleteWithReg = on
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
		mr, mok := m.Route(tp)
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
	for tp := range m.Topics {
		all = append(all, tp)
	}
	sort.Strings(all)
	if got := tb.TopicList(); fmt.Sprint(got) != fmt.Sprint(all) {
		h.fail("topic list %v model %v", got, all)
	}
	for _, c := range []string{"c1", "c2", "zz"} {
		want := []string{}
		for tp, qs := range m.Topics {
			for n := range qs {
				if m.Clusters[c][n] {
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
		for tp, qs := range m.Topics {
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
		if mg := m.Groups[g]; mg != nil {
			want = mg.BrokerData().Addrs
		}
		if got := tb.BrokerMemberGroup(g); fmt.Sprint(got) != fmt.Sprint(want) {
			h.fail("member group %s: %v model %v", g, got, want)
		}
	}
	na := 0
	for _, g := range m.Groups {
		na += len(g.Addrs)
	}
	want := Stats{Clusters: len(m.Clusters), BrokerGroups: len(m.Groups), BrokerAddrs: na, Topics: len(m.Topics), Live: len(m.Live)}
	if st := tb.Stats(); st != want {
		h.fail("stats %+v model %+v", st, want)
	}

	// The rest reads the writers' state.
	tb.mu.Lock()
	defer tb.mu.Unlock()
	live := map[routetest.AddrKey]*liveInfo{}
	for k, li := range tb.live {
		live[routetest.AddrKey{Cluster: k.cluster, Addr: k.addr}] = li
	}
	if !maps.EqualFunc(live, m.Live, func(li *liveInfo, ml *routetest.Live) bool {
		return li.lastUpdate == ml.Last && li.timeout == ml.Timeout && uint64(li.conn) == ml.Conn && li.dv == ml.DV
	}) {
		h.fail("live:\n got   %v\n model %v", tb.live, m.Live)
	}
	filters := map[routetest.AddrKey][]string{}
	for k, fs := range tb.filters {
		filters[routetest.AddrKey{Cluster: k.cluster, Addr: k.addr}] = fs
	}
	if !maps.EqualFunc(filters, m.Filters, slices.Equal) {
		h.fail("filters:\n got   %v\n model %v", tb.filters, m.Filters)
	}
	if !maps.EqualFunc(tb.mappings, m.Mappings, mappingsEqual) {
		h.fail("mappings:\n got   %q\n model %q", tb.mappings, m.Mappings)
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
		mq := m.Topics[k]
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
	if n != len(m.Topics) {
		h.fail("%d topics, model %d", n, len(m.Topics))
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
// step all they show must agree. make test runs a dozen seeds (a few
// seconds with -race); ROCKETNS_SOAK runs thousands. ROCKETNS_DIFF_SEED
// reruns one seed, ROCKETNS_DIFF_SEEDS and ROCKETNS_DIFF_STEPS size a run.
func TestDifferentialJavaModel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("randomized suite skipped under -short")
	}
	seeds := 12
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
			if h.m.Ambiguous != "" {
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
	t.Parallel()
	rounds := 4
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
