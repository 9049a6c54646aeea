// shutdown_test.go checks what Shutdown promises: a peer in the middle of a
// frame does not hold it, a deadline that runs out still closes every
// connection and reports it, and an admin client that stops reading holds
// neither its handler nor the shutdown.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/pprof"
)

// startOwned starts a server whose Shutdown the test calls and checks
// itself; the cleanup only makes sure the server ends when the test fails
// before that.
func startOwned(t *testing.T, cfg *config.Config, setup func(*Server)) *Server {
	t.Helper()
	s := newStarted(t, cfg, quietLog, setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// awaitWaiting returns once a connection of s blocks for the rest of a
// frame.
func awaitWaiting(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, c := range s.snapshotConns() {
			if c.waiting.Load() {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection waits for the rest of its frame")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// halfFrame is the start of a valid frame: more than its length prefix,
// less than the whole.
func halfFrame(opaque int32) []byte {
	return codec.AppendFrame(nil, request(codec.GetBrokerClusterInfo, opaque))[:6]
}

func TestShutdownIsNotHeldByAPeerInTheMiddleOfAFrame(t *testing.T) {
	s := startOwned(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	w.call(request(codec.GetBrokerClusterInfo, 1))
	w.sendRaw(halfFrame(2))
	awaitWaiting(t, s)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a peer that sent half a frame: %v", err)
	}
	if !w.closedByPeer() {
		t.Fatal("the peer's connection is still open after Shutdown")
	}
}

// The other order: the connection starts waiting for a frame only after
// Shutdown looked for waiting connections, and must close itself.
func TestConnectionThatStartsWaitingDuringShutdownClosesItself(t *testing.T) {
	var w *wire
	closed := make(chan bool, 1)
	s := startOwned(t, testConfig(t), func(s *Server) {
		s.hooks.shutdownBegun = func() {
			if w == nil {
				return // the test failed before dialing
			}
			w.sendRaw(halfFrame(2))
			closed <- w.closedByPeer()
		}
	})
	w = dialWire(t, s.Addr())
	w.call(request(codec.GetBrokerClusterInfo, 1))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
	s := startOwned(t, testConfig(t), func(s *Server) {
		s.extraHandlers = map[int32]handler{blockingCode: func(*Server, *conn, *codec.Command, *codec.Command) error {
			entered <- struct{}{}
			<-release
			return nil
		}}
	})
	idle := dialWire(t, s.Addr())
	idle.call(request(codec.GetBrokerClusterInfo, 1))
	busy := dialWire(t, s.Addr())
	busy.send(request(blockingCode, 1))
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocking handler never ran")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a request still being handled returned %v, want the deadline error", err)
	}
	if !idle.closedByPeer() {
		t.Fatal("idle connection left open after Shutdown gave up waiting")
	}
	unblock()
	if !busy.closedByPeer() {
		t.Fatal("the busy connection was not closed once its handler returned")
	}
	// Shutdown's waiter goroutines wake with this; one that closes a
	// channel that is not its own fails the run here rather than later.
	<-s.inflight.close()
	s.tlsConns.Wait()
}

func adminOwned(t *testing.T, profiles http.Handler, writeTimeout time.Duration) *Server {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	return startOwned(t, cfg, func(s *Server) {
		s.ServeProfiles(profiles)
		s.adminHTTP.writeTimeout = writeTimeout
	})
}

// With profiles served, an admin answer still has a write timeout: a
// client that never reads does not pin the handler, nor Shutdown. The
// stand-in endpoint writes without end and does not ask for more time.
func TestAdminClientThatNeverReadsHoldsNothing(t *testing.T) {
	writeErr := make(chan error, 1)
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
	})
	s := adminOwned(t, endless, 200*time.Millisecond)
	nc, err := net.DialTimeout("tcp", s.AdminAddr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := fmt.Fprintf(nc, "GET /debug/pprof/endless HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-writeErr:
	case <-time.After(10 * time.Second):
		t.Fatal("an admin client that never reads holds its handler: the admin listener has no write timeout")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The profiles that run for a requested time still work when that time is
// longer than the write timeout.
func TestAdminProfileMayOutlastTheWriteTimeout(t *testing.T) {
	s := adminOwned(t, pprof.Handler(), time.Second)
	code, body := httpGet(t, "http://"+s.AdminAddr()+"/debug/pprof/allocs?seconds=2")
	if code != http.StatusOK || len(body) == 0 {
		t.Fatalf("a 2s profile under a 1s write timeout: status %d, %d bytes: %.200s", code, len(body), body)
	}
}
