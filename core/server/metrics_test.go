// metrics_test.go drives real traffic at a server with the admin listener
// on, scrapes /metrics and checks every counter moved by exactly what the
// traffic should have moved it; it also checks the label sets, the probes,
// the address-server answer and the per-minute summary.

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/pprof"
)

// scrape reads /metrics into series -> value.
func scrape(t *testing.T, s *Server) map[string]float64 {
	t.Helper()
	code, text := httpGet(t, "http://"+s.AdminAddr()+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d", code)
	}
	return parseMetrics(t, text)
}

func parseMetrics(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("bad metrics line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q: %v", line, err)
		}
		if _, dup := out[line[:i]]; dup {
			t.Fatalf("series %s written twice", line[:i])
		}
		out[line[:i]] = v
	}
	return out
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: remotingtest.Hang}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestMetricsCountTraffic(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	// Admin codes only from a network the test is not on: PUT_KV_CONFIG
	// from loopback is refused for its address.
	cfg.AdminAllowCIDRs = "192.0.2.0/24"
	cfg.BrokerAllowCIDRs = "127.0.0.1"
	closed := make(chan route.ConnID, 8)
	s, _ := startHooked(t, cfg, func(s *Server) {
		s.hooks.connClosed = func(id route.ConnID) { closed <- id }
	})
	waitClosed := func(what string) {
		t.Helper()
		select {
		case <-closed:
		case <-time.After(remotingtest.Hang):
			t.Fatalf("%s: connection close not handled", what)
		}
	}
	before := scrape(t, s)

	client := dialWire(t, s.Addr()) // stays open: broker-b and every route query
	ok := func(resp *codec.Command, what string) {
		t.Helper()
		if resp.Code != codec.Success {
			t.Fatalf("%s: code %d %s", what, resp.Code, resp.Remark)
		}
	}
	ok(client.Call(registerFrame(t, 1, "c1", "broker-b", "127.0.0.1:10921", 0, "T1", "T2")), "register broker-b")
	brokerA := dialWire(t, s.Addr())
	ok(brokerA.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T3")), "register broker-a")
	ok(brokerA.Call(registerFrame(t, 2, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T3")), "re-register broker-a")

	const routeQueries = 20
	for i := 0; i < routeQueries; i++ {
		ok(client.Call(request(codec.GetRouteInfoByTopic, int32(10+i), "topic", "T1")), "route T1")
	}
	if resp := client.Call(request(codec.GetRouteInfoByTopic, 100, "topic", "Nope")); resp.Code != codec.TopicNotExist {
		t.Fatalf("route of an unknown topic: code %d", resp.Code)
	}
	if resp := client.Call(request(codec.PutKVConfig, 101, "namespace", "NamespaceX", "key", "KeyX", "value", "v")); resp.Code != codec.NoPermission {
		t.Fatalf("PUT_KV_CONFIG from outside adminAllowCIDRs: code %d", resp.Code)
	}

	brokerA.NC.Close()
	waitClosed("broker-a")

	bad := dialWire(t, s.Addr())
	bad.SendRaw([]byte{0x7f, 0xff, 0xff, 0xff}) // a length beyond frameMaxLength
	if !bad.ClosedByPeer() {
		t.Fatal("oversized frame: connection left open")
	}
	waitClosed("bad frame")

	// T1 lost broker-a's queues, so its cached body went; this query
	// caches the one body the table now holds.
	resp := client.Call(request(codec.GetRouteInfoByTopic, 102, "topic", "T1"))
	ok(resp, "route T1 after broker-a left")

	after := scrape(t, s)
	delta := func(series string, want float64) {
		t.Helper()
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	delta(`rocketns_requests_total{code="GET_ROUTEINFO_BY_TOPIC"}`, routeQueries+2)
	delta(`rocketns_requests_total{code="REGISTER_BROKER"}`, 3)
	delta(`rocketns_requests_total{code="PUT_KV_CONFIG"}`, 1)
	delta(`rocketns_requests_total{code="GET_KV_CONFIG"}`, 0)
	delta(`rocketns_request_errors_total{code="GET_ROUTEINFO_BY_TOPIC",response="TOPIC_NOT_EXIST"}`, 1)
	delta(`rocketns_request_errors_total{code="PUT_KV_CONFIG",response="NO_PERMISSION"}`, 1)
	delta(`rocketns_registrations_total{result="changed"}`, 2)
	delta(`rocketns_registrations_total{result="unchanged"}`, 1)
	delta(`rocketns_broker_removals_total{reason="conn_closed"}`, 1)
	delta(`rocketns_broker_removals_total{reason="timeout"}`, 0)
	delta(`rocketns_broker_removals_total{reason="unregistered"}`, 0)
	delta(`rocketns_frames_rejected_total{reason="frame_too_large"}`, 1)
	delta(`rocketns_frames_rejected_total{reason="bad_json_header"}`, 0)
	delta(`rocketns_auth_refusals_total{reason="address"}`, 1)
	delta(`rocketns_auth_refusals_total{reason="bad_signature"}`, 0)
	delta(`rocketns_connections_refused_total{reason="max_connections"}`, 0)
	// The connection's 22 route queries: the 1st was timed and stands for
	// itself, the 17th for the 16 since; the 5 after it are not counted.
	delta(`rocketns_request_duration_seconds_count{class="route"}`, 1+routeSample)
	delta(`rocketns_request_duration_seconds_bucket{class="route",le="+Inf"}`, 1+routeSample)
	delta(`rocketns_request_duration_seconds_count{class="registration"}`, 3)
	delta(`rocketns_request_duration_seconds_count{class="admin"}`, 1)
	if _, ok := before[`rocketns_request_errors_total{code="PUT_KV_CONFIG",response="NO_PERMISSION"}`]; ok {
		t.Error("an error series is listed before its first error")
	}

	gauge := func(series string, want float64) {
		t.Helper()
		if got, ok := after[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	gauge("rocketns_brokers", 1)
	gauge("rocketns_broker_groups", 1)
	gauge("rocketns_clusters", 1)
	gauge("rocketns_topics", 2)
	gauge("rocketns_topic_broker_entries", 2)
	gauge("rocketns_route_cache_bytes", float64(len(resp.Body)))
	gauge("rocketns_kv_keys", 0)
	gauge("rocketns_connections", 1)
	gauge("rocketns_ready", 1)
	buildInfo := false
	for k, v := range after {
		if strings.HasPrefix(k, "rocketns_build_info{") && v == 1 {
			buildInfo = true
		}
	}
	if !buildInfo {
		t.Error("no rocketns_build_info series")
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	checkLabels(t, after, "T1", "T2", "T3", "Nope", "broker-a", "broker-b", "c1", "127.0.0.1", "NamespaceX", "KeyX")
}

// checkLabels fails on any label outside the fixed sets, and on any label
// value holding a topic, broker, cluster or address.
func checkLabels(t *testing.T, series map[string]float64, forbidden ...string) {
	t.Helper()
	allowed := map[string]bool{"code": true, "response": true, "result": true, "reason": true, "class": true,
		"le": true, "version": true, "go_version": true, "quantile": true}
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	values := map[string]map[string]bool{}
	for s := range series {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			continue
		}
		if !strings.HasPrefix(s, "rocketns_") {
			continue // the Go runtime and process metrics of the library
		}
		for _, m := range label.FindAllStringSubmatch(s[i:], -1) {
			if !allowed[m[1]] {
				t.Errorf("%s: label %q outside the fixed set", s, m[1])
			}
			for _, f := range forbidden {
				if strings.Contains(m[2], f) {
					t.Errorf("%s: label value %q holds %q", s, m[2], f)
				}
			}
			if values[m[1]] == nil {
				values[m[1]] = map[string]bool{}
			}
			values[m[1]][m[2]] = true
		}
	}
	// Every code label is a request code name: a closed set.
	for v := range values["code"] {
		if v != "UNKNOWN" && !isCodeName(v) {
			t.Errorf("code label %q is not a request code name", v)
		}
	}
}

func isCodeName(name string) bool {
	for _, c := range (&Server{}).codeTable() {
		if codec.RequestCodeName(c.code) == name {
			return true
		}
	}
	return false
}

func TestAdminEndpoints(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	cfg.NsaddrList = " 10.0.0.1:9876; 10.0.0.2:9876 ;"
	s, _ := startHooked(t, cfg, func(s *Server) { s.ServeProfiles(pprof.Handler()) })
	base := "http://" + s.AdminAddr()
	f := func(path string, wantCode int, wantBody string) {
		t.Helper()
		code, body := httpGet(t, base+path)
		if code != wantCode || !strings.Contains(body, wantBody) {
			t.Fatalf("GET %s: %d %q, want %d with %q", path, code, body, wantCode, wantBody)
		}
	}
	f("/healthz", 200, "ok")
	f("/readyz", 200, "ready")
	f("/rocketmq/nsaddr", 200, "10.0.0.1:9876;10.0.0.2:9876")
	f("/debug/pprof/cmdline", 200, "")
	f("/metrics", 200, "rocketns_requests_total{")
	if code, _ := httpGet(t, base+"/"); code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
		t.Fatalf("GET /: %d; the status page is not mounted", code)
	}
	if code, body := httpGet(t, base+"/rocketmq/nsaddr"); body != "10.0.0.1:9876;10.0.0.2:9876" || code != 200 {
		t.Fatalf("nsaddr answer %q: clients split it on ';' and need nothing else", body)
	}
}

func TestAdminHandlerWithoutListener(t *testing.T) {
	s, err := New(testConfig(t), quietLog)
	if err != nil {
		t.Fatal(err)
	}
	if s.AdminAddr() != "" {
		t.Fatalf("AdminAddr %q with adminListen unset", s.AdminAddr())
	}
	f := func(path string, wantCode int, wantBody string) {
		t.Helper()
		rec := httptest.NewRecorder()
		s.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != wantCode || !strings.Contains(rec.Body.String(), wantBody) {
			t.Fatalf("GET %s: %d %q, want %d with %q", path, rec.Code, rec.Body, wantCode, wantBody)
		}
	}
	f("/readyz", 503, "not listening yet")
	f("/healthz", 200, "ok")
	f("/rocketmq/nsaddr", 404, "nsaddrList is not set")
	f("/metrics", 200, "rocketns_ready 0")
	// Profiles only when the command asks for them.
	rec := httptest.NewRecorder()
	s.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	if rec.Code == 200 && strings.Contains(rec.Body.String(), ".test") {
		t.Fatal("pprof served without ServeProfiles")
	}
}

func TestReadyzDuringShutdown(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	type answer struct {
		ready, health int
		body          string
	}
	got := make(chan answer, 1)
	s, err := New(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	s.hooks.shutdownBegun = func() {
		code, body := httpGet(t, "http://"+s.AdminAddr()+"/readyz")
		health, _ := httpGet(t, "http://"+s.AdminAddr()+"/healthz")
		got <- answer{code, health, body}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if code, body := httpGet(t, "http://"+s.AdminAddr()+"/readyz"); code != 200 {
		t.Fatalf("readyz after Start: %d %q", code, body)
	}
	addr := s.AdminAddr()
	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.ready != 503 || !strings.Contains(a.body, "shutting down") || a.health != 200 {
		t.Fatalf("during shutdown: readyz %d %q, healthz %d; want 503 shutting down, 200", a.ready, a.body, a.health)
	}
	c := &http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("admin listener still serving after Shutdown")
	}
}

func TestReadyzWaitsForService(t *testing.T) {
	cfg := testConfig(t)
	cfg.NeedWaitForService = true
	cfg.WaitSecondsForService = 3600
	s, err := New(cfg, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	s.listening.Store(true)
	s.started = time.Now()
	if why := s.ready(); !strings.Contains(why, "needWaitForService") {
		t.Fatalf("ready() = %q during the wait", why)
	}
	s.started = time.Now().Add(-2 * time.Hour)
	if why := s.ready(); why != "" {
		t.Fatalf("ready() = %q after the wait", why)
	}
}

func TestAdminListenTaken(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	s1, _ := startHooked(t, cfg, nil)
	cfg2 := testConfig(t)
	cfg2.AdminListen = s1.AdminAddr()
	s2, err := New(cfg2, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	err = s2.Start()
	if err == nil || !strings.Contains(err.Error(), "admin listen") {
		t.Fatalf("Start with a taken admin port: %v", err)
	}
	if s2.Addr() != "" {
		t.Fatal("the remoting listener was opened although the admin one failed")
	}
}

func TestMinuteSummary(t *testing.T) {
	var buf bytes.Buffer
	s, err := New(testConfig(t), slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s.started = t0.Add(-time.Minute)
	for i := 0; i < 120; i++ {
		s.metrics.requests.Observe(codec.GetRouteInfoByTopic, codec.Success, 0, 0)
	}
	s.metrics.requests.Observe(codec.RegisterBroker, codec.Success, time.Millisecond, 1)
	s.metrics.requests.Observe(codec.GetRouteInfoByTopic, codec.TopicNotExist, 0, 0)
	s.logSummary(t0)
	for i := 0; i < 30; i++ {
		s.metrics.requests.Observe(codec.GetRouteInfoByTopic, codec.Success, 0, 0)
	}
	for i := 0; i < 6; i++ {
		s.metrics.requests.Observe(codec.GetKVConfig, codec.Success, time.Microsecond, 1)
	}
	s.logSummary(t0.Add(time.Minute))

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d summary lines, want 2:\n%s", len(lines), buf.String())
	}
	type summary struct {
		Msg          string  `json:"msg"`
		Route        float64 `json:"route_qps"`
		Registration float64 `json:"registration_qps"`
		Admin        float64 `json:"admin_qps"`
		Errors       uint64  `json:"errors"`
		Topics       *int    `json:"topics"`
		Brokers      *int    `json:"brokers"`
		Connections  *int    `json:"connections"`
	}
	f := func(line string, route, reg, admin float64, errs uint64) {
		t.Helper()
		var got summary
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if got.Msg != "summary" || got.Route != route || got.Registration != reg || got.Admin != admin || got.Errors != errs {
			t.Fatalf("summary %s\nwant route %v registration %v admin %v errors %d", line, route, reg, admin, errs)
		}
		if got.Topics == nil || got.Brokers == nil || got.Connections == nil {
			t.Fatalf("summary lacks table sizes: %s", line)
		}
	}
	f(lines[0], 2.02, 0.02, 0, 1) // 121 route queries and a registration over the first minute
	f(lines[1], 0.5, 0, 0.1, 0)
}

// Clients that ask once per connection (mqadmin, nsadmin, health checks,
// short-lived producers) are counted once each by the route histogram: a
// connection's first sample stands for that one query, not for
// routeSample of them.
func TestRouteHistogramCountsOneQueryConnectionsOnce(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	s, _ := startServer(t, cfg)
	before := scrape(t, s)
	const conns = 10
	for i := 0; i < conns; i++ {
		w := dialWire(t, s.Addr())
		if resp := w.Call(request(codec.GetRouteInfoByTopic, 1, "topic", "Nope")); resp.Code != codec.TopicNotExist {
			t.Fatalf("route of an unknown topic: code %d", resp.Code)
		}
		w.NC.Close()
	}
	after := scrape(t, s)
	reqs := after[`rocketns_requests_total{code="GET_ROUTEINFO_BY_TOPIC"}`] - before[`rocketns_requests_total{code="GET_ROUTEINFO_BY_TOPIC"}`]
	count := after[`rocketns_request_duration_seconds_count{class="route"}`] - before[`rocketns_request_duration_seconds_count{class="route"}`]
	if reqs != conns || count != conns {
		t.Errorf("%d one-query connections: requests_total moved by %v, the route histogram's _count by %v; want %d for both",
			conns, reqs, count, conns)
	}
}
