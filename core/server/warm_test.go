// warm_test.go restarts NameServers in-process on one snapshot path: after
// a Shutdown and after a kill (the background writer's file only), the new
// server answers routes before any broker registers again; a stale or
// corrupt snapshot starts it cold, and says so.

package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/routesnap"
)

// warmConfig is testConfig with an admin listener and the shortest
// snapshot interval.
func warmConfig(t *testing.T) *config.Config {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	cfg.RouteSnapshotIntervalMs = 1000
	return cfg
}

// registerTwo registers a master and a slave of broker-a and a master of
// broker-b and returns the encoded route of T1 and T2 as clients see it.
func registerTwo(t *testing.T, s *Server) (routes [][]byte) {
	t.Helper()
	w := dialWire(t, s.Addr())
	for i, r := range []*codec.Command{
		registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"),
		registerFrame(t, 2, "c1", "broker-a", "127.0.0.1:10912", 1, "T1", "T2"),
		registerFrame(t, 3, "c2", "broker-b", "127.0.0.1:10921", 0, "T1", "T3"),
	} {
		if resp := w.Call(r); resp.Code != codec.Success {
			t.Fatalf("register %d: %d %s", i, resp.Code, resp.Remark)
		}
	}
	return routeBodies(t, s)
}

func routeBodies(t *testing.T, s *Server) (out [][]byte) {
	t.Helper()
	w := dialWire(t, s.Addr())
	for i, topic := range []string{"T1", "T2", "T3"} {
		resp := w.Call(request(codec.GetRouteInfoByTopic, int32(10+i), "topic", topic))
		if resp.Code != codec.Success {
			t.Fatalf("route %s: %d %s", topic, resp.Code, resp.Remark)
		}
		out = append(out, resp.Body)
	}
	return out
}

func shutdown(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func sameRoutes(t *testing.T, got, want [][]byte) {
	t.Helper()
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("route %d after the restart:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}

func TestWarmRestartAfterShutdown(t *testing.T) {
	cfg := warmConfig(t)
	first := newStarted(t, cfg, nil, nil)
	if ws := first.WarmStart(); ws.Warm || ws.Cold != "no route snapshot" {
		t.Fatalf("first start %+v", ws)
	}
	want := registerTwo(t, first)
	shutdown(t, first)

	logs := &remotingtest.Logs{}
	second, err := New(cfg, logs.Logger())
	if err != nil {
		t.Fatal(err)
	}
	// Restored before the port opens.
	if _, ok := second.Routes().Route("T1"); !ok {
		t.Fatal("no route for T1 before Start")
	}
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, second)
	sameRoutes(t, routeBodies(t, second), want)
	ws := second.WarmStart()
	if !ws.Warm || ws.Brokers != 3 || ws.Topics != 3 || ws.From != filepath.Join(filepath.Dir(cfg.KVConfigPath), SnapshotFile) {
		t.Fatalf("second start %+v", ws)
	}
	if l := logs.String(); strings.Count(l, "starting warm") != 1 || !strings.Contains(l, "brokers=3 topics=3") {
		t.Fatalf("start-up log:\n%s", l)
	}
	code, ready := httpGet(t, "http://"+second.AdminAddr()+"/readyz")
	if code != 200 || !strings.Contains(ready, "start: warm from "+ws.From) || !strings.Contains(ready, "3 brokers and 3 topics restored") {
		t.Fatalf("readyz %d %q", code, ready)
	}
	_, page := httpGet(t, "http://"+second.AdminAddr()+"/")
	if !strings.Contains(page, `<td id="start">warm from `) {
		t.Fatal("the status page does not say the server started warm")
	}
	_, m := httpGet(t, "http://"+second.AdminAddr()+"/metrics")
	if !strings.Contains(m, "rocketns_started_warm 1") {
		t.Fatalf("metrics lack rocketns_started_warm 1")
	}
}

// A kill: the first server is never shut down, the second starts from the
// file its background writer left.
func TestWarmRestartAfterKill(t *testing.T) {
	cfg := warmConfig(t)
	first, _ := startServer(t, cfg)
	want := registerTwo(t, first)
	gen := first.Routes().Generation()
	remotingtest.WaitFor(t, "the background snapshot", func() bool {
		first.warm.mu.Lock()
		defer first.warm.mu.Unlock()
		return first.warm.wrote && first.warm.lastGen == gen
	})
	if first.warm.bytes.Load() == 0 || first.warm.writes.Load() == 0 {
		t.Fatal("a write that counted nothing")
	}
	second, _ := startServer(t, cfg)
	if !second.WarmStart().Warm {
		t.Fatalf("second start %+v", second.WarmStart())
	}
	sameRoutes(t, routeBodies(t, second), want)
	// The unchanged table is not written again.
	if n := second.warm.writes.Load(); n != 0 {
		t.Fatalf("%d writes of the restored, unchanged table", n)
	}
}

// A snapshot is only written when the table changed: the background task
// finds the same generation and does nothing.
func TestSnapshotWrittenOnlyOnChange(t *testing.T) {
	cfg := warmConfig(t)
	s := newStarted(t, cfg, nil, nil)
	defer shutdown(t, s)
	registerTwo(t, s)
	s.writeSnapshot()
	n := s.warm.writes.Load()
	s.writeSnapshot()
	s.Routes().Heartbeat("c1", "127.0.0.1:10911")
	s.writeSnapshot()
	if got := s.warm.writes.Load(); got != n {
		t.Fatalf("unchanged table written %d more times", got-n)
	}
	s.Routes().WipeWritePerm("broker-a")
	s.writeSnapshot()
	if got := s.warm.writes.Load(); got != n+1 {
		t.Fatalf("changed table: %d writes, want %d", got, n+1)
	}
}

// Restored brokers expire on their timeout from the snapshot's time, with
// the server's clock: a broker that never comes back goes at
// takenAt + 120 s, not at restart + 120 s.
func TestWarmRestartedBrokersExpire(t *testing.T) {
	var now atomic.Int64
	now.Store(1_800_000_000_000)
	clock := WithClock(now.Load)
	cfg := warmConfig(t)
	cfg.ScanNotActiveBrokerInterval = 3_600_000 // scans by hand
	first, err := New(cfg, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	registerTwo(t, first)
	taken := now.Load()
	shutdown(t, first)

	now.Add(60_000) // a minute's restart
	second, err := New(cfg, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if !second.WarmStart().Warm {
		t.Fatalf("start %+v", second.WarmStart())
	}
	now.Store(taken + 120_000)
	second.scanExpired()
	if _, ok := second.Routes().Route("T1"); !ok {
		t.Fatal("expired at the deadline")
	}
	now.Store(taken + 120_001)
	second.scanExpired()
	if _, ok := second.Routes().Route("T1"); ok {
		t.Fatal("T1 still routed past the restored brokers' deadline")
	}
}

// A stale, corrupt, truncated or other-version snapshot starts the server
// cold with one log line; start-up never fails because of it.
func TestColdStartOnBadSnapshot(t *testing.T) {
	var now atomic.Int64
	now.Store(1_800_000_000_000)
	clock := WithClock(now.Load)
	cfg := warmConfig(t)
	first, err := New(cfg, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	registerTwo(t, first)
	shutdown(t, first)
	path := first.WarmStart().From
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, content []byte, at int64, wantCold string) {
		t.Helper()
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		now.Store(at)
		logs := &remotingtest.Logs{}
		s, err := New(cfg, logs.Logger(), clock)
		if err != nil {
			t.Fatalf("%s: start-up failed: %v", name, err)
		}
		if ws := s.WarmStart(); ws.Warm || ws.Cold != wantCold {
			t.Fatalf("%s: start %+v", name, ws)
		}
		if st := s.Routes().Stats(); st.Topics != 0 || st.Live != 0 {
			t.Fatalf("%s: table %+v", name, st)
		}
		if err := s.Start(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := strings.Count(logs.String(), "route snapshot ignored"); n != 1 {
			t.Fatalf("%s: %d log lines:\n%s", name, n, logs.String())
		}
		shutdown(t, s)
	}
	taken := now.Load()
	f("stale", good, taken+120_001, "route snapshot too old")
	flipped := bytes.Clone(good)
	flipped[len(flipped)-1] ^= 1
	f("corrupt", flipped, taken, "route snapshot unusable")
	f("truncated", good[:len(good)-5], taken, "route snapshot truncated")
	other := bytes.Clone(good)
	other[len("RNSROUTE")+3]++ // the version's last byte
	f("other version", other, taken, "route snapshot of another format version")
	f("not a snapshot", []byte("hello"), taken, "route snapshot unusable")
	if _, _, err := routesnap.Decode(good); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotsOff(t *testing.T) {
	cfg := warmConfig(t)
	cfg.RouteSnapshotEnable = false
	s := newStarted(t, cfg, nil, nil)
	registerTwo(t, s)
	shutdown(t, s)
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg.KVConfigPath), SnapshotFile)); !os.IsNotExist(err) {
		t.Fatalf("a snapshot was written with snapshots off: %v", err)
	}
	if ws := s.WarmStart(); ws.Warm || !strings.Contains(ws.Cold, "routeSnapshotEnable=false") {
		t.Fatalf("start %+v", ws)
	}
}

// A path that cannot be written counts a failure and logs it; the server
// keeps serving and shuts down cleanly.
func TestSnapshotWriteFailure(t *testing.T) {
	cfg := warmConfig(t)
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.RouteSnapshotPath = filepath.Join(blocker, "routes.snapshot") // under a file
	logs := &remotingtest.Logs{}
	s := newStarted(t, cfg, logs.Logger(), nil)
	registerTwo(t, s)
	shutdown(t, s)
	if s.warm.failures.Load() == 0 || !strings.Contains(logs.String(), "route snapshot not written") {
		t.Fatalf("failures %d, logs:\n%s", s.warm.failures.Load(), logs.String())
	}
}

// Shutdown closes the brokers' connections itself; their brokers stay in
// the table, which is what the final snapshot saved and what clients still
// connected are answered until their own connections close. Found by the
// rolling restart: the stopping server unregistered each broker as its
// connection closed and answered routes missing brokers until it exited
// (up to 13 s at 1M entries).
func TestShutdownKeepsTheTable(t *testing.T) {
	cfg := warmConfig(t)
	s := newStarted(t, cfg, nil, nil)
	registerTwo(t, s)
	want := map[string]*body.TopicRoute{}
	for _, topic := range []string{"T1", "T2", "T3"} {
		r, ok := s.Routes().Route(topic)
		if !ok {
			t.Fatalf("no route for %s", topic)
		}
		want[topic] = r
	}
	shutdown(t, s)
	for topic, w := range want {
		if r, ok := s.Routes().Route(topic); !ok || !reflect.DeepEqual(r, w) {
			t.Fatalf("%s after Shutdown: %+v, %v; want %+v", topic, r, ok, w)
		}
	}
}
