// metrics.go holds the NameServer's metrics: the request and listener
// counters (core/metrics) built from the code table, the NameServer's own
// event counters, the gauges read from the route table at scrape time, and
// the per-minute summary line computed from the same counters.

package server

import (
	"io"
	"log/slog"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/metrics"
	"github.com/rocketns/rocketns/core/route"
)

// metricsPrefix starts every series the NameServer writes.
const metricsPrefix = "rocketns_"

// errorResponses are the response codes with an error label of their own.
var errorResponses = []metrics.Response{
	{Code: codec.SystemError, Name: "SYSTEM_ERROR"},
	{Code: codec.SystemBusy, Name: "SYSTEM_BUSY"},
	{Code: codec.RequestCodeNotSupported, Name: "REQUEST_CODE_NOT_SUPPORTED"},
	{Code: codec.NoPermission, Name: "NO_PERMISSION"},
	{Code: codec.TopicNotExist, Name: "TOPIC_NOT_EXIST"},
	{Code: codec.QueryNotFound, Name: "QUERY_NOT_FOUND"},
}

// Label values of the NameServer's event counters. Each is a fixed set.
var (
	evictionReasons = [...]string{route.ReasonTimeout, route.ReasonConnClosed, route.ReasonUnregistered}
	authReasons     = [...]struct {
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
	requests *metrics.Requests
	listener *metrics.Listener

	set                      *vm.Set
	regChanged, regUnchanged *vm.Counter
	evictions                [len(evictionReasons)]*vm.Counter
	authRefused              [len(authReasons)]*vm.Counter

	// summary is the state of the per-minute log line.
	summary struct {
		mu      sync.Mutex
		at      time.Time
		classes []uint64
		errors  uint64
	}
}

// newServerMetrics makes the metrics of a server serving codes.
func newServerMetrics(codes []requestCode) (*serverMetrics, error) {
	o := metrics.RequestOptions{
		Prefix:       metricsPrefix,
		Classes:      classNames[:],
		UnknownClass: int(classAdmin),
		Responses:    errorResponses,
	}
	for _, c := range codes {
		o.Codes = append(o.Codes, metrics.Code{Code: c.code, Name: codec.RequestCodeName(c.code), Class: int(c.class)})
	}
	requests, err := metrics.NewRequests(o)
	if err != nil {
		return nil, err
	}
	m := &serverMetrics{requests: requests, listener: metrics.NewListener(metricsPrefix), set: vm.NewSet()}
	m.regChanged = m.set.NewCounter(metricsPrefix + `registrations_total{result="changed"}`)
	m.regUnchanged = m.set.NewCounter(metricsPrefix + `registrations_total{result="unchanged"}`)
	for i, r := range evictionReasons {
		m.evictions[i] = m.set.NewCounter(metricsPrefix + `broker_removals_total{reason="` + r + `"}`)
	}
	for i, r := range authReasons {
		m.authRefused[i] = m.set.NewCounter(metricsPrefix + `auth_refusals_total{reason="` + r.name + `"}`)
	}
	return m, nil
}

// classOf is the metrics class of a request code; unknown codes count as
// admin requests.
func (m *serverMetrics) classOf(code int32) class { return class(m.requests.ClassOf(code)) }

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

// authRefusal counts a NO_PERMISSION refusal; reason 0 is a policy that
// could not be built.
func (m *serverMetrics) authRefusal(reason auth.Reason) {
	i := 0
	for i < len(authReasons)-1 && authReasons[i].r != reason {
		i++
	}
	m.authRefused[i].Inc()
}

// writeMetrics is the NameServer's collector on the admin listener: the
// request, listener and event counters, and the gauges read now from the
// route table, the KV store and the connection table.
func (s *Server) writeMetrics(w io.Writer) {
	m := s.metrics
	m.requests.Write(w)
	m.listener.Write(w)
	m.set.WritePrometheus(w)
	st := s.routes.Stats()
	gauge := func(name string, v int) { vm.WriteGaugeUint64(w, metricsPrefix+name, uint64(max(v, 0))) }
	gauge("brokers", st.Live)
	gauge("broker_groups", st.BrokerGroups)
	gauge("clusters", st.Clusters)
	gauge("topics", st.Topics)
	gauge("topic_broker_entries", s.routes.TopicBrokerEntries())
	gauge("route_cache_bytes", int(s.routes.CachedRouteBytes()))
	gauge("kv_keys", s.kv.Len())
	gauge("connections", s.connCount())
	if s.remote != nil {
		// The remoting listener's bounds (README "Limits").
		rs := s.remote.Stats()
		vm.WriteCounterUint64(w, metricsPrefix+"connections_refused_per_address_total", uint64(rs.RefusedPerIP))
		gauge("buffered_bytes", int(rs.Budget.Used))
		gauge("buffered_bytes_limit", int(rs.Budget.Limit))
		vm.WriteCounterUint64(w, metricsPrefix+`buffer_closes_total{reason="refused"}`, uint64(rs.Budget.Refused))
		vm.WriteCounterUint64(w, metricsPrefix+`buffer_closes_total{reason="evicted"}`, uint64(rs.Budget.Evicted))
	}
	up := 0
	if s.ready() == "" {
		up = 1
	}
	gauge("ready", up)
}

// logSummary writes the per-minute line: table sizes and, per request
// class, the rate since the previous line. now is passed in so a test can
// drive it.
func (s *Server) logSummary(now time.Time) {
	m := s.metrics
	m.summary.mu.Lock()
	defer m.summary.mu.Unlock()
	counts, errs := m.requests.Totals()
	before := m.summary.classes
	if before == nil {
		before = make([]uint64, numClasses)
	}
	prev := m.summary.at
	if prev.IsZero() {
		prev = s.started
	}
	secs := now.Sub(prev).Seconds()
	rate := func(c class) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(int64((float64(counts[c]-before[c])/secs)*100+0.5)) / 100
	}
	st := s.routes.Stats()
	s.log.Info("summary",
		slog.Int("brokers", st.Live), slog.Int("broker_groups", st.BrokerGroups), slog.Int("clusters", st.Clusters),
		slog.Int("topics", st.Topics), slog.Int("connections", s.connCount()),
		slog.Float64("route_qps", rate(classRoute)),
		slog.Float64("registration_qps", rate(classRegistration)),
		slog.Float64("admin_qps", rate(classAdmin)),
		slog.Uint64("errors", errs-m.summary.errors),
		slog.Duration("period", now.Sub(prev).Round(time.Second)))
	m.summary.at, m.summary.classes, m.summary.errors = now, counts, errs
}
