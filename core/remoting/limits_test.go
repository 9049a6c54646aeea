// limits_test.go checks the connection limits: the connection cap, the
// bound on unflushed replies to a peer that does not read, and the bound
// on unread requests.

package remoting

import (
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestMaxConnectionsRefusesBeyondTheLimit(t *testing.T) {
	closed := make(chan ConnID, 8)
	refused := make(chan struct{}, 8)
	s, logs := startTiny(t, func(o *Options) {
		o.MaxConnections = 2
		o.ConnClosed = func(id ConnID) { closed <- id }
		o.Events.ConnRefused = func() { refused <- struct{}{} }
	})
	w1, w2 := dial(t, s), dial(t, s)
	w1.Call(request(codeEcho, 1))
	w2.Call(request(codeEcho, 2))
	if w3 := dial(t, s); !w3.ClosedByPeer() {
		t.Fatal("third connection served with MaxConnections=2")
	}
	<-refused
	if !strings.Contains(logs.String(), "too many connections") {
		t.Fatalf("no log line for the refused connection:\n%s", logs)
	}
	w1.NC.Close()
	select {
	case <-closed:
	case <-time.After(remotingtest.Hang):
		t.Fatal("closed connection not noticed")
	}
	if resp := dial(t, s).Call(request(codeEcho, 4)); resp.Code != codec.Success {
		t.Fatalf("connection after one closed: code %d", resp.Code)
	}
	w2.Call(request(codeEcho, 5))
}

func heapInUseNow() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// A client that pipelines thousands of requests with large answers and
// never reads must not make the listener hold every answer: it flushes
// each time the unflushed answers pass MaxPendingResponseBytes, the flush
// blocks on the full socket, and after WriteTimeout the connection is
// closed with one log line. Other connections are served meanwhile.
func TestPeerThatNeverReadsIsBoundedAndClosed(t *testing.T) {
	const answer = 64 << 10
	type stuck struct {
		id   ConnID
		heap uint64
	}
	stuckCh, proceed := make(chan stuck, 1), make(chan struct{})
	closed := make(chan ConnID, 64)
	logs := &remotingtest.Logs{}
	o := testOptions(logs)
	o.MaxPendingResponseBytes = 1 << 20
	o.WriteTimeout = time.Second
	o.ConnClosed = func(id ConnID) {
		select {
		case closed <- id:
		default:
		}
	}
	s := start(t, o, func(s *Server) {
		s.hooks.flushFailed = func(id ConnID) {
			// Measured while the connection still holds all it will
			// ever hold: its unsent answers.
			stuckCh <- stuck{id, heapInUseNow()}
			<-proceed
		}
	})
	big := request(codeBig, 7, "n", strconv.Itoa(answer))
	probe := dial(t, s)
	if resp := probe.Call(big); len(resp.Body) != answer {
		t.Fatalf("answer of %d bytes, want %d", len(resp.Body), answer)
	}
	const queries = 3000
	unbounded := uint64(queries * answer)
	frame := codec.AppendFrame(nil, big)
	batch := make([]byte, 0, queries*len(frame))
	for i := 0; i < queries; i++ {
		batch = append(batch, frame...)
	}
	runtime.GC()
	base := heapInUseNow()

	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(16 << 10)
	wrote := make(chan error, 1)
	go func() {
		_, err := nc.Write(batch)
		wrote <- err
	}()

	var st stuck
	select {
	case st = <-stuckCh:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener kept waiting on a peer that never reads")
	}
	grew := int64(st.heap) - int64(base)
	t.Logf("heap grew by %d KiB while stuck; unbounded would be %d MiB", grew>>10, unbounded>>20)
	if limit := int64(48 << 20); grew > limit {
		t.Errorf("heap grew by %d MiB for a peer that never reads (bound %d MiB; unbounded would be %d MiB)",
			grew>>20, limit>>20, unbounded>>20)
	}
	// The stuck connection holds its goroutine; others are served.
	if resp := probe.Call(request(codeEcho, 2)); resp.Code != codec.Success {
		t.Fatalf("other connection: code %d", resp.Code)
	}
	close(proceed)
	for id := range closed {
		if id == st.id {
			break
		}
	}
	if err := <-wrote; err != nil {
		t.Fatalf("pipelined write: %v", err)
	}
	if !strings.Contains(logs.String(), "peer does not read its responses") {
		t.Fatalf("no log line for the closed connection:\n%s", logs)
	}
	if resp := probe.Call(request(codeEcho, 3)); resp.Code != codec.Success {
		t.Fatalf("other connection after the close: code %d", resp.Code)
	}
}

// The bound on unread input, over a pipe whose requests are all buffered
// at once, as netpoll's would be after reading faster than they are
// served: the tick's watchdog and the check between requests.
func TestUnreadRequestsBeyondTheLimitClose(t *testing.T) {
	logs := &remotingtest.Logs{}
	o := testOptions(logs)
	o.MaxPendingRequestBytes = 64 << 10
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	frame := codec.AppendFrame(nil, request(9999, 1))
	buffered := func(requests int) *Pipe {
		p := s.Pipe("test")
		for i := 0; i < requests; i++ {
			if err := p.Send(frame); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	f := func(requests int, wantClosed bool) {
		t.Helper()
		// The watchdog the tick runs while a handler is blocked.
		p := buffered(requests)
		s.checkInput(p.Conn())
		if got := p.Closed(); got != wantClosed {
			t.Errorf("watchdog, %d requests buffered: closed %v, want %v", requests, got, wantClosed)
		}
		// The check between requests.
		if !wantClosed {
			return
		}
		if p := buffered(requests); p.Serve() || !p.Closed() {
			t.Errorf("Serve, %d requests buffered: connection not closed", requests)
		}
	}
	f(10, false)
	f(5000, true)
	if !strings.Contains(logs.String(), "too many unread request bytes") {
		t.Fatalf("no log line:\n%s", logs)
	}
}

// dialFrom connects from the loopback address src.
func dialFrom(t *testing.T, s *Server, src string) *remotingtest.Wire {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	nc, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return remotingtest.Over(t, nc)
}

// With room reserved for the broker and admin networks, connections from
// elsewhere that fill the rest of MaxConnections leave them room: an
// allowlisted address still connects, up to MaxConnections, and the others
// are refused from the reserved room on.
func TestReservedConnectionsKeepRoomForAllowlistedNetworks(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) {
		o.MaxConnections = 5
		o.ReservedConnections = 2
		brokers := netip.MustParsePrefix("127.0.7.0/24")
		o.Reserved = brokers.Contains
	})
	for i := range 3 {
		w := dialFrom(t, s, "127.0.6.1")
		if resp := w.Call(request(codeEcho, int32(i))); resp.Code != codec.Success {
			t.Fatalf("connection %d from elsewhere: code %d", i, resp.Code)
		}
	}
	if w := dialFrom(t, s, "127.0.6.2"); !w.ClosedByPeer() {
		t.Fatal("a connection from elsewhere took the room reserved for the allowlisted networks")
	}
	for i := range 2 {
		w := dialFrom(t, s, "127.0.7.1")
		if resp := w.Call(request(codeEcho, int32(10+i))); resp.Code != codec.Success {
			t.Fatalf("allowlisted connection %d refused: code %d", i, resp.Code)
		}
	}
	if w := dialFrom(t, s, "127.0.7.2"); !w.ClosedByPeer() {
		t.Fatal("an allowlisted connection went past MaxConnections")
	}
	remotingtest.WaitFor(t, "refusals counted", func() bool { return s.Stats().RefusedConns == 2 })
}
