// heavy_test.go checks the heavy queue: the turns it hands out (the
// lightest of a source first, none starved, the sources in turn, closed
// connections skipped), and over sockets that a heavy request delays no
// other connection's request, that replies computed before it go out
// before it waits, and that a connection waiting for its turn whose peer
// does not read is bounded and closed.

package remoting

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestPickNext(t *testing.T) {
	w := func(weight, passed int) *heavyWaiter { return &heavyWaiter{weight: weight, passed: passed} }
	f := func(want int, ws ...*heavyWaiter) {
		t.Helper()
		if got := pickNext(ws); got != want {
			t.Fatalf("picked %d, want %d", got, want)
		}
	}
	f(0, w(100, 0))
	f(2, w(900, 0), w(500, 0), w(100, 0))
	f(0, w(100, 0), w(900, 0), w(100, 0)) // the oldest of equals
	f(1, w(100, 0), w(900, maxPassed), w(50, 0))
}

// turnOrder takes the queue's single turn, queues a request for each
// (source, weight) pair one at a time (waiting for each to be queued, so
// the queue order is the list's), then releases and records who got the
// turn in what order.
func turnOrder(t *testing.T, reqs ...struct {
	ip     string
	weight int
}) []int {
	t.Helper()
	s, err := New(Options{Addr: "127.0.0.1:0", HeavySlots: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := s.heavy
	if !q.acquire(s.newConn("127.0.0.9:1", nil, nil), HeavyWeight) {
		t.Fatal("no turn on an empty queue")
	}
	got := make(chan int, len(reqs))
	for i, r := range reqs {
		c := s.newConn(r.ip+":1000", nil, nil)
		go func() {
			if q.acquire(c, r.weight) {
				got <- i
			}
		}()
		remotingtest.WaitFor(t, "request "+strconv.Itoa(i)+" queued", func() bool {
			_, waiting := q.counts(1)
			return waiting == i+1
		})
	}
	var order []int
	for range reqs {
		q.release(0)
		order = append(order, <-got)
	}
	q.release(0)
	if running, waiting := q.counts(1); running != 0 || waiting != 0 {
		t.Fatalf("after the last release: %d running, %d waiting", running, waiting)
	}
	return order
}

type weighed = struct {
	ip     string
	weight int
}

func TestHeavyQueueServesTheLightestOfASourceFirst(t *testing.T) {
	const big, medium = 8 << 20, 100 << 10
	order := turnOrder(t, weighed{"10.0.0.1", big}, weighed{"10.0.0.1", big}, weighed{"10.0.0.1", medium}, weighed{"10.0.0.1", big})
	if want := []int{2, 0, 1, 3}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	// A big one queued first is passed over at most maxPassed times.
	reqs := []weighed{{"10.0.0.1", big}}
	for range maxPassed + 2 {
		reqs = append(reqs, weighed{"10.0.0.1", medium})
	}
	order = turnOrder(t, reqs...)
	if pos := slices.Index(order, 0); pos != maxPassed {
		t.Fatalf("the big request went at position %d (%v), want %d", pos, order, maxPassed)
	}
}

// The turns go round the sources: many connections of one address get one
// turn per round, as one connection of another does.
func TestHeavyQueueGoesRoundTheSources(t *testing.T) {
	const w = HeavyWeight
	order := turnOrder(t,
		weighed{"10.0.0.1", w}, weighed{"10.0.0.1", w}, weighed{"10.0.0.1", w},
		weighed{"10.0.0.2", w}, weighed{"10.0.0.3", w}, weighed{"10.0.0.2", w})
	if want := []int{0, 3, 4, 1, 5, 2}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

// heavyServer is a listener with one heavy turn and a heavy code whose
// handler counts its calls and waits while hold is set.
type heavyServer struct {
	*Server
	mu    sync.Mutex
	calls []string // the v of each heavy request handled, in order
	hold  chan struct{}
	held  chan struct{}
	once  sync.Once
}

// release lets the held handler go on, once.
func (h *heavyServer) release() { h.once.Do(func() { close(h.hold) }) }

const codeHeavy int32 = 90

func startHeavy(t *testing.T, edit func(*Options)) (*heavyServer, *remotingtest.Logs) {
	t.Helper()
	h := &heavyServer{hold: make(chan struct{}), held: make(chan struct{}, 16)}
	s, logs := startTiny(t, func(o *Options) {
		o.HeavySlots = 1
		o.Routes = append(o.Routes, Route{Code: codeHeavy, Weigh: Heavy, Handler: func(c *Conn, req, resp *codec.Command) error {
			v, _ := req.ExtValue("v")
			h.mu.Lock()
			h.calls = append(h.calls, v)
			h.mu.Unlock()
			if v == "hold" {
				h.held <- struct{}{}
				<-h.hold
			}
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				buf := c.Buffer()
				buf.B = append(buf.B[:0], bytes.Repeat([]byte{'h'}, n)...)
				resp.Body = buf.B
			}
			resp.Remark = v
			return nil
		}})
		if edit != nil {
			edit(o)
		}
	})
	h.Server = s
	// Registered after the listener's cleanup, so it runs before it: a
	// failing test does not leave a handler waiting.
	t.Cleanup(h.release)
	return h, logs
}

func (h *heavyServer) handled() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *heavyServer) waiting() int {
	_, n := h.heavy.counts(h.heavySlots)
	return n
}

// While a heavy request holds the only turn, other connections' requests
// are answered at once, a second heavy request waits for the turn, and the
// replies a connection computed before its heavy request are sent before
// it waits.
func TestHeavyRequestWaitsAloneForItsTurn(t *testing.T) {
	h, _ := startHeavy(t, nil)
	holder := dial(t, h.Server)
	holder.Send(request(codeHeavy, 1, "v", "hold"))
	<-h.held
	if r := dial(t, h.Server).Call(request(codeEcho, 2, "v", "at once")); r.Remark != "at once" {
		t.Fatalf("a cheap request beside a heavy one: %+v", r)
	}
	w := dial(t, h.Server)
	// One write: the cheap request is answered before the heavy one waits.
	w.SendRaw(append(codec.AppendFrame(nil, request(codeEcho, 3, "v", "before")), codec.AppendFrame(nil, request(codeHeavy, 4, "v", "queued"))...))
	if r := w.MustRecv(); r.Opaque != 3 || r.Remark != "before" {
		t.Fatalf("reply before the heavy request: %+v", r)
	}
	remotingtest.WaitFor(t, "the heavy request queued", func() bool { return h.waiting() == 1 })
	if got := h.handled(); !slices.Equal(got, []string{"hold"}) {
		t.Fatalf("handled %v while the turn was held", got)
	}
	h.release()
	if r := w.MustRecv(); r.Opaque != 4 || r.Remark != "queued" {
		t.Fatalf("the queued heavy request: %+v", r)
	}
	if r := holder.MustRecv(); r.Opaque != 1 {
		t.Fatalf("the holder's reply: %+v", r)
	}
}

// A connection that closes while its heavy request waits gets no turn:
// its handler never runs.
func TestHeavyWaiterOfAClosedConnectionIsSkipped(t *testing.T) {
	h, _ := startHeavy(t, nil)
	holder := dial(t, h.Server)
	holder.Send(request(codeHeavy, 1, "v", "hold"))
	<-h.held
	nc, err := net.Dial("tcp", h.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(codec.AppendFrame(nil, request(codeHeavy, 2, "v", "gone"))); err != nil {
		t.Fatal(err)
	}
	remotingtest.WaitFor(t, "the heavy request queued", func() bool { return h.waiting() == 1 })
	nc.Close()
	remotingtest.WaitFor(t, "the close seen", func() bool {
		for _, c := range h.snapshotConns() {
			if !c.open() {
				return true
			}
		}
		return false
	})
	w := dial(t, h.Server)
	w.Send(request(codeHeavy, 3, "v", "next"))
	remotingtest.WaitFor(t, "the next heavy request queued", func() bool { return h.waiting() == 2 })
	h.release()
	if r := w.MustRecv(); r.Remark != "next" {
		t.Fatalf("the next heavy request: %+v", r)
	}
	if got := h.handled(); !slices.Equal(got, []string{"hold", "next"}) {
		t.Fatalf("handled %v, want the closed connection's request skipped", got)
	}
}

// A peer that pipelines heavy requests and reads none of the large
// answers: once the kernel's buffers are full its connection is served no
// further (the send before each wait blocks), its input stays watched, and
// it is closed when the input passes maxPendingRequestBytes, long before
// its requests are all answered.
func TestHeavyPipelinerThatDoesNotReadIsStopped(t *testing.T) {
	const answer = 256 << 10
	closed := make(chan ConnID, 1)
	h, _ := startHeavy(t, func(o *Options) {
		o.MaxPendingRequestBytes = 1 << 20
		o.WriteTimeout = time.Hour
		o.ConnClosed = func(id ConnID) { closed <- id }
	})
	h.release()
	nc, err := net.Dial("tcp", h.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(16 << 10)
	req := request(codeHeavy, 1, "v", strconv.Itoa(answer))
	req.Body = bytes.Repeat([]byte{'p'}, 4<<10)
	frame := codec.AppendFrame(nil, req)
	const sent = 4096 // 16 MiB of requests, 1 GiB of answers
	go func() {
		for range sent {
			if _, err := nc.Write(frame); err != nil {
				return
			}
		}
	}()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatalf("a pipeliner that reads nothing was not closed; %d requests handled", len(h.handled()))
	}
	if n := len(h.handled()); n >= sent/2 {
		t.Fatalf("%d of %d heavy requests handled for a peer that read none of the answers", n, sent)
	}
}

// The turns are busy at most their share of the time once their burst is
// spent: a turn freed while the credit is spent is handed out when the
// credit is back to zero, not before; within the burst nothing waits; a
// share of 1 bounds nothing. Driven by a stepped clock and timer.
func TestHeavyTurnsKeepToTheirShare(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0", HeavySlots: 2})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	var timers []time.Duration
	var fire func()
	q := newHeavyQueue(2, 0.25)
	q.now = func() time.Time { return now }
	q.after = func(d time.Duration, f func()) { timers, fire = append(timers, d), f }
	q.credit, q.creditAt = q.burst(), now
	conn := func() *Conn { return s.newConn("127.0.0.7:1", nil, nil) }
	acquired := func(c *Conn) chan bool {
		got := make(chan bool, 1)
		go func() { got <- q.acquire(c, HeavyWeight) }()
		return got
	}

	// Within the burst (2 slots x 500 ms) turns come at once.
	for range 9 {
		if !<-acquired(conn()) {
			t.Fatal("no turn")
		}
		q.release(100 * time.Millisecond)
	}
	if len(timers) != 0 {
		t.Fatalf("held back within the burst: %v", timers)
	}
	// 900 ms of 1 s spent; 300 ms more leave it 200 ms short. Turns are
	// free, yet the next request waits until 2 slots x 25 % of the time
	// made up the 200 ms: 400 ms.
	if !<-acquired(conn()) {
		t.Fatal("no turn")
	}
	q.release(300 * time.Millisecond)
	got := acquired(conn())
	remotingtest.WaitFor(t, "the request to queue", func() bool { _, w := q.counts(2); return w == 1 })
	if len(timers) != 1 || timers[0] != 400*time.Millisecond+1 {
		t.Fatalf("timers %v, want one of 400 ms", timers)
	}
	select {
	case <-got:
		t.Fatal("a turn handed out while the credit was spent")
	default:
	}
	// A second request waits too, without a second timer.
	got2 := acquired(conn())
	remotingtest.WaitFor(t, "the second request to queue", func() bool { _, w := q.counts(2); return w == 2 })
	now = now.Add(400*time.Millisecond + 1)
	fire()
	if !<-got || !<-got2 {
		t.Fatal("the held-back requests got no turn")
	}
	if len(timers) != 1 {
		t.Fatalf("timers %v, want the one", timers)
	}
	q.release(0)
	q.release(0)
	if running, waiting := q.counts(2); running != 0 || waiting != 0 {
		t.Fatalf("%d running, %d waiting", running, waiting)
	}

	// Unbounded: a turn busy for an hour holds nothing back.
	u := newHeavyQueue(1, 1)
	u.after = func(time.Duration, func()) { t.Fatal("a timer on an unbounded queue") }
	for range 3 {
		if !u.acquire(conn(), HeavyWeight) {
			t.Fatal("no turn")
		}
		u.release(time.Hour)
	}
}

// The share never holds a request back longer than heavyMaxHold: when
// heavy requests come faster than the share answers them, a registration
// would otherwise wait until its broker expired. A request that has not
// waited that long is still held back.
func TestHeavyShareHoldsNoRequestPastMaxHold(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0", HeavySlots: 1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	var timers []time.Duration
	var fire func()
	q := newHeavyQueue(1, 0.1)
	q.now = func() time.Time { return now }
	q.after = func(d time.Duration, f func()) { timers, fire = append(timers, d), f }
	q.credit, q.creditAt = q.burst(), now
	acquired := func() chan bool {
		got := make(chan bool, 1)
		c := s.newConn("127.0.0.7:1", nil, nil)
		go func() { got <- q.acquire(c, HeavyWeight) }()
		return got
	}
	queued := func(n int) {
		t.Helper()
		remotingtest.WaitFor(t, "the request to queue", func() bool { _, w := q.counts(1); return w == n })
	}

	// 10 s of work: at a tenth, 95 s of debt to make up.
	if !<-acquired() {
		t.Fatal("no turn")
	}
	q.release(10 * time.Second)
	got := acquired()
	queued(1)
	if len(timers) != 1 || timers[0] != heavyMaxHold {
		t.Fatalf("timers %v, want one of heavyMaxHold (%v)", timers, heavyMaxHold)
	}
	now = now.Add(heavyMaxHold - time.Millisecond)
	q.mu.Lock()
	q.handLocked()
	q.mu.Unlock()
	if len(got) != 0 {
		t.Fatal("a request was handed its turn before heavyMaxHold with the credit spent")
	}
	now = now.Add(time.Millisecond)
	fire()
	if !<-got {
		t.Fatal("the overdue request got no turn")
	}
	// The next one, just queued, is held back again.
	got = acquired()
	q.release(0)
	queued(1)
	if len(got) != 0 || len(timers) != 2 {
		t.Fatalf("a fresh request was not held back (timers %v)", timers)
	}
	now = now.Add(heavyMaxHold)
	fire()
	if !<-got {
		t.Fatal("the second overdue request got no turn")
	}
	q.release(0)
}
