// limits_test.go checks that the configured connection cap reaches the
// listener (core/remoting tests the limits themselves).

package server

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
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
	w1.Call(request(9999, 1))
	w2.Call(request(9999, 2))
	if w3 := dialWire(t, s.Addr()); !w3.ClosedByPeer() {
		t.Fatal("third connection served with maxConnections=2")
	}
	if !strings.Contains(logs.String(), "too many connections") {
		t.Fatalf("no log line for the refused connection:\n%s", logs)
	}
	w1.NC.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("closed connection not noticed")
	}
	w4 := dialWire(t, s.Addr())
	if resp := w4.Call(request(9999, 4)); resp.Code != codec.RequestCodeNotSupported {
		t.Fatalf("connection after one closed: code %d", resp.Code)
	}
	w2.Call(request(9999, 5))
}
