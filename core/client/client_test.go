// Tests of the client against a small fake server on the loopback interface.

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketns/rocketns/codec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeServer accepts connections and hands them to the test, which plays
// the server side frame by frame.
type fakeServer struct {
	ln    net.Listener
	conns chan net.Conn
	wg    sync.WaitGroup
}

func startFake(t testing.TB) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &fakeServer{ln: ln, conns: make(chan net.Conn, 4)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
		close(s.conns)
		for c := range s.conns {
			c.Close()
		}
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) accept(t *testing.T) net.Conn {
	t.Helper()
	c, ok := <-s.conns
	if !ok {
		t.Fatal("fake server stopped")
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readCommand reads one frame; it returns an error at EOF so serving loops
// can stop.
func readCommand(conn net.Conn) (*codec.Command, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(conn, prefix[:]); err != nil {
		return nil, err
	}
	n, err := codec.FrameLength(prefix[:], codec.DefaultMaxFrame)
	if err != nil {
		return nil, err
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(conn, frame); err != nil {
		return nil, err
	}
	cmd := new(codec.Command)
	if err := codec.Decode(frame, cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

func mustRead(t *testing.T, conn net.Conn) *codec.Command {
	t.Helper()
	cmd, err := readCommand(conn)
	if err != nil {
		t.Fatalf("fake server read: %v", err)
	}
	return cmd
}

func writeCommand(conn net.Conn, cmd *codec.Command) error {
	_, err := conn.Write(codec.AppendFrame(nil, cmd))
	return err
}

// reply builds the response to req the way a NameServer does.
func reply(req *codec.Command, code int32, remark string) *codec.Command {
	return &codec.Command{
		Code: code, Version: codec.ServerVersion, Opaque: req.Opaque,
		Flag: codec.FlagResponse, Remark: remark, SerializeType: req.SerializeType,
	}
}

// serve answers every request on the next accepted connection with h and
// passes each request to the test through the returned channel.
func serve(t testing.TB, s *fakeServer, h func(req *codec.Command) *codec.Command) <-chan *codec.Command {
	t.Helper()
	got := make(chan *codec.Command, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, ok := <-s.conns
		if !ok {
			return
		}
		defer c.Close()
		for {
			req, err := readCommand(c)
			if err != nil {
				return
			}
			select {
			case got <- req:
			default: // nobody is looking (benchmarks): do not stall the server
			}
			if req.Flag&codec.FlagOneway != 0 {
				continue
			}
			if err := writeCommand(c, h(req)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { <-done })
	return got
}

func dial(t testing.TB, addr string) *Client {
	t.Helper()
	c, err := Dial(context.Background(), addr)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (c *Client) pendingLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

func TestInvokeOutOfOrderReplies(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	const n = 5
	type answer struct {
		i      int
		remark string
		err    error
	}
	answers := make(chan answer, n)
	for i := 0; i < n; i++ {
		go func() {
			req := &codec.Command{Code: 105}
			req.SetExt("topic", fmt.Sprintf("T%d", i))
			resp, err := c.Invoke(context.Background(), req)
			if err != nil {
				answers <- answer{i: i, err: err}
				return
			}
			answers <- answer{i: i, remark: resp.Remark}
		}()
	}
	// Collect all requests first, then answer them newest first: every
	// reply must still reach the call that sent its opaque.
	reqs := make([]*codec.Command, n)
	seen := make(map[int32]bool)
	for i := range reqs {
		reqs[i] = mustRead(t, conn)
		if reqs[i].Flag != 0 {
			t.Errorf("request flag = %d, want 0", reqs[i].Flag)
		}
		if reqs[i].SerializeType != codec.SerializeJSON {
			t.Errorf("request serialize type = %d, want JSON", reqs[i].SerializeType)
		}
		if seen[reqs[i].Opaque] {
			t.Errorf("opaque %d used twice", reqs[i].Opaque)
		}
		seen[reqs[i].Opaque] = true
	}
	for i := n - 1; i >= 0; i-- {
		topic, _ := reqs[i].ExtValue("topic")
		if err := writeCommand(conn, reply(reqs[i], 0, "for "+topic)); err != nil {
			t.Fatalf("write reply: %v", err)
		}
	}
	for range n {
		a := <-answers
		if a.err != nil {
			t.Errorf("call %d: %v", a.i, a.err)
			continue
		}
		if want := fmt.Sprintf("for T%d", a.i); a.remark != want {
			t.Errorf("call %d got remark %q, want %q", a.i, a.remark, want)
		}
	}
	if l := c.pendingLen(); l != 0 {
		t.Errorf("pending calls left: %d", l)
	}
}

func TestInvokeContextEnds(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, &codec.Command{Code: 106})
		errc <- err
	}()
	stale := mustRead(t, conn) // the request is on the wire: now give up on it
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Invoke error = %v, want context.Canceled", err)
	}
	if l := c.pendingLen(); l != 0 {
		t.Errorf("pending calls left after cancel: %d", l)
	}

	// The late reply is dropped and the connection keeps working.
	if err := writeCommand(conn, reply(stale, 0, "late")); err != nil {
		t.Fatal(err)
	}
	errc2 := make(chan error, 1)
	var resp *codec.Command
	go func() {
		var err error
		resp, err = c.Invoke(context.Background(), &codec.Command{Code: 106})
		errc2 <- err
	}()
	next := mustRead(t, conn)
	if next.Opaque == stale.Opaque {
		t.Fatalf("opaque %d reused", next.Opaque)
	}
	if err := writeCommand(conn, reply(next, 0, "fresh")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc2; err != nil {
		t.Fatalf("second Invoke: %v", err)
	}
	if resp.Remark != "fresh" {
		t.Errorf("second Invoke got remark %q, want %q", resp.Remark, "fresh")
	}
}

func TestServerCloseFailsPendingCalls(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Invoke(context.Background(), &codec.Command{Code: 106})
			errs <- err
		}()
	}
	for range n {
		mustRead(t, conn)
	}
	conn.Close()
	for range n {
		err := <-errs
		if err == nil {
			t.Fatal("Invoke succeeded on a closed connection")
		}
		if !strings.Contains(err.Error(), s.addr()) {
			t.Errorf("error %q does not name the address %s", err, s.addr())
		}
	}
	// Calls after the failure fail at once with the same cause.
	if _, err := c.Invoke(context.Background(), &codec.Command{Code: 106}); err == nil || !strings.Contains(err.Error(), s.addr()) {
		t.Errorf("Invoke after connection loss = %v, want an error naming %s", err, s.addr())
	}
	if err := c.InvokeOneway(&codec.Command{Code: 904}); err == nil {
		t.Error("InvokeOneway after connection loss succeeded")
	}
}

// Done tells a caller that keeps a connection that it failed, before it
// sends anything on it: the server closing it, or Close.
func TestDoneWhenConnectionEnds(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)
	select {
	case <-c.Done():
		t.Fatal("Done closed on a live connection")
	default:
	}
	conn.Close()
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed 30 s after the server closed the connection")
	}
	if _, err := c.Invoke(context.Background(), &codec.Command{Code: 106}); err == nil {
		t.Error("Invoke succeeded after Done")
	}

	c2 := dial(t, s.addr())
	s.accept(t)
	c2.Close()
	select {
	case <-c2.Done():
	default:
		t.Error("Done not closed after Close returned")
	}
}

// A connection the server ended is still closed by Close: its socket is
// not left to the garbage collector.
func TestCloseAfterFailureClosesTheSocket(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	s.accept(t).Close()
	<-c.Done()
	c.Close()
	if _, err := c.conn.Write([]byte{0}); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v, want net.ErrClosed", err)
	}
}

func TestCloseFailsPendingCalls(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	errc := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), &codec.Command{Code: 106})
		errc <- err
	}()
	mustRead(t, conn)
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("pending Invoke succeeded after Close")
	}
	if _, err := c.Invoke(context.Background(), &codec.Command{Code: 106}); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestInvokeOneway(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())

	req := &codec.Command{Code: 322}
	req.SetExt("brokerName", "b")
	if err := c.InvokeOneway(req); err != nil {
		t.Fatalf("InvokeOneway: %v", err)
	}
	r := <-got
	if r.Flag != codec.FlagOneway || r.Code != 322 {
		t.Errorf("server got code %d flag %d, want 322 flag %d", r.Code, r.Flag, codec.FlagOneway)
	}
	// A normal call after it still gets its answer (and Flag is reset).
	if _, err := c.Invoke(context.Background(), req); err != nil {
		t.Fatalf("Invoke after oneway: %v", err)
	}
	if r := <-got; r.Flag != 0 {
		t.Errorf("flag after Invoke = %d, want 0", r.Flag)
	}
}

func TestInvokeBinaryHeader(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		v, _ := req.ExtValue("topic")
		resp.SetExt("echo", v)
		return resp
	})
	c := dial(t, s.addr())
	req := &codec.Command{Code: 105, SerializeType: codec.SerializeRocketMQ}
	req.SetExt("topic", "TopicTest")
	resp, err := c.Invoke(context.Background(), req)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if r := <-got; r.SerializeType != codec.SerializeRocketMQ {
		t.Errorf("request went out with serialize type %d, want ROCKETMQ", r.SerializeType)
	}
	if v, _ := resp.ExtValue("echo"); v != "TopicTest" || resp.SerializeType != codec.SerializeRocketMQ {
		t.Errorf("response echo %q type %d, want TopicTest / ROCKETMQ", v, resp.SerializeType)
	}
}

func TestDialFailureNamesAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(context.Background(), addr)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Dial to a closed port = %v, want an error naming %s", err, addr)
	}
}

// A call whose context has already ended sends nothing, so the shared,
// pipelined connection stays in frame and the other callers' replies
// still come.
func TestExpiredCallKeepsSharedConnection(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	aDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Invoke(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo})
		aDone <- err
	}()
	reqA := mustRead(t, conn)

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := c.Invoke(expired, &codec.Command{Code: codec.GetBrokerClusterInfo}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call with an expired context = %v, want context.DeadlineExceeded", err)
	}
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := c.InvokeOnewayContext(cancelled, &codec.Command{Code: codec.BrokerHeartbeat}); !errors.Is(err, context.Canceled) {
		t.Fatalf("oneway with a cancelled context = %v, want context.Canceled", err)
	}

	if err := writeCommand(conn, reply(reqA, codec.Success, "")); err != nil {
		t.Fatalf("server write: %v", err)
	}
	if err := <-aDone; err != nil {
		t.Fatalf("call A failed because another caller's context had ended: %v", err)
	}
	bDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Invoke(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo})
		bDone <- err
	}()
	// The next frame on the wire is this call's: nothing of the expired
	// ones was sent.
	reqB := mustRead(t, conn)
	if reqB.Code != codec.GetBrokerClusterInfo || reqB.Flag != 0 {
		t.Fatalf("next frame code %d flag %d, want the new call's request", reqB.Code, reqB.Flag)
	}
	if err := writeCommand(conn, reply(reqB, codec.Success, "")); err != nil {
		t.Fatalf("server write: %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("client unusable after a caller's expired context: %v", err)
	}
}

// stuckWrite starts a call whose frame is larger than the socket buffers
// hold on a connection the peer stops reading after the first bytes, and
// returns once the write is under way.
func stuckWrite(t *testing.T, c *Client, conn net.Conn, ctx context.Context) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, &codec.Command{Code: codec.RegisterBroker, Body: make([]byte, 12<<20)})
		done <- err
	}()
	var prefix [4]byte
	if _, err := io.ReadFull(conn, prefix[:]); err != nil {
		t.Fatalf("fake server read: %v", err)
	}
	return done
}

// Invoke returns when its ctx ends, also when the ctx has no deadline and
// the request is stuck in a write to a peer that stopped reading; the
// half-sent frame then takes the connection down.
func TestCancelUnblocksStuckWrite(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := stuckWrite(t, c, conn, ctx)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Invoke = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		c.Close()
		<-done
		t.Fatal("Invoke still blocked in its write 10 s after its context was cancelled")
	}
	if _, err := c.Invoke(context.Background(), &codec.Command{Code: codec.GetBrokerClusterInfo}); err == nil {
		t.Error("Invoke succeeded on a connection left with half a frame")
	}
}

// A call queued behind another caller's stuck write leaves when its own
// ctx ends.
func TestCancelWhileQueuedBehindStuckWrite(t *testing.T) {
	s := startFake(t)
	c := dial(t, s.addr())
	conn := s.accept(t)

	stuck := stuckWrite(t, c, conn, context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo})
		queued <- err
	}()
	cancel()
	select {
	case err := <-queued:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("queued Invoke = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		c.Close()
		<-queued
		t.Error("queued Invoke still waiting 10 s after its context was cancelled")
	}
	c.Close()
	if err := <-stuck; err == nil {
		t.Error("the stuck write succeeded against a peer that stopped reading")
	}
}
