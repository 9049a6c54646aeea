// shutdown_test.go checks what Shutdown promises: a peer in the middle of a
// frame does not hold it, and a deadline that runs out still closes every
// connection and reports it.

package remoting

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/tlstest"
)

// startOwned starts a listener whose Shutdown the test calls and checks
// itself; the cleanup only makes sure it ends when the test fails before
// that.
func startOwned(t *testing.T, o Options, setup func(*Server)) *Server {
	t.Helper()
	s := newServer(t, o, setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// awaitWaiting returns once a connection of s blocks for the rest of a
// frame.
func awaitWaiting(t *testing.T, s *Server) {
	t.Helper()
	remotingtest.WaitFor(t, "a connection waiting for the rest of its frame", func() bool {
		for _, c := range s.snapshotConns() {
			if c.waiting.Load() {
				return true
			}
		}
		return false
	})
}

// halfFrame is the start of a valid frame: more than its length prefix,
// less than the whole.
func halfFrame(opaque int32) []byte {
	return codec.AppendFrame(nil, request(codeEcho, opaque))[:6]
}

func TestShutdownIsNotHeldByAPeerInTheMiddleOfAFrame(t *testing.T) {
	s := startOwned(t, testOptions(&remotingtest.Logs{}), nil)
	w := dial(t, s)
	w.Call(request(codeEcho, 1))
	w.SendRaw(halfFrame(2))
	awaitWaiting(t, s)

	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a peer that sent half a frame: %v", err)
	}
	if !w.ClosedByPeer() {
		t.Fatal("the peer's connection is still open after Shutdown")
	}
	if err := s.Shutdown(ctx); err == nil {
		t.Fatal("a second Shutdown succeeded")
	}
}

// The other order: the connection starts waiting for a frame only after
// Shutdown looked for waiting connections, and must close itself.
func TestConnectionThatStartsWaitingDuringShutdownClosesItself(t *testing.T) {
	var w *remotingtest.Wire
	closed := make(chan bool, 1)
	s := startOwned(t, testOptions(&remotingtest.Logs{}), func(s *Server) {
		s.hooks.shutdownBegun = func() {
			if w == nil {
				return // the test failed before dialing
			}
			w.SendRaw(halfFrame(2))
			closed <- w.ClosedByPeer()
		}
	})
	w = dial(t, s)
	w.Call(request(codeEcho, 1))

	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	err := s.Shutdown(ctx)
	if !<-closed {
		t.Fatal("a connection that began waiting for a frame after Shutdown started stayed open")
	}
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// A request still being handled when the deadline runs out: Shutdown
// returns the deadline error, closes the connections anyway, and the
// goroutines it left waiting end cleanly once the handler returns.
func TestShutdownPastItsDeadlineClosesEveryConnection(t *testing.T) {
	const blockingCode = 7101
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	o := testOptions(&remotingtest.Logs{})
	o.Routes = append(o.Routes, Route{Code: blockingCode, Handler: func(*Conn, *codec.Command, *codec.Command) error {
		entered <- struct{}{}
		<-release
		return nil
	}})
	s := startOwned(t, o, nil)
	idle := dial(t, s)
	idle.Call(request(codeEcho, 1))
	busy := dial(t, s)
	busy.Send(request(blockingCode, 1))
	select {
	case <-entered:
	case <-time.After(remotingtest.Hang):
		t.Fatal("the blocking handler never ran")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a request still being handled returned %v, want the deadline error", err)
	}
	if !idle.ClosedByPeer() {
		t.Fatal("idle connection left open after Shutdown gave up waiting")
	}
	unblock()
	if !busy.ClosedByPeer() {
		t.Fatal("the busy connection was not closed once its handler returned")
	}
	// Shutdown's waiter goroutines wake with this; one that closes a
	// channel that is not its own fails the run here rather than later.
	<-s.inflight.close()
	s.handoffs.Wait()
}

// Nothing a listener started outlives its Shutdown: connection loops, the
// tick, TLS and handed-off connections, deferred-reply writers. netpoll's
// poller is process-wide and stays.
func TestNoGoroutineOutlivesShutdown(t *testing.T) {
	leakOpts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait")}
	ca := tlstest.NewCA(t, "ca")
	pending := make(chan deferred, 8)
	o := testOptions(&remotingtest.Logs{})
	o.TLS = tlsOption(t, ca, false)
	o.Sniffers = []Sniffer{fakeProtocol(nil)}
	deferOptions(&o, pending)
	s := newServer(t, o, nil)
	plain := dial(t, s)
	secure, err := dialTLS(t, s, ca)
	if err != nil {
		t.Fatal(err)
	}
	f := dialFake(t, s)
	f.write(fakeMagic)
	f.expect("ok\n")
	for i, w := range []*remotingtest.Wire{plain, secure} {
		w.Send(request(codeDefer, int32(i)))
		if err := (<-pending).p.Reply(reply("r")); err != nil {
			t.Fatal(err)
		}
		w.MustRecv()
		w.Send(request(codeDefer, 10+int32(i))) // left pending
		<-pending
	}
	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, leakOpts...)
}
