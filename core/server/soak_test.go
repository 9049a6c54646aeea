//go:build e2e

// soak_test.go is the chaos and soak suite over the wire: simulated brokers
// and route readers against an in-process server, checked after every step
// against a plain model of what the tables must hold: routetest's, the one
// core/route's soak test holds the bare table to.
//
// Size: skipped under -short. By default (make test) it runs a small layout
// (30 brokers, 1000 topics) that takes a few seconds; with ROCKETNS_SOAK=1
// (make soak) it runs the full one: 300 brokers x 10k topics.
//
// Time: the server's route table gets a fake clock and the test runs the
// liveness scan itself, so expiry is exact and needs no waiting. Connection
// drops are noticed by netpoll on its own goroutines; the test waits for the
// server's "broker removed" log records (an event, not a timer) and, for
// plain client connections, for the connection count to settle.

package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/route/routetest"
)

// soakEnv switches the suite to its full size.
const soakEnv = "ROCKETNS_SOAK"

// soakLayout is the simulated cluster (routetest.Layout: groups of a master
// and a slave, every topic on `replicas` groups, so every topic lives on
// several brokers) and the load the suite puts on it.
type soakLayout struct {
	routetest.Layout
	readers    int // concurrent route readers during changes
	storm      int // client connections opened and closed per storm
	raceRounds int
}

func soakSizeOf(t *testing.T) soakLayout {
	t.Helper()
	if testing.Short() {
		t.Skip("soak suite skipped under -short")
	}
	if os.Getenv(soakEnv) != "" {
		return soakLayout{Layout: routetest.Layout{Groups: 150, Topics: 10000, Replicas: 3}, readers: 8, storm: 2000, raceRounds: 2}
	}
	return soakLayout{Layout: routetest.Layout{Groups: 15, Topics: 1000, Replicas: 3}, readers: 4, storm: 200, raceRounds: 2}
}

// soakAddrRE finds every broker address in a body, for the "no route to an
// evicted broker" check.
var soakAddrRE = regexp.MustCompile(`10\.\d+\.\d+\.\d+:10911`)

// soakClock is the route table's time.
type soakClock struct{ ms atomic.Int64 }

func (c *soakClock) now() int64           { return c.ms.Load() }
func (c *soakClock) advance(ms int64)     { c.ms.Add(ms) }
func newSoakClock(start int64) *soakClock { c := &soakClock{}; c.ms.Store(start); return c }

// evictionLog is a slog handler that records the server's "broker removed"
// lines, so the test can wait for evictions the server does on netpoll's
// goroutines (connection close) without polling a timer.
type evictionLog struct {
	mu      sync.Mutex
	removed map[string]string // addr -> reason, since the last reset
	signal  chan struct{}
}

func newEvictionLog() *evictionLog {
	return &evictionLog{removed: map[string]string{}, signal: make(chan struct{}, 1)}
}

func (h *evictionLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *evictionLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *evictionLog) WithGroup(string) slog.Handler                { return h }

func (h *evictionLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "broker removed" {
		return nil
	}
	var addr, reason string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "addr":
			addr = a.Value.String()
		case "reason":
			reason = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.removed[addr] = reason
	h.mu.Unlock()
	select {
	case h.signal <- struct{}{}:
	default:
	}
	return nil
}

func (h *evictionLog) reset() {
	h.mu.Lock()
	clear(h.removed)
	h.mu.Unlock()
}

// wait blocks until every addr was removed for reason since the last reset.
func (h *evictionLog) wait(addrs []string, reason string, limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		h.mu.Lock()
		var missing []string
		for _, a := range addrs {
			if r, ok := h.removed[a]; !ok {
				missing = append(missing, a)
			} else if r != reason {
				h.mu.Unlock()
				return fmt.Errorf("broker %s removed for %q, want %q", a, r, reason)
			}
		}
		h.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-h.signal:
		case <-timer.C:
			return fmt.Errorf("%d brokers not removed after %v, first %s", len(missing), limit, missing[0])
		}
	}
}

// soakBroker is one simulated broker and its own connection.
type soakBroker struct {
	idx int
	b   client.Broker
	c   *client.Client
	ver int // DataVersion counter of its last registration
}

// soakRun holds one run of the suite.
type soakRun struct {
	t       *testing.T
	l       soakLayout
	s       *Server
	clk     *soakClock
	evs     *evictionLog
	m       *routetest.Model
	bs      []*soakBroker
	admin   []*client.Client // for unregistrations, route checks and cluster info
	ver     int              // the newest DataVersion counter handed out
	rng     *rand.Rand
	readMu  sync.Mutex
	readErr error // the first failure of a concurrent reader
}

// readerFailed records a reader's failure for the next check to report:
// readers outlive no step, but t.Fatal belongs to the test goroutine.
func (r *soakRun) readerFailed(err error) {
	r.readMu.Lock()
	if r.readErr == nil {
		r.readErr = err
	}
	r.readMu.Unlock()
}

// stats is what the table's Stats must say. The model has no separate
// liveness: a broker that goes leaves both tables, so Live is the address
// count.
func (r *soakRun) stats() route.Stats {
	c := r.m.Counts()
	return route.Stats{Clusters: c.Clusters, BrokerGroups: c.BrokerGroups, BrokerAddrs: c.BrokerAddrs, Topics: c.Topics, Live: c.BrokerAddrs}
}

const (
	soakTimeout = int64(30000) // heartbeatTimeoutMillis the brokers send
	soakCall    = remotingtest.Hang
)

func soakCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), soakCall)
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func (r *soakRun) registration(bi, version int) *body.RegisterBroker {
	g := bi / 2
	rb := &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: 1700000000000, Counter: int64(version)},
		Topics:           make([]body.TopicConfig, 0, len(r.m.GroupTopics[g])),
	}
	for _, i := range r.m.GroupTopics[g] {
		n := routetest.Queues(i, version)
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: routetest.Topic(i), ReadQueueNums: n, WriteQueueNums: n, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	}
	return rb
}

func (r *soakRun) dialBroker(b *soakBroker) error {
	ctx, cancel := soakCtx()
	defer cancel()
	c, err := client.Dial(ctx, r.s.Addr())
	if err != nil {
		return err
	}
	b.c = c
	return nil
}

// register sends b's registration with version over its own connection.
func (r *soakRun) register(b *soakBroker, version int) error {
	ctx, cancel := soakCtx()
	defer cancel()
	if _, _, err := b.c.RegisterBroker(ctx, b.b, r.registration(b.idx, version)); err != nil {
		return err
	}
	b.ver = version
	return nil
}

func (r *soakRun) unregister(b *soakBroker) error {
	ctx, cancel := soakCtx()
	defer cancel()
	return r.admin[b.idx%len(r.admin)].UnregisterBroker(ctx, b.b)
}

// refresh renews the liveness of the given brokers at the current fake
// time: a oneway heartbeat, then a data-version query on the same
// connection whose answer proves the heartbeat was applied (one connection's
// requests are handled in order).
func (r *soakRun) refresh(idx []int) error {
	return parallel(len(idx), 32, func(k int) error {
		b := r.bs[idx[k]]
		if err := b.c.Heartbeat(b.b); err != nil {
			return err
		}
		ctx, cancel := soakCtx()
		defer cancel()
		changed, err := b.c.QueryDataVersion(ctx, b.b, body.DataVersion{Timestamp: 1700000000000, Counter: int64(b.ver)})
		if err != nil {
			return err
		}
		if changed {
			return fmt.Errorf("broker %s/%d: data version reported changed", b.b.Name, b.b.ID)
		}
		return nil
	})
}

func (r *soakRun) presentIdx() []int {
	var out []int
	for bi, ok := range r.m.Present {
		if ok {
			out = append(out, bi)
		}
	}
	return out
}

// restore registers every absent broker (on a new connection if its own was
// dropped) with its last version, and renews everyone's liveness.
func (r *soakRun) restore() {
	r.t.Helper()
	var absent []int
	for bi, ok := range r.m.Present {
		if !ok {
			absent = append(absent, bi)
		}
	}
	err := parallel(len(absent), 32, func(k int) error {
		b := r.bs[absent[k]]
		if b.c == nil {
			if err := r.dialBroker(b); err != nil {
				return err
			}
		}
		return r.register(b, b.ver)
	})
	if err != nil {
		r.t.Fatalf("restore: %v", err)
	}
	for _, bi := range absent {
		r.m.Register(bi, r.bs[bi].ver)
	}
	if err := r.refresh(r.presentIdx()); err != nil {
		r.t.Fatalf("restore: %v", err)
	}
}

// check compares everything the server answers with the model: every
// topic's route byte for byte, the cluster info, the table's counts, and no
// address in any route that the model does not hold.
func (r *soakRun) check(step string) {
	r.t.Helper()
	t0 := time.Now()
	defer func() { r.t.Logf("check %s: %v", step, time.Since(t0)) }()
	live := r.m.LiveAddrs()
	err := parallel(r.l.Topics, len(r.admin), func(i int) error {
		ctx, cancel := soakCtx()
		defer cancel()
		code, remark, got, err := r.admin[i%len(r.admin)].RouteBody(ctx, routetest.Topic(i), codec.ServerVersion)
		if err != nil {
			return err
		}
		want := r.m.Route(i)
		if bytes.Equal(got, want) {
			// The model holds only live brokers, so an exact match also
			// proves there is no route to an evicted one.
			return nil
		}
		for _, a := range soakAddrRE.FindAll(got, -1) {
			if !live[string(a)] {
				return fmt.Errorf("topic %s: route to evicted broker %s", routetest.Topic(i), a)
			}
		}
		if want == nil {
			if code != codec.TopicNotExist {
				return fmt.Errorf("topic %s: code %d %q body %s, want TOPIC_NOT_EXIST", routetest.Topic(i), code, remark, got)
			}
			return nil
		}
		if code != codec.Success || !bytes.Equal(got, want) {
			return fmt.Errorf("topic %s: code %d %q\n got %s\nwant %s", routetest.Topic(i), code, remark, got, want)
		}
		return nil
	})
	if err != nil {
		r.t.Fatalf("%s: %v", step, err)
	}
	ctx, cancel := soakCtx()
	defer cancel()
	resp, err := r.admin[0].Invoke(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo, Version: codec.ServerVersion})
	if err != nil {
		r.t.Fatalf("%s: cluster info: %v", step, err)
	}
	if want := r.m.ClusterInfo(); !bytes.Equal(resp.Body, want) {
		r.t.Fatalf("%s: cluster info\n got %s\nwant %s", step, resp.Body, want)
	}
	if got, want := r.s.Routes().Stats(), r.stats(); got != want {
		r.t.Fatalf("%s: table stats %+v, want %+v", step, got, want)
	}
	r.readMu.Lock()
	err = r.readErr
	r.readMu.Unlock()
	if err != nil {
		r.t.Fatalf("%s: concurrent reader: %v", step, err)
	}
}

// wellFormed is what a reader may demand of a route while the tables change
// under it: queue and broker data pair up in name order, on the topic's own
// groups, with addresses and queue counts the layout can produce.
func (r *soakRun) wellFormed(i int, code int32, payload []byte) error {
	if code == codec.TopicNotExist {
		return nil
	}
	if code != codec.Success {
		return fmt.Errorf("code %d", code)
	}
	tr, err := body.DecodeTopicRoute(payload)
	if err != nil {
		return err
	}
	groups := r.l.TopicGroups(i)
	if len(tr.QueueDatas) == 0 || len(tr.QueueDatas) != len(tr.BrokerDatas) {
		return fmt.Errorf("%d queue datas, %d broker datas", len(tr.QueueDatas), len(tr.BrokerDatas))
	}
	for k, q := range tr.QueueDatas {
		bd := tr.BrokerDatas[k]
		if bd.BrokerName != q.BrokerName || (k > 0 && tr.QueueDatas[k-1].BrokerName >= q.BrokerName) {
			return fmt.Errorf("queue %s beside broker %s", q.BrokerName, bd.BrokerName)
		}
		g, ok := routetest.GroupOf(q.BrokerName)
		if !ok || !slices.Contains(groups, g) {
			return fmt.Errorf("queue on foreign group %s", q.BrokerName)
		}
		if q.ReadQueueNums != q.WriteQueueNums || q.ReadQueueNums < 1 || q.ReadQueueNums > 8 || q.Perm != 6 || q.TopicSysFlag != 0 {
			return fmt.Errorf("queue %+v", q)
		}
		if bd.Cluster != routetest.Cluster(g) || len(bd.Addrs) == 0 {
			return fmt.Errorf("broker data %+v", bd)
		}
		for _, a := range bd.Addrs {
			if a.ID > 1 || a.Addr != routetest.Addr(g, a.ID) {
				return fmt.Errorf("broker data %+v", bd)
			}
		}
	}
	return nil
}

// readers runs route readers until the returned stop is called; each reader
// has its own connection and checks every answer with wellFormed.
func (r *soakRun) readers() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < r.l.readers; w++ {
		ctx, cancel := soakCtx()
		c, err := client.Dial(ctx, r.s.Addr())
		cancel()
		if err != nil {
			r.t.Fatalf("reader dial: %v", err)
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			defer c.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				select {
				case <-done:
					return
				default:
				}
				i := rng.IntN(r.l.Topics)
				ctx, cancel := soakCtx()
				code, _, payload, err := c.RouteBody(ctx, routetest.Topic(i), codec.ServerVersion)
				cancel()
				if err == nil {
					err = r.wellFormed(i, code, payload)
				}
				if err != nil {
					r.readerFailed(fmt.Errorf("topic %s: %w", routetest.Topic(i), err))
					return
				}
			}
		}(w)
	}
	return func() { close(done); wg.Wait() }
}

// connCount waits until the server holds want connections. netpoll notices
// a peer's close on its own goroutine, so this is a condition wait with a
// deadline; the count itself is exact.
func (r *soakRun) connCount(want int) {
	r.t.Helper()
	deadline := time.Now().Add(remotingtest.Hang)
	for {
		got := r.s.connCount()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("server holds %d connections, want %d", got, want)
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
	}
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	// Two cycles: sync.Pool contents (codec and netpoll buffers) survive
	// the first one in the victim cache.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// The memory bounds after everything is unregistered and the brokers'
// connections are closed, against the baseline taken after a warm-up with
// the same admin connections open and nothing registered. What stays above
// the baseline are process-wide caches of the libraries that never shrink
// (netpoll's operator cache sized by the peak connection count, the JSON
// decoders' compiled programs) and Go maps' spare capacity; measured at
// 300 brokers x 10k topics: baseline ~3 MiB, registered ~29 MiB, after ~6 MiB
// with -race. So: at most soakMemFactor x the baseline, and at most
// soakMemKeep of what registering added (at least soakMemFloor) may remain.
const (
	soakMemFactor = 2.5
	soakMemKeep   = 0.2
	soakMemFloor  = 2 << 20
)

// netpollPoller is netpoll's process-wide poller: started once by its
// global poll manager on first use and never stopped. It is the only
// goroutine the leak check ignores besides those alive before the test. Its
// top frame is the bare epoll syscall, too generic to match on, so it is
// matched by this function anywhere in its stack.
const netpollPoller = "github.com/cloudwego/netpoll.(*defaultPoll).Wait"

func TestSoak(t *testing.T) {
	l := soakSizeOf(t)
	leakOpts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction(netpollPoller)}
	start := time.Now()

	cfg := testConfig(t)
	// The test runs the scan itself, against the fake clock.
	cfg.ScanNotActiveBrokerInterval = int64(time.Hour / time.Millisecond)
	// A full run with -race takes minutes; a broker connection quiet
	// through a long check must not be closed as idle.
	cfg.ServerChannelMaxIdleTimeSeconds = 3600
	evs := newEvictionLog()
	s, err := New(cfg, slog.New(evs))
	if err != nil {
		t.Fatal(err)
	}
	clk := newSoakClock(1_700_000_000_000)
	s.routes = route.New(route.Options{
		SupportActingMaster:               cfg.SupportActingMaster,
		DeleteTopicWithBrokerRegistration: cfg.DeleteTopicWithBrokerRegistration,
	}, clk.now)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	r := &soakRun{t: t, l: l, s: s, clk: clk, evs: evs, m: routetest.NewModel(l.Layout), rng: rand.New(rand.NewPCG(5, 9))}
	defer func() {
		// On failure: close what is open so the next test starts clean.
		if t.Failed() {
			for _, b := range r.bs {
				if b.c != nil {
					b.c.Close()
				}
			}
			for _, c := range r.admin {
				c.Close()
			}
			if !s.closing.Load() {
				shutdown()
			}
		}
	}()

	for k := 0; k < 8; k++ {
		ctx, cancel := soakCtx()
		c, err := client.Dial(ctx, s.Addr())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		r.admin = append(r.admin, c)
	}
	r.warmUp()
	baseline := heapInuse()
	t.Logf("layout: %d brokers, %d topics on %d groups each; baseline HeapInuse %d KiB", l.Brokers(), l.Topics, l.Replicas, baseline>>10)
	for bi := 0; bi < l.Brokers(); bi++ {
		g, id := bi/2, int64(bi%2)
		b := &soakBroker{idx: bi, b: client.Broker{
			Cluster: routetest.Cluster(g), Name: routetest.GroupName(g), Addr: routetest.Addr(g, id), HAAddr: routetest.HAAddr(g, id),
			ID: id, HeartbeatTimeoutMillis: soakTimeout, Compressed: g%2 == 1,
		}}
		if err := r.dialBroker(b); err != nil {
			t.Fatal(err)
		}
		r.bs = append(r.bs, b)
	}

	// 1. Register everything, then re-register everything at once with a
	// new DataVersion (every queue count changes) while readers read.
	r.ver = 1
	if err := parallel(len(r.bs), 32, func(bi int) error { return r.register(r.bs[bi], r.ver) }); err != nil {
		t.Fatalf("register: %v", err)
	}
	for bi := range r.bs {
		r.m.Register(bi, r.ver)
	}
	r.check("registered")
	peak := heapInuse()

	stop := r.readers()
	r.ver++
	if err := parallel(len(r.bs), len(r.bs), func(bi int) error { return r.register(r.bs[bi], r.ver) }); err != nil {
		t.Fatalf("re-register: %v", err)
	}
	stop()
	for bi := range r.bs {
		r.m.Register(bi, r.ver)
	}
	r.check("re-registered")

	// 2. 10, 50 and 100 % of the brokers go: every other chosen one stops
	// heartbeating and expires at the scan, the others drop their
	// connection. The survivors heartbeat half way through the timeout.
	for _, pct := range []int{10, 50, 100} {
		step := fmt.Sprintf("%d%% gone", pct)
		r.restore()
		r.check(step + ": restored")
		perm := r.rng.Perm(len(r.bs))
		chosen := perm[:len(r.bs)*pct/100]
		var expire, drop []int
		for k, bi := range chosen {
			if k%2 == 0 {
				expire = append(expire, bi)
			} else {
				drop = append(drop, bi)
			}
		}
		stop := r.readers()
		evs.reset()
		var dropAddrs []string
		for _, bi := range drop {
			b := r.bs[bi]
			b.c.Close()
			b.c = nil
			dropAddrs = append(dropAddrs, b.b.Addr)
		}
		if err := evs.wait(dropAddrs, route.ReasonConnClosed, remotingtest.Hang); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for _, bi := range drop {
			r.m.Remove(bi)
		}
		r.clk.advance(soakTimeout / 2)
		survivors := append([]int(nil), perm[len(chosen):]...)
		if err := r.refresh(survivors); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		r.clk.advance(soakTimeout/2 + 1)
		got := map[string]bool{}
		for _, ev := range s.Routes().ScanExpired() {
			if ev.Reason != route.ReasonTimeout {
				t.Fatalf("%s: eviction %+v", step, ev)
			}
			got[ev.BrokerAddr] = true
			s.logEviction(ev)
		}
		want := map[string]bool{}
		for _, bi := range expire {
			want[r.bs[bi].b.Addr] = true
			r.m.Remove(bi)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: scan evicted %d brokers, want %d", step, len(got), len(want))
		}
		for a := range want {
			if !got[a] {
				t.Fatalf("%s: %s not evicted", step, a)
			}
		}
		stop()
		r.check(step)
		t.Logf("%s: %d expired, %d dropped", step, len(expire), len(drop))
	}

	// 3. Registration against unregistration of the same broker, at once.
	// Round A races every master (half the groups without their slave, so
	// the orders differ in queue data too); round B races every slave. The
	// racing brokers of a round are in distinct groups, so the tables must
	// end as the model does after, for each broker on its own, one of the
	// two serial orders: register then unregister (broker gone; its group's
	// queue data gone with the group's last member) or unregister then
	// register (broker present with the new version). The broker's presence
	// in the cluster info says which order happened; check then demands every
	// route, the cluster info and the counts match that model exactly, so no
	// half-applied mix passes.
	for round := 0; round < l.raceRounds; round++ {
		for _, slaves := range []bool{false, true} {
			step := fmt.Sprintf("race round %d slaves=%v", round, slaves)
			r.restore()
			var racing []int
			for g := 0; g < l.Groups; g++ {
				if slaves {
					racing = append(racing, 2*g+1)
					continue
				}
				racing = append(racing, 2*g)
				if g%2 == 1 {
					if err := r.unregister(r.bs[2*g+1]); err != nil {
						t.Fatal(err)
					}
					r.m.Remove(2*g + 1)
				}
			}
			r.ver++
			if err := r.race(racing); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			ci := r.clusterInfo()
			gone, stayed := 0, 0
			for _, bi := range racing {
				if routetest.Listed(ci, bi) {
					r.m.Remove(bi)
					r.m.Register(bi, r.ver)
					stayed++
				} else {
					r.m.Register(bi, r.ver)
					r.m.Remove(bi)
					gone++
				}
			}
			r.check(step)
			t.Logf("%s: %d ended registered, %d unregistered", step, stayed, gone)
		}
	}

	// 4. Reconnect storms. First clients alone, which must read exact
	// routes; then clients together with a quarter of the brokers dropping
	// their connection and re-registering on a new one, while readers check
	// that every route stays well formed.
	r.restore()
	r.check("before storm")
	conns := r.s.connCount()
	if err := r.storm(true); err != nil {
		t.Fatalf("client storm: %v", err)
	}
	r.connCount(conns)
	r.check("client storm")

	stop = r.readers()
	perm := r.rng.Perm(len(r.bs))[:len(r.bs)/4]
	stormErr := make(chan error, 1)
	go func() { stormErr <- r.storm(false) }()
	err = parallel(len(perm), len(perm), func(k int) error {
		b := r.bs[perm[k]]
		b.c.Close()
		if err := r.dialBroker(b); err != nil {
			return err
		}
		return r.register(b, b.ver)
	})
	if serr := <-stormErr; serr != nil {
		t.Fatalf("client storm with broker reconnects: %v", serr)
	}
	stop()
	if err != nil {
		t.Fatalf("broker reconnect storm: %v", err)
	}
	r.connCount(conns)
	r.check("broker reconnect storm")

	// The end: every broker unregisters; nothing may be left, and the heap
	// must come back near the baseline.
	if err := parallel(len(r.bs), 32, func(bi int) error { return r.unregister(r.bs[bi]) }); err != nil {
		t.Fatalf("unregister all: %v", err)
	}
	for bi := range r.bs {
		r.m.Remove(bi)
	}
	r.check("all unregistered")
	if got := s.Routes().TopicList(); len(got) != 0 {
		t.Fatalf("topics left: %d, first %s", len(got), got[0])
	}
	// Closed clients keep their write buffers (a registration frame each):
	// drop them, or the test's own memory would count against the server.
	for _, b := range r.bs {
		b.c.Close()
		b.c = nil
	}
	r.connCount(len(r.admin))
	end := heapInuse()
	t.Logf("HeapInuse: baseline %d KiB, registered %d KiB, after unregistering %d KiB", baseline>>10, peak>>10, end>>10)
	if limit := uint64(float64(baseline) * soakMemFactor); end > limit {
		t.Fatalf("HeapInuse %d KiB after unregistering everything, over %.1f x the baseline %d KiB", end>>10, soakMemFactor, baseline>>10)
	}
	if keep := max(uint64(float64(peak-baseline)*soakMemKeep), soakMemFloor); end > baseline+keep {
		t.Fatalf("HeapInuse %d KiB after unregistering everything: more than %d KiB above the baseline %d KiB (registered: %d KiB)",
			end>>10, keep>>10, baseline>>10, peak>>10)
	}
	for _, c := range r.admin {
		c.Close()
	}
	shutdown()
	goleak.VerifyNone(t, leakOpts...)
	t.Logf("soak done in %v", time.Since(start).Round(time.Millisecond))
}

// clusterInfo fetches and decodes the cluster info.
func (r *soakRun) clusterInfo() *body.ClusterInfo {
	r.t.Helper()
	ctx, cancel := soakCtx()
	defer cancel()
	ci, err := r.admin[0].ClusterInfo(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return ci
}

// storm opens and closes r.l.storm client connections from 8 goroutines.
// A connection reads a few routes (exact against the model when exact,
// well formed otherwise) and closes; every fourth sends a request and
// closes without reading the answer, every seventh closes without a word.
func (r *soakRun) storm(exact bool) error {
	req := &codec.Command{Code: codec.GetRouteInfoByTopic, Version: codec.ServerVersion}
	req.SetExt("topic", routetest.Topic(0))
	frame := codec.AppendFrame(nil, req)
	return parallel(r.l.storm, 8, func(k int) error {
		switch {
		case k%7 == 3:
			nc, err := net.Dial("tcp", r.s.Addr())
			if err != nil {
				return err
			}
			return nc.Close()
		case k%4 == 1:
			nc, err := net.Dial("tcp", r.s.Addr())
			if err != nil {
				return err
			}
			if _, err := nc.Write(frame); err != nil {
				nc.Close()
				return err
			}
			return nc.Close()
		}
		ctx, cancel := soakCtx()
		defer cancel()
		c, err := client.Dial(ctx, r.s.Addr())
		if err != nil {
			return err
		}
		defer c.Close()
		for j := 0; j < 3; j++ {
			i := (k*31 + j*977) % r.l.Topics
			code, remark, got, err := c.RouteBody(ctx, routetest.Topic(i), codec.ServerVersion)
			if err != nil {
				return err
			}
			if !exact {
				if err := r.wellFormed(i, code, got); err != nil {
					return fmt.Errorf("topic %s: %w", routetest.Topic(i), err)
				}
				continue
			}
			want := r.m.Route(i)
			if want == nil && code == codec.TopicNotExist {
				continue
			}
			if code != codec.Success || !bytes.Equal(got, want) {
				return fmt.Errorf("topic %s: code %d %q\n got %s\nwant %s", routetest.Topic(i), code, remark, got, want)
			}
		}
		return nil
	})
}

// race registers (with r.ver) and unregisters each broker of racing at the
// same time: both requests of every pair wait on one gate, on connections
// of their own.
func (r *soakRun) race(racing []int) error {
	gate := make(chan struct{})
	errs := make(chan error, 2*len(racing))
	var wg sync.WaitGroup
	for _, bi := range racing {
		b := r.bs[bi]
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-gate
			errs <- r.register(b, r.ver)
		}()
		go func() {
			defer wg.Done()
			<-gate
			errs <- r.unregister(b)
		}()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// warmUp registers, reads and unregisters one plain and one compressed
// broker over an admin connection, so one-time caches (the JSON decoders'
// compiled programs, pools) are in the memory baseline, not in the result.
func (r *soakRun) warmUp() {
	r.t.Helper()
	ctx, cancel := soakCtx()
	defer cancel()
	c := r.admin[0]
	for g := 0; g < 2; g++ {
		b := client.Broker{Cluster: routetest.Cluster(g), Name: routetest.GroupName(g), Addr: routetest.Addr(g, 0), Compressed: g == 1}
		if _, _, err := c.RegisterBroker(ctx, b, r.registration(2*g, 0)); err != nil {
			r.t.Fatalf("warm up: %v", err)
		}
		if _, err := c.Route(ctx, routetest.Topic(r.m.GroupTopics[g][0])); err != nil {
			r.t.Fatalf("warm up: %v", err)
		}
		if _, err := c.ClusterInfo(ctx); err != nil {
			r.t.Fatalf("warm up: %v", err)
		}
		if err := c.UnregisterBroker(ctx, b); err != nil {
			r.t.Fatalf("warm up: %v", err)
		}
	}
	r.check("warmed up")
}
