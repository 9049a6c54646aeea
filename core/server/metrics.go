// metrics.go holds the NameServer's metrics: the request and listener
// counters (core/metrics) built from the code table, the NameServer's own
// event counters, the gauges read from the route table at scrape time, and
// the per-minute summary line computed from the same counters.

package server

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/metrics"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/status"
)

// metricsPrefix starts every series the NameServer writes.
const metricsPrefix = "rocketns_"

// errorResponses are the response codes with an error label of their own.
var errorResponses = metrics.Responses(codec.SystemError, codec.SystemBusy, codec.RequestCodeNotSupported,
	codec.NoPermission, codec.TopicNotExist, codec.QueryNotFound)

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
		{auth.ReasonBinding, "binding"},
		{auth.ReasonNotStrict, "not_strict"},
		{auth.ReasonStale, "stale"},
		{auth.ReasonReplay, "replay"},
		{auth.ReasonReplayCacheFull, "replay_cache_full"},
		{auth.ReasonForeign, "foreign"},
		{auth.ReasonTakeover, "takeover"},
		{0, "misconfigured"}, // last: the policy could not be built
	}
)

// serverMetrics is everything one Server counts. All counters are resolved
// when the server is built, so updating them is an index and an atomic add.
type serverMetrics struct {
	requests *metrics.Requests
	listener *metrics.Listener

	events      metrics.Counters
	regs        []metrics.Counter // changed, unchanged
	evictions   []metrics.Counter // by evictionReasons
	authRefused []metrics.Counter // by authReasons
	regRefused  []metrics.Counter // by refusedReasons

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
	m := &serverMetrics{requests: requests, listener: metrics.NewListener(metricsPrefix)}
	m.regs = m.events.Family(metricsPrefix+"registrations_total",
		"REGISTER_BROKER accepted, by result: changed (the broker or its topics changed) or unchanged.",
		"result", "changed", "unchanged")
	m.evictions = m.events.Family(metricsPrefix+"broker_removals_total",
		"Brokers removed from the tables, by reason.", "reason", evictionReasons[:]...)
	m.regRefused = m.events.Family(metricsPrefix+"registrations_refused_total",
		"REGISTER_BROKER refused for its topics, by the setting that refused it.", "reason", refusedReasons[:]...)
	names := make([]string, len(authReasons))
	for i, r := range authReasons {
		names[i] = r.name
	}
	m.authRefused = m.events.Family(metricsPrefix+"auth_refusals_total",
		"Requests refused with NO_PERMISSION, by reason.", "reason", names...)
	return m, nil
}

// classOf is the metrics class of a request code; unknown codes count as
// admin requests.
func (m *serverMetrics) classOf(code int32) class { return class(m.requests.ClassOf(code)) }

func (m *serverMetrics) registration(changed bool) {
	if changed {
		m.regs[0].Inc()
	} else {
		m.regs[1].Inc()
	}
}

// The topic settings a registration may be refused by, as
// registrations_refused_total labels them.
const (
	refusedMaxTopicsPerBroker = iota
	refusedMaxTopics
	refusedTopicQuota
)

var refusedReasons = [...]string{"max_topics_per_broker", "max_topics", "topic_quota"}

func (m *serverMetrics) registrationRefused(reason int) { m.regRefused[reason].Inc() }

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

// gaugeFamilies are the NameServer's gauges read at scrape time.
var gaugeFamilies = []metrics.Family{
	{Name: metricsPrefix + "brokers", Help: "Live brokers (brokerLiveTable entries).", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "broker_groups", Help: "Broker groups (brokerNames).", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "clusters", Help: "Clusters.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "topics", Help: "Topics.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "topic_broker_entries", Help: "(topic, broker group) queue data entries.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "route_cache_bytes", Help: "Bytes of encoded route bodies cached for route queries.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "kv_keys", Help: "KV config entries over all namespaces.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "connections", Help: "Open remoting connections, TLS included.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "ready", Help: "1 when /readyz would answer 200.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "connections_refused_per_address_total", Help: "Connections closed at accept because their source address had maxConnectionsPerIP open.", Type: prometheus.CounterValue},
	{Name: metricsPrefix + "buffered_bytes", Help: "Request and response bytes the remoting connections hold buffered (maxBufferedBytes budget).", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "buffered_bytes_peak", Help: "The most request and response bytes the remoting connections held buffered at once since start.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "buffered_bytes_limit", Help: "The buffered-bytes budget (maxBufferedBytes).", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "buffer_closes_total", Help: "Connections closed for the buffered-bytes budget: refused (the asker) or evicted (a larger holder).", Type: prometheus.CounterValue, Labels: []string{"reason"}},
	{Name: metricsPrefix + "heavy_requests_running", Help: "Heavy requests (large registrations, topic lists, cluster info) being answered.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "heavy_requests_waiting", Help: "Heavy requests waiting for their turn.", Type: prometheus.GaugeValue},
}

// collectors are the NameServer's metrics on the admin listener: the
// request, listener and event counters, and the gauges read at each scrape
// from the route table, the KV store and the connection table.
func (s *Server) collectors() []prometheus.Collector {
	m := s.metrics
	return []prometheus.Collector{m.requests, m.listener, &m.events, metrics.NewScrape(s.collectGauges, gaugeFamilies...)}
}

func (s *Server) collectGauges(e metrics.Emitter) {
	st := s.routes.Stats()
	gauge := func(name string, v int) { e.Emit(metricsPrefix+name, float64(max(v, 0))) }
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
		e.Emit(metricsPrefix+"connections_refused_per_address_total", float64(rs.RefusedPerIP))
		gauge("buffered_bytes", int(rs.Budget.Used))
		gauge("buffered_bytes_peak", int(rs.Budget.Peak))
		gauge("buffered_bytes_limit", int(rs.Budget.Limit))
		e.Emit(metricsPrefix+"buffer_closes_total", float64(rs.Budget.Refused), "refused")
		e.Emit(metricsPrefix+"buffer_closes_total", float64(rs.Budget.Evicted), "evicted")
		gauge("heavy_requests_running", rs.HeavyRunning)
		gauge("heavy_requests_waiting", rs.HeavyWaiting)
	}
	up := 0
	if s.ready() == "" {
		up = 1
	}
	gauge("ready", up)
}

// historyCounts are the totals the status page's chart samples: route
// queries, accepted registrations, the route latency histogram.
func (s *Server) historyCounts() status.Counts {
	m := s.metrics
	byClass, _ := m.requests.Totals()
	return status.Counts{
		Routes:        byClass[classRoute],
		Registrations: m.regs[0].Load() + m.regs[1].Load(),
		RouteLatency:  m.requests.Latency(int(classRoute)),
	}
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
