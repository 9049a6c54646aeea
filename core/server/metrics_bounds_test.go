// metrics_bounds_test.go checks the series of the listener's bounds: the
// per-address refusals and the buffered-bytes budget.

package server

import "testing"

func TestMetricsCountBounds(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	cfg.MaxConnectionsPerIP = 2
	cfg.MaxBufferedBytes = 48 << 20
	s, _ := startServer(t, cfg)
	dialWire(t, s.Addr())
	dialWire(t, s.Addr())
	if !dialWire(t, s.Addr()).ClosedByPeer() {
		t.Fatal("third loopback connection served with maxConnectionsPerIP=2")
	}
	got := scrape(t, s)
	f := func(series string, want float64) {
		t.Helper()
		if got[series] != want {
			t.Errorf("%s = %v, want %v", series, got[series], want)
		}
	}
	f("rocketns_connections_refused_per_address_total", 1)
	f(`rocketns_connections_refused_total{reason="max_connections"}`, 0)
	f("rocketns_buffered_bytes_limit", 48<<20)
	f("rocketns_buffered_bytes", 0)
	f(`rocketns_buffer_closes_total{reason="refused"}`, 0)
	f(`rocketns_buffer_closes_total{reason="evicted"}`, 0)
}
