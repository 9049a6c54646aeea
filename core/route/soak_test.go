//go:build e2e

// soak_test.go drives the route table at scale (up to 300 brokers x 10k
// topics) on a fake clock with concurrent writers and lock-free readers, and
// checks it after every step against a plain model of what it must hold.
// Skipped under -short. The layout and the model are routetest's: core/server's
// soak test runs the same ones over the wire.

package route

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route/routetest"
)

// soakSize is the layout (routetest.Layout: groups of a master and a slave,
// every topic on `replicas` groups) and the suite's own load. make test runs
// it at 120 brokers x 4000 topics (some seconds with -race); with
// ROCKETNS_SOAK set (make soak) it runs at the full 300 brokers x 10k topics
// with more race rounds.
type soakSize struct {
	routetest.Layout
	readers, raceRounds int
}

func soakSizeOf(t *testing.T) soakSize {
	t.Helper()
	if testing.Short() {
		t.Skip("soak suite skipped under -short")
	}
	if os.Getenv("ROCKETNS_SOAK") != "" {
		return soakSize{Layout: routetest.Layout{Groups: 150, Topics: 10000, Replicas: 3}, readers: 4, raceRounds: 4}
	}
	return soakSize{Layout: routetest.Layout{Groups: 60, Topics: 4000, Replicas: 3}, readers: 4, raceRounds: 2}
}

// soakTable couples the table under test with its model and clock.
type soakTable struct {
	t    *testing.T
	l    soakSize
	tb   *Table
	ms   atomic.Int64 // the table's clock, unix ms
	m    *routetest.Model
	ver  []int    // DataVersion counter of each broker's last registration
	conn []ConnID // connection of each broker's last registration
	next ConnID
}

// stats is what Stats must say. The model has no separate liveness: a broker
// that goes leaves both tables, so Live is the address count.
func (s *soakTable) stats() Stats {
	c := s.m.Counts()
	return Stats{Clusters: c.Clusters, BrokerGroups: c.BrokerGroups, BrokerAddrs: c.BrokerAddrs, Topics: c.Topics, Live: c.BrokerAddrs}
}

const soakTimeoutMs = int64(30000)

func (s *soakTable) registration(bi, ver int, conn ConnID) *Registration {
	g, id := bi/2, int64(bi%2)
	rb := &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: 1700000000000, Counter: int64(ver)},
		Topics:           make([]body.TopicConfig, 0, len(s.m.GroupTopics[g])),
	}
	for _, i := range s.m.GroupTopics[g] {
		n := routetest.Queues(i, ver)
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: routetest.Topic(i), ReadQueueNums: n, WriteQueueNums: n, Perm: 6})
	}
	return &Registration{
		Cluster: routetest.Cluster(g), BrokerAddr: routetest.Addr(g, id), BrokerName: routetest.GroupName(g), BrokerID: id,
		HAServerAddr: routetest.HAAddr(g, id), HeartbeatTimeoutMillis: soakTimeoutMs,
		Body: rb, Conn: conn,
	}
}

// registerAll registers idx at once, one goroutine each, every one on a new
// connection id, and records them in the model.
func (s *soakTable) registerAll(idx []int, ver func(bi int) int) {
	s.t.Helper()
	regs := make([]*Registration, len(idx))
	for k, bi := range idx {
		s.next++
		s.conn[bi], s.ver[bi] = s.next, ver(bi)
		regs[k] = s.registration(bi, s.ver[bi], s.conn[bi])
	}
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for k := range regs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[k] = s.tb.Register(regs[k]) }()
	}
	wg.Wait()
	for k, bi := range idx {
		if errs[k] != nil {
			s.t.Fatalf("register %d: %v", bi, errs[k])
		}
		s.m.Register(bi, s.ver[bi])
	}
}

func (s *soakTable) absent() []int {
	var out []int
	for bi, ok := range s.m.Present {
		if !ok {
			out = append(out, bi)
		}
	}
	return out
}

// check compares every route body, the cluster info and the counts with
// the model. An exact body from a model that holds only live brokers also
// proves no route points at an evicted one.
func (s *soakTable) check(step string) {
	s.t.Helper()
	for i := 0; i < s.l.Topics; i++ {
		got, ok := s.tb.RouteBody(routetest.Topic(i), body.Standard)
		want := s.m.Route(i)
		if want == nil {
			if ok {
				s.t.Fatalf("%s: topic %s: route %s, want none", step, routetest.Topic(i), got)
			}
			continue
		}
		if !ok || !bytes.Equal(got, want) {
			s.t.Fatalf("%s: topic %s:\n got %s (ok=%v)\nwant %s", step, routetest.Topic(i), got, ok, want)
		}
	}
	if got, want := s.tb.AppendClusterInfo(nil), s.m.ClusterInfo(); !bytes.Equal(got, want) {
		s.t.Fatalf("%s: cluster info\n got %s\nwant %s", step, got, want)
	}
	if got, want := s.tb.Stats(), s.stats(); got != want {
		s.t.Fatalf("%s: stats %+v, want %+v", step, got, want)
	}
}

// readers read routes without a lock until stop, checking what a reader
// may demand while writers run: queue and broker data pair up in name
// order on the topic's own groups, every broker data has addresses, and
// every queue count is one the layout produces.
func (s *soakTable) readers() (stop func() error) {
	done := make(chan struct{})
	errs := make(chan error, s.l.readers)
	var wg sync.WaitGroup
	for w := 0; w < s.l.readers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for {
				select {
				case <-done:
					return
				default:
				}
				i := rng.IntN(s.l.Topics)
				r, ok := s.tb.Route(routetest.Topic(i))
				if !ok {
					continue
				}
				if err := s.wellFormed(i, r); err != nil {
					errs <- fmt.Errorf("topic %s: %w: %s", routetest.Topic(i), err, routeString(r, true))
					return
				}
			}
		}(w)
	}
	return func() error {
		close(done)
		wg.Wait()
		close(errs)
		return <-errs
	}
}

func (s *soakTable) wellFormed(i int, r *body.TopicRoute) error {
	if len(r.QueueDatas) == 0 || len(r.QueueDatas) != len(r.BrokerDatas) {
		return fmt.Errorf("%d queue datas, %d broker datas", len(r.QueueDatas), len(r.BrokerDatas))
	}
	groups := s.l.TopicGroups(i)
	for k, q := range r.QueueDatas {
		bd := r.BrokerDatas[k]
		g, ok := routetest.GroupOf(q.BrokerName)
		if !ok || !slices.Contains(groups, g) {
			return fmt.Errorf("queue on foreign group %s", q.BrokerName)
		}
		if bd.BrokerName != q.BrokerName || (k > 0 && r.QueueDatas[k-1].BrokerName >= q.BrokerName) || len(bd.Addrs) == 0 {
			return fmt.Errorf("queue %s beside broker data %+v", q.BrokerName, bd)
		}
		if q.ReadQueueNums != q.WriteQueueNums || q.ReadQueueNums < 1 || q.ReadQueueNums > 8 || q.Perm != 6 {
			return fmt.Errorf("queue %+v", q)
		}
		for _, a := range bd.Addrs {
			if a.ID > 1 || a.Addr != routetest.Addr(g, a.ID) {
				return fmt.Errorf("broker data %+v", bd)
			}
		}
	}
	return nil
}

func soakHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func TestSoakTable(t *testing.T) {
	l := soakSizeOf(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := &soakTable{t: t, l: l, m: routetest.NewModel(l.Layout), ver: make([]int, l.Brokers()), conn: make([]ConnID, l.Brokers())}
	s.ms.Store(1_700_000_000_000)
	s.tb = New(Options{}, s.ms.Load)
	rng := rand.New(rand.NewPCG(11, 13))
	all := make([]int, l.Brokers())
	for bi := range all {
		all[bi] = bi
	}
	baseline := soakHeap()

	// 1. Everything registers, then re-registers at once with a new
	// DataVersion while readers read.
	s.registerAll(all, func(int) int { return 1 })
	s.check("registered")
	peak := soakHeap()
	stop := s.readers()
	s.registerAll(all, func(int) int { return 2 })
	if err := stop(); err != nil {
		t.Fatalf("re-register: reader: %v", err)
	}
	s.check("re-registered")

	// 2. 10, 50, 100 % go: every other chosen broker expires at the scan,
	// the others lose their connection; survivors heartbeat half way.
	for _, pct := range []int{10, 50, 100} {
		step := fmt.Sprintf("%d%% gone", pct)
		s.registerAll(s.absent(), func(bi int) int { return s.ver[bi] })
		now := s.ms.Load()
		for bi := range all {
			s.tb.Heartbeat(routetest.Cluster(bi/2), routetest.Addr(bi/2, int64(bi%2)))
		}
		perm := rng.Perm(l.Brokers())
		chosen := perm[:l.Brokers()*pct/100]
		stop := s.readers()
		var expire, drop []int
		for k, bi := range chosen {
			if k%2 == 0 {
				expire = append(expire, bi)
			} else {
				drop = append(drop, bi)
			}
		}
		dropped := map[string]bool{}
		for _, bi := range drop {
			for _, ev := range s.tb.ConnClosed(s.conn[bi]) {
				if ev.Reason != ReasonConnClosed || ev.BrokerAddr != routetest.Addr(bi/2, int64(bi%2)) {
					t.Fatalf("%s: closing %d evicted %+v", step, bi, ev)
				}
				dropped[ev.BrokerAddr] = true
			}
			s.m.Remove(bi)
		}
		if len(dropped) != len(drop) {
			t.Fatalf("%s: %d evicted on close, want %d", step, len(dropped), len(drop))
		}
		s.ms.Store(now + soakTimeoutMs/2)
		for k, bi := range perm[len(chosen):] {
			cluster, addr := routetest.Cluster(bi/2), routetest.Addr(bi/2, int64(bi%2))
			if k%2 == 0 {
				if !s.tb.Heartbeat(cluster, addr) {
					t.Fatalf("%s: heartbeat of live %s refused", step, addr)
				}
			} else {
				dv := body.DataVersion{Timestamp: 1700000000000, Counter: int64(s.ver[bi])}
				if changed, _, known := s.tb.QueryDataVersion(cluster, addr, &dv); changed || !known {
					t.Fatalf("%s: data version of %s: changed=%v known=%v", step, addr, changed, known)
				}
			}
		}
		// Exactly at the deadline a broker is still live (Java compares
		// strictly); one millisecond later it is gone.
		s.ms.Store(now + soakTimeoutMs)
		if evs := s.tb.ScanExpired(); len(evs) != 0 {
			t.Fatalf("%s: scan at the deadline evicted %+v", step, evs[0])
		}
		s.ms.Store(now + soakTimeoutMs + 1)
		expired := map[string]bool{}
		for _, ev := range s.tb.ScanExpired() {
			if ev.Reason != ReasonTimeout {
				t.Fatalf("%s: eviction %+v", step, ev)
			}
			expired[ev.BrokerAddr] = true
		}
		for _, bi := range expire {
			if !expired[routetest.Addr(bi/2, int64(bi%2))] {
				t.Fatalf("%s: broker %d not evicted", step, bi)
			}
			s.m.Remove(bi)
		}
		if len(expired) != len(expire) {
			t.Fatalf("%s: %d evicted by the scan, want %d", step, len(expired), len(expire))
		}
		if err := stop(); err != nil {
			t.Fatalf("%s: reader: %v", step, err)
		}
		s.check(step)
	}

	// 3. Races, each broker of a round against itself, the racing brokers
	// of a round in distinct groups so their outcomes are independent.
	// Register vs Unregister must end as one of the two serial orders: gone
	// (and its group's queue data with it if it was the last member) or
	// present with the new version; the cluster info says which, and the
	// check then demands every route match that model exactly. Register on
	// a new connection vs the close of the old one (a reconnect) has one
	// outcome for both orders: present.
	for round := 0; round < l.raceRounds; round++ {
		for _, slaves := range []bool{false, true} {
			step := fmt.Sprintf("race round %d slaves=%v", round, slaves)
			s.registerAll(s.absent(), func(bi int) int { return s.ver[bi] })
			var racing []int
			for g := 0; g < l.Groups; g++ {
				if slaves {
					racing = append(racing, 2*g+1)
					continue
				}
				racing = append(racing, 2*g)
				if g%2 == 1 {
					s.tb.Unregister(routetest.Cluster(g), routetest.Addr(g, 1), routetest.GroupName(g), 1)
					s.m.Remove(2*g + 1)
				}
			}
			ver := 3 + round
			stop := s.readers()
			gate := make(chan struct{})
			var wg sync.WaitGroup
			errs := make([]error, len(racing))
			for k, bi := range racing {
				g, id := bi/2, int64(bi%2)
				s.next++
				reg := s.registration(bi, ver, s.next)
				s.conn[bi], s.ver[bi] = s.next, ver
				wg.Add(2)
				go func() { defer wg.Done(); <-gate; _, errs[k] = s.tb.Register(reg) }()
				go func() {
					defer wg.Done()
					<-gate
					if _, fenced := s.tb.Unregister(routetest.Cluster(g), routetest.Addr(g, id), routetest.GroupName(g), id); fenced {
						errs[k] = fmt.Errorf("unregistration of %d fenced", bi)
					}
				}()
			}
			close(gate)
			wg.Wait()
			if err := stop(); err != nil {
				t.Fatalf("%s: reader: %v", step, err)
			}
			ci, err := body.DecodeClusterInfo(s.tb.AppendClusterInfo(nil))
			if err != nil {
				t.Fatal(err)
			}
			stayed := 0
			for k, bi := range racing {
				if errs[k] != nil {
					t.Fatalf("%s: %v", step, errs[k])
				}
				if routetest.Listed(ci, bi) {
					s.m.Remove(bi)
					s.m.Register(bi, ver)
					stayed++
				} else {
					s.m.Register(bi, ver)
					s.m.Remove(bi)
				}
			}
			s.check(step)
			t.Logf("%s: %d registered, %d unregistered", step, stayed, len(racing)-stayed)
		}

		step := fmt.Sprintf("reconnect round %d", round)
		s.registerAll(s.absent(), func(bi int) int { return s.ver[bi] })
		stop := s.readers()
		gate := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, len(all))
		for bi := range all {
			old := s.conn[bi]
			s.next++
			s.conn[bi] = s.next
			reg := s.registration(bi, s.ver[bi], s.next)
			wg.Add(2)
			go func() { defer wg.Done(); <-gate; _, errs[bi] = s.tb.Register(reg) }()
			go func() { defer wg.Done(); <-gate; s.tb.ConnClosed(old) }()
		}
		close(gate)
		wg.Wait()
		if err := stop(); err != nil {
			t.Fatalf("%s: reader: %v", step, err)
		}
		for bi := range all {
			if errs[bi] != nil {
				t.Fatalf("%s: %v", step, errs[bi])
			}
		}
		s.check(step)
	}

	// The end: everyone unregisters; nothing may be left and the heap must
	// come back near the baseline (the bounds of core/server's soak: at
	// most 2.5 x the baseline, and at most a fifth of what registering
	// added, at least 2 MiB, may remain: Go maps keep their capacity).
	for bi := range all {
		g, id := bi/2, int64(bi%2)
		if s.m.Present[bi] {
			if evs, _ := s.tb.Unregister(routetest.Cluster(g), routetest.Addr(g, id), routetest.GroupName(g), id); len(evs) != 1 {
				t.Fatalf("unregister %d: %+v", bi, evs)
			}
			s.m.Remove(bi)
		}
	}
	s.check("all unregistered")
	if n := len(s.tb.TopicList()); n != 0 {
		t.Fatalf("%d topics left", n)
	}
	end := soakHeap()
	t.Logf("HeapInuse: baseline %d KiB, registered %d KiB, after unregistering %d KiB", baseline>>10, peak>>10, end>>10)
	if end > baseline*5/2 || end > baseline+max((peak-baseline)/5, 2<<20) {
		t.Fatalf("HeapInuse %d KiB after unregistering everything; baseline %d KiB, registered %d KiB", end>>10, baseline>>10, peak>>10)
	}
	runtime.KeepAlive(s.tb)
}
