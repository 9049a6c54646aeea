// limits_test.go checks that the configured limits reach the listener and
// its events the metrics (core/remoting tests the limits themselves).

package server

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

func TestMaxConnectionsReachesTheListener(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxConnections = 1
	cfg.AdminListen = "127.0.0.1:0"
	s, logs := startServer(t, cfg)
	if resp := dialWire(t, s.Addr()).Call(request(codec.GetBrokerClusterInfo, 1)); resp.Code != codec.Success {
		t.Fatalf("first connection: code %d", resp.Code)
	}
	if !dialWire(t, s.Addr()).ClosedByPeer() {
		t.Fatal("second connection served with maxConnections=1")
	}
	if !strings.Contains(logs.String(), "too many connections") {
		t.Fatalf("no log line for the refused connection:\n%s", logs)
	}
	if got := scrape(t, s)[`rocketns_connections_refused_total{reason="max_connections"}`]; got != 1 {
		t.Fatalf("connections_refused_total %v, want 1", got)
	}
}
