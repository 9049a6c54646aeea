// limits_test.go checks the connection limits: the connection cap, the
// bound on unflushed responses to a peer that does not read, and the bound
// on unread requests.
package server

import (
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

func TestMaxConnectionsRefusesBeyondTheLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxConnections = 2
	closed := make(chan route.ConnID, 8)
	s, logs := startHooked(t, cfg, func(s *Server) {
		s.hooks.connClosed = func(id route.ConnID) { closed <- id }
	})
	w1, w2 := dialWire(t, s.Addr()), dialWire(t, s.Addr())
	w1.call(request(9999, 1))
	w2.call(request(9999, 2))
	if w3 := dialWire(t, s.Addr()); !w3.closedByPeer() {
		t.Fatal("third connection served with maxConnections=2")
	}
	if !strings.Contains(logs.String(), "too many connections") {
		t.Fatalf("no log line for the refused connection:\n%s", logs)
	}
	w1.nc.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("closed connection not noticed")
	}
	w4 := dialWire(t, s.Addr())
	if resp := w4.call(request(9999, 4)); resp.Code != codec.RequestCodeNotSupported {
		t.Fatalf("connection after one closed: code %d", resp.Code)
	}
	w2.call(request(9999, 5))
}

// bigOrderRoute registers brokers enough for a large route to topic, and an
// order config for it so that every answer is encoded afresh into its own
// buffer (the cached route body would be shared by all answers).
func bigOrderRoute(t *testing.T, s *Server, topic string, brokers int) {
	t.Helper()
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1}}
	for _, name := range []string{topic, topic + "-other"} {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: name, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	}
	for i := 0; i < brokers; i++ {
		_, err := s.routes.Register(&route.Registration{Cluster: "DefaultCluster", BrokerName: fmt.Sprintf("broker-%04d", i),
			BrokerAddr: fmt.Sprintf("10.0.%d.%d:10911", i/250, i%250), Body: rb})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.kv.Put(orderTopicNamespace, topic, "broker-0000:8"); err != nil {
		t.Fatal(err)
	}
}

func heapInUseNow() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// A client that pipelines thousands of route queries and never reads must
// not make the server hold every answer: the server flushes each time the
// unflushed answers pass maxPendingResponseBytes, the flush blocks on the
// full socket, and after serverWriteTimeoutSeconds the connection is closed
// with one log line. Other connections are served meanwhile.
func TestPeerThatNeverReadsIsBoundedAndClosed(t *testing.T) {
	cfg := testConfig(t)
	cfg.OrderMessageEnable = true
	cfg.MaxPendingResponseBytes = 1 << 20
	cfg.ServerWriteTimeoutSeconds = 1
	type stuck struct {
		id   route.ConnID
		heap uint64
	}
	stuckCh, proceed := make(chan stuck, 1), make(chan struct{})
	closed := make(chan route.ConnID, 64)
	s, logs := startHooked(t, cfg, func(s *Server) {
		s.hooks.flushFailed = func(id route.ConnID) {
			// Measured while the connection still holds all it will
			// ever hold: its unsent answers.
			stuckCh <- stuck{id, heapInUseNow()}
			<-proceed
		}
		s.hooks.connClosed = func(id route.ConnID) {
			select {
			case closed <- id:
			default:
			}
		}
	})
	bigOrderRoute(t, s, "Big", 400)

	probe := dialWire(t, s.Addr())
	resp := probe.call(request(codec.GetRouteInfoByTopic, 1, "topic", "Big"))
	if resp.Code != codec.Success || len(resp.Body) < 50<<10 {
		t.Fatalf("route: code %d, %d bytes; want a large route", resp.Code, len(resp.Body))
	}
	const queries = 3000
	unbounded := uint64(queries * len(resp.Body))

	frame := codec.AppendFrame(nil, request(codec.GetRouteInfoByTopic, 7, "topic", "Big"))
	batch := make([]byte, 0, queries*len(frame))
	for i := 0; i < queries; i++ {
		batch = append(batch, frame...)
	}
	runtime.GC()
	base := heapInUseNow()

	nc, err := net.Dial("tcp", s.Addr())
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
		t.Fatal("the server kept waiting on a peer that never reads")
	}
	grew := int64(st.heap) - int64(base)
	t.Logf("heap grew by %d KiB while stuck; unbounded would be %d MiB", grew>>10, unbounded>>20)
	if limit := int64(48 << 20); grew > limit {
		t.Errorf("heap grew by %d MiB for a peer that never reads (bound %d MiB; unbounded would be %d MiB)",
			grew>>20, limit>>20, unbounded>>20)
	}
	// The stuck connection holds its goroutine; others are served.
	if resp := probe.call(request(codec.GetRouteInfoByTopic, 2, "topic", "Big")); resp.Code != codec.Success {
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
	if resp := probe.call(request(codec.GetRouteInfoByTopic, 3, "topic", "Big")); resp.Code != codec.Success {
		t.Fatalf("other connection after the close: code %d", resp.Code)
	}
}

type countCloser struct{ n atomic.Int32 }

func (c *countCloser) Close() error { c.n.Add(1); return nil }

// inProcessConn is a conn over LinkBuffers whose requests are already
// buffered, as netpoll's would be after reading faster than they are served.
func inProcessConn(t *testing.T, s *Server, requests int) (*conn, *netpoll.LinkBuffer, *countCloser) {
	t.Helper()
	in := netpoll.NewLinkBuffer()
	frame := codec.AppendFrame(nil, request(9999, 1))
	for i := 0; i < requests; i++ {
		if _, err := in.WriteBinary(frame); err != nil {
			t.Fatal(err)
		}
	}
	in.Flush()
	cl := &countCloser{}
	return &conn{pool: &s.bufPool, out: netpoll.NewLinkBuffer(), in: in, closer: cl, peer: "test"}, in, cl
}

func TestUnreadRequestsBeyondTheLimitClose(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxPendingRequestBytes = 64 << 10
	logs := &lockedBuffer{}
	s, err := New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	f := func(requests int, wantClosed bool) {
		t.Helper()
		// The watchdog the tick runs while a handler is blocked.
		c, _, cl := inProcessConn(t, s, requests)
		s.checkInput(c)
		if got := cl.n.Load() == 1; got != wantClosed {
			t.Errorf("watchdog, %d requests buffered: closed %v, want %v", requests, got, wantClosed)
		}
		// The check between requests.
		if !wantClosed {
			return
		}
		c, in, cl := inProcessConn(t, s, requests)
		if s.serveBuffered(c, in) || cl.n.Load() != 1 {
			t.Errorf("serveBuffered, %d requests buffered: connection not closed", requests)
		}
	}
	f(10, false)
	f(5000, true)
	if !strings.Contains(logs.String(), "too many unread request bytes") {
		t.Fatalf("no log line:\n%s", logs)
	}
}
