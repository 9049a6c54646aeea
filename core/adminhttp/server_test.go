// server_test.go checks the admin listener: composed /readyz and /healthz,
// collectors and sections, profiles only when asked, a taken port, and
// that a client which stops reading holds neither its handler nor the
// shutdown.

package adminhttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/pprof"
)

var quietLog = slog.New(slog.DiscardHandler)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute} // bounds a hang only
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Two servers of one process register their checks; /readyz passes only
// when both do and names the first that does not.
func TestReadinessComposes(t *testing.T) {
	s := New(Options{Log: quietLog})
	namesrv, controller := "", "no raft leader"
	s.Ready("namesrv", func() string { return namesrv })
	s.Ready("controller", func() string { return controller })
	f := func(wantCode int, wantBody string) {
		t.Helper()
		if code, body := get(t, s.Handler(), "/readyz"); code != wantCode || body != wantBody {
			t.Fatalf("readyz %d %q, want %d %q", code, body, wantCode, wantBody)
		}
	}
	f(503, "not ready: no raft leader\n")
	namesrv = "shutting down"
	f(503, "not ready: shutting down\n")
	if why := s.Readiness(); why != "shutting down" {
		t.Fatalf("Readiness %q", why)
	}
	namesrv, controller = "", ""
	f(200, "ready\n")
	if code, body := get(t, s.Handler(), "/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("healthz without checks: %d %q", code, body)
	}
	s.Healthy("disk", func() string { return "kv file unwritable" })
	if code, body := get(t, s.Handler(), "/healthz"); code != 503 || body != "unhealthy: kv file unwritable\n" {
		t.Fatalf("healthz with a failing check: %d %q", code, body)
	}
}

// Notes follow the verdict, ready or not; an empty one writes nothing.
func TestReadinessNotes(t *testing.T) {
	s := New(Options{Log: quietLog})
	why := "not listening yet"
	s.Ready("namesrv", func() string { return why })
	s.Note(func() string { return "start: warm from routes.snapshot" })
	s.Note(func() string { return "" })
	if code, body := get(t, s.Handler(), "/readyz"); code != 503 || body != "not ready: not listening yet\nstart: warm from routes.snapshot\n" {
		t.Fatalf("readyz %d %q", code, body)
	}
	why = ""
	if code, body := get(t, s.Handler(), "/readyz"); code != 200 || body != "ready\nstart: warm from routes.snapshot\n" {
		t.Fatalf("readyz %d %q", code, body)
	}
}

func TestCollectorsAndSections(t *testing.T) {
	s := New(Options{Log: quietLog})
	first := prometheus.NewCounter(prometheus.CounterOpts{Name: "first_total", Help: "First."})
	first.Inc()
	second := prometheus.NewGauge(prometheus.GaugeOpts{Name: "second", Help: "Second."})
	second.Set(2)
	s.Register(first, second)
	s.Handle("GET /rocketmq/nsaddr", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteText(w, 200, "10.0.0.1:9876")
	}))
	code, body := get(t, s.Handler(), "/metrics")
	if code != 200 {
		t.Fatalf("metrics %d:\n%.300s", code, body)
	}
	for _, want := range []string{"first_total 1\n", "second 2\n", "# TYPE second gauge\n",
		`rocketns_build_info{go_version="`, `",version="` + LabelValue(buildinfo.Version()) + `"} 1`,
		"# HELP go_goroutines ", "go_goroutines ", "go_memstats_heap_inuse_bytes ", "process_resident_memory_bytes ",
		"process_open_fds "} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	// A second collector of the same series is refused at Listen, and the
	// scrape says why instead of answering half.
	s.Register(prometheus.NewCounter(prometheus.CounterOpts{Name: "first_total", Help: "Again."}))
	if err := s.Listen(); err == nil || !strings.Contains(err.Error(), "first_total") {
		t.Fatalf("Listen with a duplicate collector: %v", err)
	}
	if code, body := get(t, s.Handler(), "/metrics"); code != 500 || !strings.Contains(body, "first_total") {
		t.Fatalf("metrics with a duplicate collector: %d %.200s", code, body)
	}
	if code, body := get(t, s.Handler(), "/rocketmq/nsaddr"); code != 200 || body != "10.0.0.1:9876" {
		t.Fatalf("section %d %q", code, body)
	}
	// Profiles only when asked for.
	if code, body := get(t, s.Handler(), "/debug/pprof/cmdline"); code == 200 && strings.Contains(body, ".test") {
		t.Fatal("pprof served without ServeProfiles")
	}
	s.ServeProfiles(pprof.Handler())
	if code, _ := get(t, s.Handler(), "/debug/pprof/cmdline"); code != 200 {
		t.Fatalf("pprof cmdline %d after ServeProfiles", code)
	}
}

func TestListenServeShutdown(t *testing.T) {
	s := New(Options{Addr: "127.0.0.1:0", Log: quietLog})
	if s.Addr() != "" {
		t.Fatal("an address before Listen")
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	taken := New(Options{Addr: s.Addr(), Log: quietLog})
	if err := taken.Listen(); err == nil || !strings.Contains(err.Error(), "admin listen") {
		t.Fatalf("Listen on a taken port: %v", err)
	}
	s.Serve("/healthz")
	addr := s.Addr()
	if code, _ := httpGet(t, "http://"+addr+"/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("admin listener still serving after Shutdown")
	}
	// Without an address there is nothing to bind or stop.
	none := New(Options{Log: quietLog})
	if err := none.Listen(); err != nil || none.Addr() != "" {
		t.Fatalf("Listen without an address: %v %q", err, none.Addr())
	}
	none.Serve("")
	if err := none.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// owned is a listener serving profiles with a write timeout, that the test
// shuts down itself; the cleanup only covers a failure before that.
func owned(t *testing.T, profiles http.Handler, writeTimeout time.Duration) *Server {
	t.Helper()
	s := New(Options{Addr: "127.0.0.1:0", Log: quietLog, WriteTimeout: writeTimeout})
	s.ServeProfiles(profiles)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve("test")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// With profiles served, an admin answer still has a write timeout: a
// client that never reads does not pin the handler, nor Shutdown. The
// stand-in endpoint writes without end and does not ask for more time.
func TestClientThatNeverReadsHoldsNothing(t *testing.T) {
	writeErr := make(chan error, 1)
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
	})
	s := owned(t, endless, 200*time.Millisecond)
	nc, err := net.DialTimeout("tcp", s.Addr(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := fmt.Fprintf(nc, "GET /debug/pprof/endless HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-writeErr:
	case <-time.After(time.Minute):
		t.Fatal("an admin client that never reads holds its handler: the admin listener has no write timeout")
	}
	// Pinned, Shutdown would never return: the deadline only bounds that.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The profiles that run for a requested time still work when that time is
// longer than the write timeout: net/http/pprof pushes its connection's
// write deadline out through http.ResponseController, which the admin
// listener's handlers must let reach the connection. The stand-in profile
// does what pprof does; the write timeout has passed before it writes, so
// only the deadline it set lets its answer out.
func TestProfileMayOutlastTheWriteTimeout(t *testing.T) {
	extended := make(chan error, 1)
	profile := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
		extended <- err
		WriteText(w, 200, "profile\n")
	})
	s := owned(t, profile, time.Nanosecond)
	code, body := httpGet(t, "http://"+s.Addr()+"/debug/pprof/allocs?seconds=2")
	if err := <-extended; err != nil {
		t.Fatalf("SetWriteDeadline through the admin listener's handlers: %v", err)
	}
	if code != http.StatusOK || body != "profile\n" {
		t.Fatalf("a profile outlasting the write timeout: status %d %q", code, body)
	}
	// And net/http/pprof's own, its write deadline pushed out by the
	// time asked for.
	s = owned(t, pprof.Handler(), time.Minute)
	if code, body := httpGet(t, "http://"+s.Addr()+"/debug/pprof/allocs?seconds=1"); code != http.StatusOK || len(body) == 0 {
		t.Fatalf("a 1 s allocs profile: status %d, %d bytes: %.200s", code, len(body), body)
	}
}

// A background task runs from Serve to Shutdown, and not without a
// listener.
func TestRunTasks(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	s := New(Options{Addr: "127.0.0.1:0", Log: quietLog})
	s.Run(func(stop <-chan struct{}) {
		close(started)
		<-stop
		close(stopped)
	})
	none := New(Options{Log: quietLog})
	none.Run(func(<-chan struct{}) { t.Error("a task ran without a listener") })
	none.Serve("")
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve("test")
	<-started
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Shutdown returned before the task stopped")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("a second Shutdown: %v", err)
	}
}
