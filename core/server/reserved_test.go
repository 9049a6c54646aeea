// reserved_test.go checks the connection room kept for the broker and
// admin networks (reservedConnections).

package server

import (
	"net"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// Connections from other addresses that fill maxConnections up to the
// reserved room leave an allowlisted broker and an allowlisted operator
// their way in; without allowlists nothing is reserved.
func TestReservedConnectionsLetAllowlistedNetworksIn(t *testing.T) {
	dial := func(t *testing.T, addr, src string) *remotingtest.Wire {
		t.Helper()
		nc, err := dialRawFrom(t, src, addr)
		if err != nil {
			t.Fatal(err)
		}
		return remotingtest.Over(t, nc)
	}
	served := func(w *remotingtest.Wire) bool {
		w.Send(remotingtest.Request(codec.GetAllTopicListFromNameServer, 1))
		resp, err := w.Recv()
		return err == nil && resp.Code == codec.Success
	}
	fill := func(t *testing.T, s *Server, n int) {
		t.Helper()
		for range n {
			if w := dial(t, s.Addr(), "127.0.6.1"); !served(w) {
				t.Fatal("a connection below the cap was not served")
			}
		}
	}
	t.Run("allowlists", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.MaxConnections, cfg.MaxConnectionsPerIP, cfg.ReservedConnections = 6, 6, 2
		cfg.BrokerAllowCIDRs = "127.0.7.0/24"
		cfg.AdminAllowCIDRs = "127.0.8.1"
		s, _ := startServer(t, cfg)
		fill(t, s, 4)
		if w := dial(t, s.Addr(), "127.0.6.2"); served(w) {
			t.Fatal("a connection from elsewhere took the room kept for the allowlisted networks")
		}
		if w := dial(t, s.Addr(), "127.0.7.1"); !served(w) {
			t.Fatal("an allowlisted broker was locked out")
		}
		if w := dial(t, s.Addr(), "127.0.8.1"); !served(w) {
			t.Fatal("an allowlisted operator was locked out")
		}
	})
	t.Run("no allowlists", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.MaxConnections, cfg.MaxConnectionsPerIP, cfg.ReservedConnections = 6, 6, 2
		s, _ := startServer(t, cfg)
		fill(t, s, 6)
		if w := dial(t, s.Addr(), "127.0.7.1"); served(w) {
			t.Fatal("a connection past maxConnections was served")
		}
	})
}

// dialRawFrom opens a raw connection from the loopback address src.
func dialRawFrom(t *testing.T, src, addr string) (net.Conn, error) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: remotingtest.Hang}
	return d.Dial("tcp", addr)
}
