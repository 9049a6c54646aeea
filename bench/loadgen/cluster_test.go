// Tests of the simulated brokers against an in-process rocketns.

package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/server"
)

// requestCount reads rocketns_requests_total for one request code name.
func requestCount(t *testing.T, srv *server.Server, code string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	prefix := `rocketns_requests_total{code="` + code + `"} `
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", sc.Text(), err)
			}
			return f
		}
	}
	t.Fatalf("no %s... in the metrics", prefix)
	return 0
}

// The simulated brokers keep alive the way a 5.x broker in its default
// compatibleWithOldNameSrv mode does: oneway QUERY_DATA_VERSION, which
// every NameServer version takes as a heartbeat. BROKER_HEARTBEAT would
// leave them to expire on a 4.9.8 NameServer, which does not know it.
//
// The server's clock is the test's: it moves on by less than the timeout
// only once every live broker's heartbeat has caught up with it, so no
// scheduling stall can expire a broker that heartbeats, while the silent
// one falls behind and expires.
func TestSimulatedBrokersStayAliveOnDataVersionHeartbeats(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixMilli())
	cfg := config.Default()
	cfg.BindAddress, cfg.ListenPort = "127.0.0.1", 0
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(t.TempDir(), "namesrv.properties")
	cfg.ScanNotActiveBrokerInterval = 50
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler), server.WithClock(clock.Load))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv.Shutdown(ctx)
	})
	qdv0, hb0 := requestCount(t, srv, "QUERY_DATA_VERSION"), requestCount(t, srv, "BROKER_HEARTBEAT")

	const timeout = 1000 // ms; the brokers heartbeat every quarter of it
	c, err := StartCluster(context.Background(), srv.Addr(), ClusterSpec{Brokers: 3, Topics: 6, PerTopic: 1, TimeoutMillis: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	snapshot := func() map[string]route.BrokerStatus {
		m := make(map[string]route.BrokerStatus)
		for _, b := range srv.Routes().BrokerStatus() {
			m[b.BrokerName] = b
		}
		return m
	}
	registered := snapshot()
	// The first broker falls silent: the server does expire brokers that
	// stop heartbeating.
	silent, _ := c.Drop(1, true)
	alive := []string{BrokerName(1), BrokerName(2)}

	// Four steps of 0.6 timeouts: the live brokers' last updates move on
	// by 2.4 timeouts with no registration since, so only their
	// heartbeats did that; the silent one is 1.2 timeouts behind after
	// the second.
	for step := range 4 {
		clock.Add(timeout * 6 / 10)
		now := clock.Load()
		remotingtest.WaitFor(t, fmt.Sprintf("step %d: the live brokers' heartbeats at the new time", step), func() bool {
			m := snapshot()
			for _, name := range alive {
				if b, ok := m[name]; !ok || !b.Live {
					t.Fatalf("%s expired although it heartbeats (timeout %d ms)", name, timeout)
				}
				if m[name].LastUpdate < now {
					return false
				}
			}
			return true
		})
	}
	remotingtest.WaitFor(t, "the silent broker to expire", func() bool {
		_, left := snapshot()[silent[0]]
		return !left
	})
	for _, name := range alive {
		if b := snapshot()[name]; !b.Live || b.LastUpdate < registered[name].LastUpdate+2*timeout {
			t.Errorf("%s: %+v, registered %+v: heartbeats did not refresh it by two timeouts", name, b, registered[name])
		}
	}
	for _, b := range c.b[1:] {
		if n := b.regs.Load(); n != 1 {
			t.Errorf("%s registered %d times, want once", b.id.Name, n)
		}
	}
	if qdv := requestCount(t, srv, "QUERY_DATA_VERSION") - qdv0; qdv < 2*4 {
		t.Errorf("%v QUERY_DATA_VERSION heartbeats from two brokers over four steps", qdv)
	}
	if hb := requestCount(t, srv, "BROKER_HEARTBEAT") - hb0; hb != 0 {
		t.Errorf("%v BROKER_HEARTBEAT requests, which a 4.9.8 NameServer does not take as heartbeats", hb)
	}
}
