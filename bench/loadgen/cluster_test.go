// Tests of the simulated brokers against an in-process rocketns.

package loadgen

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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
func TestSimulatedBrokersStayAliveOnDataVersionHeartbeats(t *testing.T) {
	srv, dir, err := startInproc(Options{ScanIntervalMillis: 50, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		os.RemoveAll(dir)
	})
	qdv0, hb0 := requestCount(t, srv, "QUERY_DATA_VERSION"), requestCount(t, srv, "BROKER_HEARTBEAT")

	// Heartbeats every 250 ms against a 1 s timeout: only a stall of
	// three quarters of the timeout could expire a heartbeating broker.
	const timeout = 1000
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
	// The first broker falls silent: with this timeout and scan interval
	// the server does expire brokers that stop heartbeating.
	silent, _ := c.Drop(1, true)
	alive := []string{BrokerName(1), BrokerName(2)}

	deadline := time.Now().Add(30 * time.Second)
	for {
		now := snapshot()
		for _, name := range alive {
			if b, ok := now[name]; !ok || !b.Live {
				t.Fatalf("%s expired although it heartbeats (timeout %d ms)", name, timeout)
			}
		}
		_, silentLeft := now[silent[0]]
		// Each live broker's last update has moved on by two timeouts
		// with no registration since: only its heartbeats did that.
		beaten := true
		for _, name := range alive {
			beaten = beaten && now[name].LastUpdate >= registered[name].LastUpdate+2*timeout
		}
		if !silentLeft && beaten {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: silent broker still listed %v, heartbeats refreshed liveness by two timeouts %v", silentLeft, beaten)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, b := range c.b[1:] {
		if n := b.regs.Load(); n != 1 {
			t.Errorf("%s registered %d times, want once", b.id.Name, n)
		}
	}
	if qdv := requestCount(t, srv, "QUERY_DATA_VERSION") - qdv0; qdv < 2*2 {
		t.Errorf("%v QUERY_DATA_VERSION heartbeats from two brokers over two timeouts", qdv)
	}
	if hb := requestCount(t, srv, "BROKER_HEARTBEAT") - hb0; hb != 0 {
		t.Errorf("%v BROKER_HEARTBEAT requests, which a 4.9.8 NameServer does not take as heartbeats", hb)
	}
}
