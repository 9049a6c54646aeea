// metrics.go holds the server's metrics: the per-code request counters and
// latency histograms updated on every request, the event counters, the
// gauges read from the route table at scrape time, and the per-minute
// summary line computed from the same counters.
package server

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/route"
)

// codeSlots is the size of the code -> slot table: every code of the code
// table is below it (newServerMetrics checks).
const codeSlots = 1024

// Response codes other than SUCCESS, the response label of the error counter.
var errorResponses = [...]struct {
	code int32
	name string
}{
	{codec.SystemError, "SYSTEM_ERROR"},
	{codec.SystemBusy, "SYSTEM_BUSY"},
	{codec.RequestCodeNotSupported, "REQUEST_CODE_NOT_SUPPORTED"},
	{codec.NoPermission, "NO_PERMISSION"},
	{codec.TopicNotExist, "TOPIC_NOT_EXIST"},
	{codec.QueryNotFound, "QUERY_NOT_FOUND"},
	{-1, "OTHER"}, // last: any other code
}

func errorSlot(code int32) int {
	for i, r := range errorResponses[:len(errorResponses)-1] {
		if r.code == code {
			return i
		}
	}
	return len(errorResponses) - 1
}

// latencyBounds are the histogram's bucket upper bounds. A request is timed
// from its decoded frame to its queued answer, so everything but a
// registration storm or a slow disk lands in the first buckets.
var latencyBounds = [...]time.Duration{
	10 * time.Microsecond, 25 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, time.Second,
}

// latencyHistogram is a Prometheus histogram updated with two atomic adds
// and no lock. The library's PrometheusHistogram takes a mutex per update,
// which every core answering route queries would contend on.
type latencyHistogram struct {
	buckets [len(latencyBounds) + 1]atomic.Uint64 // not cumulative; the last is +Inf
	sumNs   atomic.Uint64
}

// observe records d as weight observations.
func (h *latencyHistogram) observe(d time.Duration, weight uint64) {
	i := 0
	for i < len(latencyBounds) && d > latencyBounds[i] {
		i++
	}
	h.buckets[i].Add(weight)
	h.sumNs.Add(uint64(max(d, 0)) * weight)
}

func (h *latencyHistogram) write(w io.Writer, name, labels string) {
	var cum uint64
	for i, ub := range latencyBounds {
		cum += h.buckets[i].Load()
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels, strconv.FormatFloat(ub.Seconds(), 'g', -1, 64), cum)
	}
	cum += h.buckets[len(latencyBounds)].Load()
	fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, cum)
	fmt.Fprintf(w, "%s_sum{%s} %s\n", name, labels, strconv.FormatFloat(float64(h.sumNs.Load())/1e9, 'g', -1, 64))
	fmt.Fprintf(w, "%s_count{%s} %d\n", name, labels, cum)
}

// Label values of the event counters. Each is a fixed set.
var (
	evictionReasons = [...]string{route.ReasonTimeout, route.ReasonConnClosed, route.ReasonUnregistered}
	frameReasons    = [...]string{
		codec.ReasonFrameTooLarge, codec.ReasonFrameTooShort, codec.ReasonBadHeaderLength,
		codec.ReasonUnknownSerializeType, codec.ReasonBadJSONHeader, codec.ReasonBadBinaryHeader,
		"other",
	}
	authReasons = [...]struct {
		r    auth.Reason
		name string
	}{
		{auth.ReasonAddress, "address"},
		{auth.ReasonUnsigned, "unsigned"},
		{auth.ReasonUnknownAccount, "unknown_account"},
		{auth.ReasonBadSignature, "bad_signature"},
		{auth.ReasonRole, "role"},
		{0, "misconfigured"}, // last: the policy could not be built
	}
)

// serverMetrics is everything one Server counts. All counters are resolved
// when the server is built, so updating them is an index and an atomic add.
type serverMetrics struct {
	set *metrics.Set

	// Request codes have counters of their own only when the code table
	// has them; any other code is counted as UNKNOWN (slot 0), so the label
	// set stays small whatever peers send.
	slot     [codeSlots]uint8 // request code -> index into the tables below; 0 = UNKNOWN
	names    []string         // by slot
	class    []class          // by slot
	requests []*metrics.Counter
	// errors are created on first use: most (code, response) pairs never
	// happen, and a scrape need not list them all at zero.
	errors  [][len(errorResponses)]atomic.Pointer[metrics.Counter]
	errorMu sync.Mutex
	latency [numClasses]latencyHistogram

	regChanged, regUnchanged *metrics.Counter
	evictions                [len(evictionReasons)]*metrics.Counter
	badFrames                [len(frameReasons)]*metrics.Counter
	authRefused              [len(authReasons)]*metrics.Counter
	connRefused              *metrics.Counter
	tlsOK, tlsFailed         *metrics.Counter

	// summary is the state of the per-minute log line.
	summary struct {
		mu      sync.Mutex
		at      time.Time
		classes [numClasses]uint64
		errors  uint64
	}
}

// newServerMetrics makes the metrics of a server serving codes.
func newServerMetrics(codes []requestCode) (*serverMetrics, error) {
	m := &serverMetrics{set: metrics.NewSet()}
	m.names = append(m.names, "UNKNOWN")
	m.class = append(m.class, classAdmin)
	for _, c := range codes {
		if c.code <= 0 || c.code >= codeSlots || m.slot[c.code] != 0 || len(m.names) > 255 {
			return nil, fmt.Errorf("metrics: request code %d out of the slot table or repeated", c.code)
		}
		m.slot[c.code] = uint8(len(m.names))
		m.names = append(m.names, codec.RequestCodeName(c.code))
		m.class = append(m.class, c.class)
	}
	m.requests = make([]*metrics.Counter, len(m.names))
	for i, name := range m.names {
		m.requests[i] = m.set.NewCounter(`rocketns_requests_total{code="` + name + `"}`)
	}
	m.errors = make([][len(errorResponses)]atomic.Pointer[metrics.Counter], len(m.names))

	m.regChanged = m.set.NewCounter(`rocketns_registrations_total{result="changed"}`)
	m.regUnchanged = m.set.NewCounter(`rocketns_registrations_total{result="unchanged"}`)
	for i, r := range evictionReasons {
		m.evictions[i] = m.set.NewCounter(`rocketns_broker_removals_total{reason="` + r + `"}`)
	}
	for i, r := range frameReasons {
		m.badFrames[i] = m.set.NewCounter(`rocketns_frames_rejected_total{reason="` + r + `"}`)
	}
	for i, r := range authReasons {
		m.authRefused[i] = m.set.NewCounter(`rocketns_auth_refusals_total{reason="` + r.name + `"}`)
	}
	m.connRefused = m.set.NewCounter(`rocketns_connections_refused_total{reason="max_connections"}`)
	m.tlsOK = m.set.NewCounter(`rocketns_tls_handshakes_total{result="ok"}`)
	m.tlsFailed = m.set.NewCounter(`rocketns_tls_handshakes_total{result="failed"}`)
	version, goVersion := buildVersion()
	m.set.NewGauge(`rocketns_build_info{version="`+labelValue(version)+`",go_version="`+labelValue(goVersion)+`"}`,
		func() float64 { return 1 })
	m.set.RegisterMetricsWriter(m.writeLatency)
	return m, nil
}

// buildVersion is the main module's version as the Go toolchain stamped it
// ("(devel)" for a build from a work tree).
func buildVersion() (version, goVersion string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", runtime.Version()
	}
	version = bi.Main.Version
	if version == "" {
		version = "unknown"
	}
	return version, bi.GoVersion
}

// labelValue escapes a Prometheus label value.
func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// classOf is the metrics class of a request code; unknown codes count as
// admin requests.
func (m *serverMetrics) classOf(code int32) class { return m.class[m.codeSlot(code)] }

func (m *serverMetrics) codeSlot(code int32) int {
	if code < 0 || code >= codeSlots {
		return 0
	}
	return int(m.slot[code])
}

// request counts one answered request of code with response code resp. It
// allocates nothing, except once per (code, error response) pair the first
// time that pair is seen.
func (m *serverMetrics) request(code, resp int32) {
	i := m.codeSlot(code)
	m.requests[i].Inc()
	if resp != codec.Success {
		m.errorCounter(i, errorSlot(resp)).Inc()
	}
}

// observe is the listener's Observe: every request answered, timed or not
// (weight 0).
func (m *serverMetrics) observe(code, resp int32, took time.Duration, weight uint64) {
	if weight == 0 {
		m.request(code, resp)
		return
	}
	m.requestTimed(code, resp, took, weight)
}

// requestTimed is request for a request that was timed and took d; the
// sample stands for weight requests (routeSample).
func (m *serverMetrics) requestTimed(code, resp int32, d time.Duration, weight uint64) {
	m.request(code, resp)
	m.latency[m.class[m.codeSlot(code)]].observe(d, weight)
}

func (m *serverMetrics) errorCounter(i, e int) *metrics.Counter {
	if c := m.errors[i][e].Load(); c != nil {
		return c
	}
	m.errorMu.Lock()
	defer m.errorMu.Unlock()
	c := m.set.GetOrCreateCounter(`rocketns_request_errors_total{code="` + m.names[i] + `",response="` + errorResponses[e].name + `"}`)
	m.errors[i][e].Store(c)
	return c
}

func (m *serverMetrics) registration(changed bool) {
	if changed {
		m.regChanged.Inc()
	} else {
		m.regUnchanged.Inc()
	}
}

func (m *serverMetrics) eviction(reason string) {
	for i, r := range evictionReasons {
		if r == reason {
			m.evictions[i].Inc()
			return
		}
	}
}

func (m *serverMetrics) badFrame(reason string) {
	i := 0
	for i < len(frameReasons)-1 && frameReasons[i] != reason {
		i++
	}
	m.badFrames[i].Inc()
}

// authRefusal counts a NO_PERMISSION refusal; reason 0 is a policy that
// could not be built.
func (m *serverMetrics) authRefusal(reason auth.Reason) {
	i := 0
	for i < len(authReasons)-1 && authReasons[i].r != reason {
		i++
	}
	m.authRefused[i].Inc()
}

func (m *serverMetrics) tlsHandshake(ok bool) {
	if ok {
		m.tlsOK.Inc()
	} else {
		m.tlsFailed.Inc()
	}
}

func (m *serverMetrics) writeLatency(w io.Writer) {
	const name = "rocketns_request_duration_seconds"
	fmt.Fprintf(w, "# HELP %s Time from a decoded request to its queued answer, by request class.\n", name)
	fmt.Fprintf(w, "# TYPE %s histogram\n", name)
	for c := range m.latency {
		m.latency[c].write(w, name, `class="`+classNames[c]+`"`)
	}
}

// writeMetrics writes every metric of s in the Prometheus text format: the
// counters, the gauges read now from the route table, the KV store and the
// connection table, and the Go runtime and process metrics.
func (s *Server) writeMetrics(w io.Writer) {
	s.metrics.set.WritePrometheus(w)
	st := s.routes.Stats()
	gauge := func(name string, v int) { metrics.WriteGaugeUint64(w, name, uint64(max(v, 0))) }
	gauge("rocketns_brokers", st.Live)
	gauge("rocketns_broker_groups", st.BrokerGroups)
	gauge("rocketns_clusters", st.Clusters)
	gauge("rocketns_topics", st.Topics)
	gauge("rocketns_topic_broker_entries", s.routes.TopicBrokerEntries())
	gauge("rocketns_route_cache_bytes", int(s.routes.CachedRouteBytes()))
	gauge("rocketns_kv_keys", s.kv.Len())
	gauge("rocketns_connections", s.connCount())
	up := 0
	if s.ready() == "" {
		up = 1
	}
	gauge("rocketns_ready", up)
	metrics.WriteProcessMetrics(w)
}

// logSummary writes the per-minute line: table sizes and, per request
// class, the rate since the previous line. now is passed in so a test can
// drive it.
func (s *Server) logSummary(now time.Time) {
	m := s.metrics
	m.summary.mu.Lock()
	defer m.summary.mu.Unlock()
	var counts [numClasses]uint64
	for i, c := range m.requests {
		counts[m.class[i]] += c.Get()
	}
	var errs uint64
	for i := range m.errors {
		for e := range m.errors[i] {
			if c := m.errors[i][e].Load(); c != nil {
				errs += c.Get()
			}
		}
	}
	prev := m.summary.at
	if prev.IsZero() {
		prev = s.started
	}
	secs := now.Sub(prev).Seconds()
	rate := func(n, before uint64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(int64((float64(n-before)/secs)*100+0.5)) / 100
	}
	st := s.routes.Stats()
	s.log.Info("summary",
		slog.Int("brokers", st.Live), slog.Int("broker_groups", st.BrokerGroups), slog.Int("clusters", st.Clusters),
		slog.Int("topics", st.Topics), slog.Int("connections", s.connCount()),
		slog.Float64("route_qps", rate(counts[classRoute], m.summary.classes[classRoute])),
		slog.Float64("registration_qps", rate(counts[classRegistration], m.summary.classes[classRegistration])),
		slog.Float64("admin_qps", rate(counts[classAdmin], m.summary.classes[classAdmin])),
		slog.Uint64("errors", errs-m.summary.errors),
		slog.Duration("period", now.Sub(prev).Round(time.Second)))
	m.summary.at, m.summary.classes, m.summary.errors = now, counts, errs
}
