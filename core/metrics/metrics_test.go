// metrics_test.go checks the request and listener counters through the
// text they write: per-code and UNKNOWN counters, error series listed from
// their first error, weighted latency samples, totals, quantiles, promlint,
// and that updates allocate nothing.

package metrics

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func newTestRequests(t *testing.T) *Requests {
	t.Helper()
	r, err := NewRequests(RequestOptions{
		Prefix:       "x_",
		Classes:      []string{"route", "admin"},
		UnknownClass: 1,
		Codes:        []Code{{105, "ROUTE", 0}, {100, "PUT", 1}, {51001, "VOTE", 1}},
		Responses:    []Response{{1, "SYSTEM_ERROR"}, {17, "TOPIC_NOT_EXIST"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func written(r *Requests) string {
	var b strings.Builder
	r.Write(&b)
	return b.String()
}

func TestRequestsCount(t *testing.T) {
	r := newTestRequests(t)
	out := written(r)
	for _, want := range []string{`x_requests_total{code="ROUTE"} 0`, `x_requests_total{code="PUT"} 0`,
		`x_requests_total{code="VOTE"} 0`, `x_requests_total{code="UNKNOWN"} 0`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "x_request_errors_total") {
		t.Fatal("error series before any error")
	}
	r.Observe(105, 0, 0, 0)
	r.Observe(105, 17, 20*time.Microsecond, 16)
	r.Observe(100, 1, time.Millisecond, 1)
	r.Observe(9999, 3, 0, 0)
	r.Observe(51001, 0, 0, 0)
	out = written(r)
	for _, want := range []string{
		`x_requests_total{code="ROUTE"} 2`, `x_requests_total{code="PUT"} 1`, `x_requests_total{code="UNKNOWN"} 1`,
		`x_requests_total{code="VOTE"} 1`,
		`x_request_errors_total{code="ROUTE",response="TOPIC_NOT_EXIST"} 1`,
		`x_request_errors_total{code="PUT",response="SYSTEM_ERROR"} 1`,
		`x_request_errors_total{code="UNKNOWN",response="OTHER"} 1`,
		// The route sample stands for 16 requests, in the 25 us bucket.
		`x_request_duration_seconds_bucket{class="route",le="1e-05"} 0`,
		`x_request_duration_seconds_bucket{class="route",le="2.5e-05"} 16`,
		`x_request_duration_seconds_count{class="route"} 16`,
		`x_request_duration_seconds_count{class="admin"} 1`,
		`x_request_duration_seconds_bucket{class="admin",le="+Inf"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	byClass, errs := r.Totals()
	if byClass[0] != 2 || byClass[1] != 3 || errs != 3 {
		t.Fatalf("totals %v, %d errors", byClass, errs)
	}
	if r.ClassOf(105) != 0 || r.ClassOf(100) != 1 || r.ClassOf(-7) != 1 || r.ClassOf(1<<20) != 1 {
		t.Fatal("ClassOf")
	}
}

// Observe costs no allocation once each (code, response) pair was seen.
func TestObserveAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	r := newTestRequests(t)
	r.Observe(105, 17, time.Microsecond, 1)
	if n := testing.AllocsPerRun(1000, func() {
		r.Observe(105, 0, 0, 0)
		r.Observe(105, 17, time.Microsecond, 16)
		r.Observe(9999, 0, 0, 0)
	}); n != 0 {
		t.Fatalf("%v allocations per Observe", n)
	}
}

func TestNewRequestsRefusesBadTables(t *testing.T) {
	f := func(o RequestOptions) {
		t.Helper()
		o.Classes = []string{"a"}
		if _, err := NewRequests(o); err == nil {
			t.Errorf("NewRequests(%+v) accepted", o)
		}
	}
	f(RequestOptions{Codes: []Code{{100, "A", 0}, {100, "B", 0}}})
	f(RequestOptions{Codes: []Code{{90000, "A", 0}, {90000, "B", 0}}})
	f(RequestOptions{Codes: []Code{{100, "A", 1}}})
	f(RequestOptions{UnknownClass: 2})
}

func TestListenerEvents(t *testing.T) {
	l := NewListener("x_")
	ev := l.Events()
	ev.FrameRejected("frame_too_large")
	ev.FrameRejected("something new")
	ev.ConnRefused()
	ev.TLSHandshake(true)
	ev.TLSHandshake(false)
	ev.TLSHandshake(false)
	var b strings.Builder
	l.Write(&b)
	for _, want := range []string{`x_frames_rejected_total{reason="frame_too_large"} 1`, `x_frames_rejected_total{reason="other"} 1`,
		`x_frames_rejected_total{reason="bad_json_header"} 0`, `x_connections_refused_total{reason="max_connections"} 1`,
		`x_tls_handshakes_total{result="ok"} 1`, `x_tls_handshakes_total{result="failed"} 2`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}

// Every family the package writes passes promlint: HELP, TYPE, counter
// names ending in _total, base units.
func TestLintClean(t *testing.T) {
	r := newTestRequests(t)
	r.Observe(105, 17, time.Microsecond, 1)
	var cs Counters
	cs.Family("x_events_total", "Events.", "reason", "a", "b")[1].Inc()
	cs.Family("x_single_total", "One count.", "")
	sc := NewScrape(func(e Emitter) {
		e.Emit("x_size", 3)
		e.Emit("x_state", 1, "up")
	}, Family{"x_size", "A size.", prometheus.GaugeValue, nil}, Family{"x_state", "A state.", prometheus.GaugeValue, []string{"state"}})
	var b strings.Builder
	if err := WriteText(&b, r, NewListener("x_"), &cs, sc); err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(strings.NewReader(b.String())).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{"# TYPE x_events_total counter", `x_events_total{reason="b"} 1`, "x_single_total 0",
		"# TYPE x_size gauge", "x_size 3", `x_state{state="up"} 1`, "# HELP x_request_duration_seconds "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// A family emitted without being described fails the scrape, not the
// process.
func TestScrapeUndescribed(t *testing.T) {
	sc := NewScrape(func(e Emitter) { e.Emit("x_other", 1) }, Family{"x_size", "A size.", prometheus.GaugeValue, nil})
	if err := WriteText(io.Discard, sc); err == nil || !strings.Contains(err.Error(), "x_other") {
		t.Fatalf("err %v", err)
	}
}

// Counting through a family's children costs no allocation.
func TestCountersAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	var cs Counters
	c := cs.Family("x_events_total", "Events.", "reason", "a", "b")
	l := NewListener("x_").Events()
	if n := testing.AllocsPerRun(1000, func() {
		c[1].Inc()
		l.FrameRejected("bad_json_header")
		l.ConnRefused()
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// The quantile estimate interpolates inside the bucket holding the rank.
func TestQuantile(t *testing.T) {
	var h Histogram
	before := h.Snapshot()
	if Quantile(0.99, &before, &before) != 0 {
		t.Fatal("quantile of nothing")
	}
	h.Observe(20*time.Microsecond, 98) // (10us, 25us]
	h.Observe(3*time.Millisecond, 2)   // (2.5ms, 5ms]
	after := h.Snapshot()
	if q := Quantile(0.5, &before, &after); q <= 10*time.Microsecond || q > 25*time.Microsecond {
		t.Fatalf("p50 %v", q)
	}
	if q := Quantile(0.99, &before, &after); q <= 2500*time.Microsecond || q > 5*time.Millisecond {
		t.Fatalf("p99 %v", q)
	}
	h.Observe(time.Hour, 1000)
	inf := h.Snapshot()
	if q := Quantile(0.99, &after, &inf); q != time.Second {
		t.Fatalf("p99 in +Inf %v", q)
	}
}
