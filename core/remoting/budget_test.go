// budget_test.go checks the buffered-bytes budget: its accounting as
// logic, and over sockets peers that declare large frames and send them
// slowly, and peers that pipeline and never read; the collection it starts
// after a release.

package remoting

import (
	"bytes"
	"net"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// The accounting as a script: each step sets one account and says what
// must follow.
func TestBudgetAccounting(t *testing.T) {
	b := NewBudget(100)
	accts := map[string]*account{}
	closed := ""
	acct := func(name string) *account {
		if a, ok := accts[name]; ok {
			return a
		}
		a := &account{}
		a.evict = func() { closed += name }
		accts[name] = a
		return a
	}
	f := func(name string, n int64, wantOK bool, wantEvicted string, wantUsed int64) {
		t.Helper()
		closed = ""
		ok, victims := b.set(acct(name), n)
		for _, v := range victims {
			v.evict()
		}
		if ok != wantOK || closed != wantEvicted || b.Stats().Used != wantUsed {
			t.Fatalf("set %s to %d: ok %v evicted %q used %d, want %v %q %d",
				name, n, ok, closed, b.Stats().Used, wantOK, wantEvicted, wantUsed)
		}
	}
	f("a", 60, true, "", 60)
	f("b", 30, true, "", 90)
	f("c", 60, false, "", 90) // nobody larger than 60 to give way
	f("c", 20, true, "a", 50) // a (60) is larger: it goes
	f("a", 10, false, "", 50) // evicted: refused until it is emptied
	f("a", 0, true, "", 50)   // emptied (its connection closed)
	f("b", 80, true, "", 100) // growing in place within the limit
	f("d", 30, true, "b", 50) // b (80) makes room for d
	f("c", 5, true, "", 35)   // shrinking always fits
	f("e", 65, true, "", 100) // exactly the limit
	f("f", 1, true, "e", 36)  // one byte over: the largest goes
	if st := b.Stats(); st.Refused != 1 || st.Evicted != 3 || st.Limit != 100 || st.Peak != 100 {
		t.Fatalf("stats %+v, want 1 refused, 3 evicted, limit and peak 100", st)
	}
	if got := (*Budget)(nil).Stats(); got != (BudgetStats{}) {
		t.Fatalf("nil budget stats %+v", got)
	}
	if NewBudget(0) != nil {
		t.Fatal("a zero limit is no budget")
	}
}

// Peers that send all but the end of a large frame: each declared frame is
// reserved before its body is waited for. One that does not fit is closed
// when nobody larger holds the budget, and makes the largest holder go when
// it is smaller; a small request is served throughout.
func TestBudgetReservesDeclaredFrames(t *testing.T) {
	const mib = 1 << 20
	s, logs := startTiny(t, func(o *Options) {
		o.Budget = NewBudget(6 * mib) // input is charged twice over (inputCost)
	})
	used := func() int64 { return s.Stats().Budget.Used }
	partial := func(opaque int32, size int) (*remotingtest.Wire, []byte) {
		w := dial(t, s)
		f := remotingtest.Padded(t, request(codeEcho, opaque, "v", "big"), size)
		// A refused connection is shut while this is being written.
		w.NC.Write(f[:len(f)-16])
		return w, f[len(f)-16:]
	}

	a, _ := partial(1, 2*mib)
	remotingtest.WaitFor(t, "a's frame reserved", func() bool { return used() == 4*mib })

	b, _ := partial(2, 2*mib)
	if !b.ClosedByPeer() {
		t.Fatal("a second 2 MiB frame was served within a 6 MiB budget")
	}
	if used() != 4*mib {
		t.Fatalf("budget used %d after the refusal, want %d", used(), 4*mib)
	}

	// Small requests need no reservation and are served.
	probe := dial(t, s)
	if resp := probe.Call(request(codeEcho, 3, "v", "ok")); resp.Remark != "ok" {
		t.Fatalf("probe answered %q", resp.Remark)
	}

	// A 1.5 MiB frame does not fit beside a's 2 MiB, and a holds more:
	// a is closed, c is served once its frame is complete.
	c, rest := partial(4, 3*mib/2)
	if !a.ClosedByPeer() {
		t.Fatal("the largest holder was not closed for a smaller frame")
	}
	remotingtest.WaitFor(t, "c's frame reserved", func() bool { return used() == 3*mib })
	c.SendRaw(rest)
	if resp := c.MustRecv(); resp.Remark != "big" || resp.Opaque != 4 {
		t.Fatalf("c answered %q opaque %d", resp.Remark, resp.Opaque)
	}
	remotingtest.WaitFor(t, "c's reservation released", func() bool { return used() == 0 })

	st := s.Stats().Budget
	if st.Refused != 1 || st.Evicted != 1 {
		t.Fatalf("budget stats %+v, want 1 refused and 1 evicted", st)
	}
	if !strings.Contains(logs.String(), "buffered bytes over budget") {
		t.Fatalf("no log line for the refusals:\n%s", logs)
	}
}

// A peer that pipelines requests and never reads the answers: its flush
// blocks, netpoll keeps buffering its requests, and the watch of the
// blocked flush closes it once what it holds passes the budget, long
// before the write timeout would.
func TestBudgetClosesPipelinerThatNeverReads(t *testing.T) {
	const budget = 8 << 20
	closed := make(chan ConnID, 16)
	s, logs := startTiny(t, func(o *Options) {
		o.Budget = NewBudget(budget)
		o.MaxPendingRequestBytes = 1 << 30
		o.MaxPendingResponseBytes = 1 << 20
		o.WriteTimeout = time.Hour
		o.ConnClosed = func(id ConnID) { closed <- id }
	})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(16 << 10)
	req := request(codeBig, 1, "n", strconv.Itoa(64<<10))
	req.Body = bytes.Repeat([]byte{'p'}, 8<<10) // requests that fill the input fast
	frame := codec.AppendFrame(nil, req)
	batch := bytes.Repeat(frame, 1024)
	wrote := make(chan error, 1)
	go func() {
		for {
			if _, err := nc.Write(batch); err != nil {
				wrote <- err
				return
			}
		}
	}()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("a peer that never reads was not closed")
	}
	if err := <-wrote; err == nil {
		t.Fatal("writes went on after the close")
	}
	if !strings.Contains(logs.String(), "buffered bytes over budget") {
		t.Fatalf("no over-budget log line:\n%s", logs)
	}
	if st := s.Stats().Budget; st.Refused == 0 || st.Used != 0 {
		t.Fatalf("budget stats %+v, want a refusal and nothing held", st)
	}
	if resp := dial(t, s).Call(request(codeEcho, 2, "v", "ok")); resp.Remark != "ok" {
		t.Fatalf("other connection answered %q", resp.Remark)
	}
}

func TestMaxConnectionsPerIPRefusesBeyondTheLimit(t *testing.T) {
	closed := make(chan ConnID, 8)
	var maxConnEvents atomic.Int32
	s, logs := startTiny(t, func(o *Options) {
		o.MaxConnections = 100
		o.MaxConnectionsPerIP = 2
		o.ConnClosed = func(id ConnID) { closed <- id }
		o.Events.ConnRefused = func() { maxConnEvents.Add(1) }
	})
	w1, w2 := dial(t, s), dial(t, s)
	w1.Call(request(codeEcho, 1))
	w2.Call(request(codeEcho, 2))
	if w3 := dial(t, s); !w3.ClosedByPeer() {
		t.Fatal("third loopback connection served with MaxConnectionsPerIP=2")
	}
	remotingtest.WaitFor(t, "refusal counted", func() bool { return s.Stats().RefusedPerIP == 1 })
	if st := s.Stats(); st.RefusedConns != 1 || st.Conns != 2 {
		t.Fatalf("stats %+v, want 1 refused and 2 connections", st)
	}
	if n := maxConnEvents.Load(); n != 0 {
		t.Fatalf("%d MaxConnections events for a per-address refusal", n)
	}
	if !strings.Contains(logs.String(), "too many connections from one address") {
		t.Fatalf("no log line for the refused connection:\n%s", logs)
	}
	w1.NC.Close()
	<-closed
	if resp := dial(t, s).Call(request(codeEcho, 4)); resp.Code != codec.Success {
		t.Fatalf("connection after one closed: code %d", resp.Code)
	}
	w2.Call(request(codeEcho, 5))
}

// A handler that waits (BeginBlocking) while its peer keeps sending: the
// input netpoll buffers meanwhile is watched as during a blocked flush, and
// the connection closed once it passes the budget.
func TestBudgetWatchesInputWhileAHandlerBlocks(t *testing.T) {
	const codeWait int32 = 77
	release := make(chan struct{})
	closed := make(chan ConnID, 4)
	s, logs := startTiny(t, func(o *Options) {
		o.Budget = NewBudget(4 << 20)
		o.MaxPendingRequestBytes = 1 << 30
		o.ConnClosed = func(id ConnID) { closed <- id }
		o.Routes = append(o.Routes, Route{Code: codeWait, Handler: func(c *Conn, _, _ *codec.Command) error {
			c.BeginBlocking()
			defer c.EndBlocking()
			<-release
			return nil
		}})
	})
	// Registered after the listener's cleanup, so it runs before the
	// shutdown: a failing test does not leave the handler waiting.
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseOnce)
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := request(codeEcho, 2)
	req.Body = bytes.Repeat([]byte{'p'}, 8<<10)
	batch := bytes.Repeat(codec.AppendFrame(nil, req), 256)
	if _, err := nc.Write(codec.AppendFrame(nil, request(codeWait, 1))); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		for {
			if _, err := nc.Write(batch); err != nil {
				wrote <- err
				return
			}
		}
	}()
	// The handler still waits, but the socket is shut: the peer's writes
	// fail and netpoll holds no more than what passed the budget.
	select {
	case <-wrote:
	case <-time.After(30 * time.Second):
		t.Fatalf("input of a connection whose handler blocks was not bounded: %+v", s.Stats())
	}
	conns := s.snapshotConns()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want the blocked one", len(conns))
	}
	// Beyond the budget: what the poller read between two looks of the
	// watch (1 ms apart while the input grows fast, later on a loaded
	// machine) and what the socket held when it was shut.
	if n := conns[0].in.Len(); n > 64<<20 {
		t.Fatalf("%d bytes buffered for the blocked connection, budget 4 MiB", n)
	}
	if st := s.Stats().Budget; st.Refused != 1 {
		t.Fatalf("budget stats %+v, want one refusal", st)
	}
	releaseOnce()
	<-closed
	if !strings.Contains(logs.String(), "buffered bytes over budget") {
		t.Fatalf("no over-budget log line:\n%s", logs)
	}
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Once connections let go of most of what they held, the budget starts a
// collection so that the memory goes back to the system; not while they
// still hold it, not for small amounts, not twice for one release and
// not more often than settleEvery.
func TestBudgetSettlesAfterARelease(t *testing.T) {
	b := NewBudget(1 << 20)
	now := time.Unix(1000, 0)
	var big, small account
	if ok, _ := b.set(&small, 100<<10); !ok {
		t.Fatal("charge refused")
	}
	b.set(&small, 0)
	if _, ok := b.settle(now); ok {
		t.Fatal("a release of less than a quarter of the budget started a collection")
	}
	if ok, _ := b.set(&big, 600<<10); !ok {
		t.Fatal("charge refused")
	}
	b.set(&small, 50<<10)
	if _, ok := b.settle(now); ok {
		t.Fatal("a collection started while the bytes are still held")
	}
	before := gcCycles()
	b.set(&big, 0)
	released, ok := b.settle(now)
	if !ok || released != 600<<10 {
		t.Fatalf("after the release: settle %v, %d bytes released, want 600 KiB", ok, released)
	}
	remotingtest.WaitFor(t, "two collections", func() bool { return gcCycles() >= before+2 })
	if _, ok := b.settle(now.Add(time.Hour)); ok {
		t.Fatal("one release started two rounds of collections")
	}
	// Another release soon after waits for settleEvery.
	b.set(&big, 600<<10)
	b.set(&big, 0)
	if _, ok := b.settle(now.Add(settleEvery / 2)); ok {
		t.Fatal("a second round started within settleEvery")
	}
	if _, ok := b.settle(now.Add(settleEvery)); !ok {
		t.Fatal("no collection for the second release after settleEvery")
	}
	var nilBudget *Budget
	if _, ok := nilBudget.settle(now); ok {
		t.Fatal("no budget started a collection")
	}
}
