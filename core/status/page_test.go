// page_test.go checks what the page adds to the tables: the process
// (version, uptime, address, readiness), the auto-refresh, a wiped group
// standing out, the chart, the row bound and the shared snapshot.

package status

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCounts is a server's totals the test moves on between samplings.
type fakeCounts struct {
	mu sync.Mutex
	c  Counts
}

func (f *fakeCounts) read() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.c
}

// step adds routes and registrations and routes more latency samples: the
// first n/100 slow (bucket 2.5-5 ms), the rest fast (10-25 us).
func (f *fakeCounts) step(routes, regs uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c.Routes += routes
	f.c.Registrations += regs
	slow := routes / 50
	f.c.RouteLatency[2] += routes - slow // (10us, 25us]
	f.c.RouteLatency[9] += slow          // (5ms, 10ms]
}

// history is an hour at one sample a minute, driven by clk: 30 samples of
// rising route QPS.
func history(t *testing.T, clk *fakeClock) (*History, *fakeCounts) {
	t.Helper()
	f := &fakeCounts{}
	h := NewHistory(time.Minute, time.Hour, f.read, clk.time)
	start := clk.ms
	clk.ms -= 30 * 60_000
	h.Sample()
	for i := range 30 {
		clk.ms += 60_000
		f.step(uint64(600*(i+1)), 60)
		h.Sample()
	}
	if clk.ms != start {
		t.Fatal("clock")
	}
	return h, f
}

func serve(h http.Handler, target string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Code, rec.Body.String()
}

func TestPageProcess(t *testing.T) {
	tb, clk := fixture(t)
	ready := "waiting 30s after start (needWaitForService)"
	h := New(Options{Routes: tb, Clock: clk.time, Info: func() Info {
		return Info{Version: "v1.2.3-dirty", Started: clk.time().Add(-(2*time.Hour + 5*time.Minute)), Listen: "0.0.0.0:9876", Ready: ready,
			Start: "warm from /var/ns/routes.snapshot taken 2026-01-02T03:04:05Z: 4 brokers and 7 topics restored"}
	}})
	_, body := serve(h, "/")
	checkContains(t, body,
		`<meta http-equiv="refresh" content="15">`,
		`<td id="version">v1.2.3-dirty</td>`,
		`<td id="uptime">2 h 5 min</td>`,
		`<td id="listen">0.0.0.0:9876</td>`,
		`<td id="start">warm from /var/ns/routes.snapshot taken 2026-01-02T03:04:05Z: 4 brokers and 7 topics restored</td>`,
		`<span class="notready">not ready: waiting 30s after start (needWaitForService)</span>`)
	ready = ""
	_, body = serve(h, "/?refresh=0")
	checkContains(t, body, `<td id="readiness">ready</td>`)
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Fatal("refresh=0 still refreshes")
	}
	var p page
	_, js := serve(h, "/?format=json")
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	if p.Process == nil || p.Process.Version != "v1.2.3-dirty" || !p.Process.Ready || !strings.HasPrefix(p.Process.Start, "warm from ") || p.Process.UptimeMs != (2*time.Hour+5*time.Minute).Milliseconds() {
		t.Fatalf("process %+v", p.Process)
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{5 * time.Second, "5 s"}, {61 * time.Second, "1 min 1 s"}, {26 * time.Hour, "1 d 2 h"}} {
		if got := uptime(c.d); got != c.want {
			t.Errorf("uptime(%v) %q, want %q", c.d, got, c.want)
		}
	}
}

// A wiped group is marked in its every row, and its cell says so.
func TestPageWipedBrokerStandsOut(t *testing.T) {
	tb, clk := fixture(t)
	tb.WipeWritePerm("broker-a")
	_, body := serve(Handler(tb, clk.time), "/")
	checkRows(t, body, "broker",
		"broker wiped: broker-a|0|10.0.0.1:10911|master|32 s ago|120 s|10.0.0.1:10912|"+`|WIPED: read-only`,
		"broker wiped: broker-a|1|10.0.0.2:10911|slave|27 s ago|120 s|10.0.0.2:10912|"+`|WIPED: read-only`,
		fixtureBrokerRows[2], fixtureBrokerRows[3])
	checkContains(t, body, `<td class="wiped">WIPED: read-only</td>`)
	var p page
	_, js := serve(Handler(tb, clk.time), "/?format=json")
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	if b := p.Clusters[0].Brokers[0]; !b.Wiped || b.Topics != 2 || b.WritableTopics != 0 {
		t.Fatalf("wiped broker %+v", b)
	}
}

var pointsRE = regexp.MustCompile(`<svg class="chart" id="([a-z0-9-]+)"[^>]*>.*?<polyline class="line" points="([^"]*)"`)

func TestPageChart(t *testing.T) {
	tb, clk := fixture(t)
	hist, _ := history(t, clk)
	_, body := serve(New(Options{Routes: tb, Clock: clk.time, History: hist}), "/")
	got := map[string]int{}
	for _, m := range pointsRE.FindAllStringSubmatch(body, -1) {
		got[m[1]] = len(strings.Fields(m[2]))
	}
	for _, id := range []string{"chart-route-qps", "chart-route-p99", "chart-registrations"} {
		if got[id] != 30 {
			t.Errorf("%s: %d points, want 30 (%v)", id, got[id], got)
		}
	}
	// The last interval: 18,000 routes in 60 s, 1 a second registering.
	checkContains(t, body, "Route queries/s: 300", "max 300", "Registrations/s: 1.0", "Route p99: ", "-1 h", "Sampled every 1m0s")
	// Newest point on the right edge, the oldest half an hour before it
	// in the middle.
	m := regexp.MustCompile(`id="chart-route-qps".*?<polyline class="line" points="([0-9.]+),[0-9.]+ .* ([0-9.]+),([0-9.]+)"`).FindStringSubmatch(body)
	if m == nil || m[2] != fmt.Sprintf("%.1f", float64(plotX+plotW)) || m[3] != fmt.Sprintf("%.1f", float64(plotY)) {
		t.Fatalf("last point %v", m)
	}
	var p page
	_, js := serve(New(Options{Routes: tb, Clock: clk.time, History: hist}), "/?format=json")
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	last := p.History[len(p.History)-1]
	if len(p.History) != 30 || last.RouteQPS != 300 || last.RegQPS != 1 || last.RouteP99 < 5 || last.RouteP99 > 10 {
		t.Fatalf("history %d, last %+v", len(p.History), last)
	}
	// Without samples the panels say so.
	empty := NewHistory(time.Minute, time.Hour, (&fakeCounts{}).read, clk.time)
	_, body = serve(New(Options{Routes: tb, Clock: clk.time, History: empty}), "/")
	if strings.Count(body, "collecting samples") != 3 {
		t.Fatal("no collecting-samples panels")
	}
}

// The ring keeps the newest span/every samples, oldest first.
func TestHistoryRing(t *testing.T) {
	clk := &fakeClock{ms: t0}
	f := &fakeCounts{}
	h := NewHistory(10*time.Second, time.Minute, f.read, clk.time)
	h.Sample() // the baseline
	if len(h.Samples()) != 0 {
		t.Fatal("a sample from the baseline")
	}
	for i := range 20 {
		clk.ms += 10_000
		f.step(uint64(10*(i+1)), 0)
		h.Sample()
	}
	s := h.Samples()
	if len(s) != 6 || h.Span() != time.Minute {
		t.Fatalf("%d samples, span %v", len(s), h.Span())
	}
	for i, x := range s {
		if want := float64(15 + i); x.RouteQPS != want || x.At != time.UnixMilli(t0+int64(15+i)*10_000) {
			t.Fatalf("sample %d: %+v, want %v/s", i, x, want)
		}
	}
	// A clock that does not move records nothing.
	h.Sample()
	if len(h.Samples()) != 6 || h.Samples()[5] != s[5] {
		t.Fatal("a sample of no time")
	}
}

// Beyond MaxRows the rows are counted, not rendered.
func TestPageBoundedRows(t *testing.T) {
	tb, clk := fixture(t)
	for i := range 30 {
		register(t, tb, "big", fmt.Sprintf("g%02d", i), 0, fmt.Sprintf("10.1.0.%d:10911", i), "", 0)
	}
	_, body := serve(New(Options{Routes: tb, Clock: clk.time, MaxRows: 10}), "/")
	if n := len(rows(body, "broker")); n != 10 {
		t.Fatalf("%d rows", n)
	}
	checkContains(t, body, `<p id="more-brokers">24 more broker addresses not shown: the page lists the first 10;`)
	var p page
	_, js := serve(New(Options{Routes: tb, Clock: clk.time, MaxRows: 10}), "/?format=json")
	if err := json.Unmarshal([]byte(js), &p); err != nil || p.MoreBrokers != 24 {
		t.Fatalf("json moreBrokers %d %v", p.MoreBrokers, err)
	}
}

// Requests within CacheFor share one snapshot and one render; a topic
// query reuses the snapshot with its own route; after CacheFor a new one
// is taken.
func TestPageSharedSnapshot(t *testing.T) {
	tb, clk := fixture(t)
	var infos int
	var mu sync.Mutex
	h := New(Options{Routes: tb, Clock: clk.time, CacheFor: time.Second, Info: func() Info {
		mu.Lock()
		defer mu.Unlock()
		infos++
		return Info{Version: "v1"}
	}})
	_, first := serve(h, "/")
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, b := serve(h, "/"); b != first {
				t.Error("a different page within CacheFor")
			}
		})
	}
	wg.Wait()
	register(t, tb, "DefaultCluster", "broker-z", 0, "10.0.0.9:10911", "", 0)
	_, same := serve(h, "/")
	_, topic := serve(h, "/?topic=TopicTest")
	if same != first || strings.Contains(topic, "broker-z") || !strings.Contains(topic, `<table id="queues">`) {
		t.Fatal("the snapshot was not shared within CacheFor")
	}
	clk.ms += 1000
	_, later := serve(h, "/")
	if !strings.Contains(later, "broker-z") {
		t.Fatal("no new snapshot after CacheFor")
	}
	if infos != 2 {
		t.Fatalf("%d snapshots for 20 requests over two periods", infos)
	}
}
