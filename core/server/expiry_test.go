// Brokers expiring at the scan, on an injected clock: their registrations
// go, and so does a connection no live registration is left on, as Java
// closes an expired broker's channel.

package server

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
)

// startClocked starts a server whose route table reads now, with no
// periodic expiry scan (the test scans), and hooks set by setup.
func startClocked(t *testing.T, now func() int64, setup func(*Server)) (*Server, *remotingtest.Logs) {
	t.Helper()
	return startClockedWith(t, testConfig(t), now, setup)
}

// startClockedWith is startClocked with cfg.
func startClockedWith(t *testing.T, cfg *config.Config, now func() int64, setup func(*Server)) (*Server, *remotingtest.Logs) {
	t.Helper()
	cfg.ScanNotActiveBrokerInterval = 3_600_000
	logs := &remotingtest.Logs{}
	s, err := New(cfg, logs.Logger(), WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, logs
}

func TestExpiredBrokerConnectionIsClosed(t *testing.T) {
	var now atomic.Int64
	now.Store(1_700_000_000_000)
	closed := make(chan route.ConnID, 8)
	s, logs := startClocked(t, now.Load, func(s *Server) {
		s.hooks.connClosed = func(id route.ConnID) { closed <- id }
	})
	w1, w2 := dialWire(t, s.Addr()), dialWire(t, s.Addr())
	reg := func(w *remotingtest.Wire, opaque int32, name, addr, timeout string) {
		t.Helper()
		req := registerFrame(t, opaque, "c1", name, addr, 0, "T1", "T2")
		if timeout != "" {
			req.SetExt("heartbeatTimeoutMillis", timeout)
		}
		mustOK(t, w.Call(req), "register "+name)
	}
	reg(w1, 1, "broker-a", "127.0.0.1:10911", "1000") // alone on w1: expires, w1 closes
	reg(w2, 2, "broker-b", "127.0.0.1:10921", "1000") // expires, but w2 carries broker-c
	reg(w2, 3, "broker-c", "127.0.0.1:10931", "")     // 120 s: stays

	now.Add(1000)
	s.scanExpired()
	select {
	case id := <-closed:
		t.Fatalf("connection %d closed at the deadline", id)
	default:
	}
	now.Add(1)
	s.scanExpired()
	if !w1.ClosedByPeer() {
		t.Fatal("the expired broker's connection is still open")
	}
	select {
	case <-closed:
	case <-time.After(remotingtest.Hang):
		t.Fatal("the server never saw the connection close")
	}
	if !strings.Contains(logs.String(), "closing an expired broker's connection") {
		t.Fatalf("no log line for the close:\n%s", logs)
	}
	// w2 still serves broker-c, and only broker-c is left.
	resp := mustOK(t, w2.Call(request(codec.GetBrokerClusterInfo, 4)), "106")
	if b := string(resp.Body); strings.Contains(b, "broker-a") || strings.Contains(b, "broker-b") || !strings.Contains(b, "broker-c") {
		t.Fatalf("cluster info after the expiry: %s", b)
	}
	select {
	case id := <-closed:
		t.Fatalf("connection %d closed as well", id)
	default:
	}
}
