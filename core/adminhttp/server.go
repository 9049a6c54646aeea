// server.go holds the admin listener: its registrations, its handler and
// its lifecycle. Its caps (connections, requests in flight, header size,
// timeouts) are in limits.go.

package adminhttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rocketns/rocketns/core/buildinfo"
)

// Options configure an admin listener. Zero limits take the defaults of
// limits.go.
type Options struct {
	// Addr is the host:port to listen on; "" means no listener (Handler
	// still serves, for embedding).
	Addr string
	// Log receives the listener's lines; nil is slog.Default().
	Log *slog.Logger
	// WriteTimeout replaces DefaultWriteTimeout when set.
	WriteTimeout time.Duration
	// Limits bound what clients can hold (limits.go).
	Limits Limits
}

// Server is one admin listener and what is registered with it. Register
// everything before Listen; the handler is built then.
type Server struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sections []section
	registry *prometheus.Registry
	regErr   error // the first collector that could not be registered
	ready    []check
	healthy  []check
	notes    []func() string // lines /readyz adds to its answer (Note)
	profiles http.Handler

	tasks     []func(stop <-chan struct{})
	stop      chan struct{}
	tasksDone sync.WaitGroup
	stopOnce  sync.Once

	limits Limits
	gate   *gate
	ln     *limitListener
	srv    *http.Server
	done   chan struct{} // closed when Serve returned
}

type section struct {
	pattern string
	h       http.Handler
}

// check is a readiness or health check: "" when it passes, else why not.
type check struct {
	name string
	fn   func() string
}

// New makes an admin listener; nothing is bound until Listen.
func New(o Options) *Server {
	s := &Server{opts: o, log: o.Log, registry: prometheus.NewRegistry(), limits: o.Limits.withDefaults()}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.gate = newGate(s.limits.MaxInFlight, s.limits.QueueWait)
	s.Register(buildInfo(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return s
}

// Handle adds a section: h serves pattern (a net/http ServeMux pattern,
// "GET /rocketmq/nsaddr" or "/"). /metrics, /healthz, /readyz and
// /debug/pprof/ are the listener's own.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sections = append(s.sections, section{pattern, h})
}

// Register adds metrics collectors, scraped on every GET /metrics beside
// the build information and the Go runtime and process collectors. A
// collector that cannot be registered (a series another one already has)
// is a mistake in the program: Listen reports it and /metrics answers 500
// naming it.
func (s *Server) Register(cs ...prometheus.Collector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		if err := s.registry.Register(c); err != nil && s.regErr == nil {
			s.regErr = fmt.Errorf("admin metrics: %w", err)
		}
	}
}

// Ready adds a readiness check: fn returns "" when ready, else why not.
// /readyz is 200 only when every check passes, and otherwise 503 with the
// first failing check's reason.
func (s *Server) Ready(name string, fn func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = append(s.ready, check{name, fn})
}

// Note adds a line that /readyz writes after its verdict, ready or not:
// something a person probing the process wants to know (how it started),
// never a condition of readiness.
func (s *Server) Note(fn func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fn)
}

// Healthy adds a liveness check, composed into /healthz as Ready's are
// into /readyz. With none, /healthz answers ok while the process serves.
func (s *Server) Healthy(name string, fn func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.healthy = append(s.healthy, check{name, fn})
}

// ServeProfiles has the listener also serve h (the net/http/pprof
// endpoints) under /debug/pprof/. The write timeout applies to h: an
// endpoint that streams for longer must extend its own write deadline, as
// net/http/pprof's do for ?seconds=.
func (s *Server) ServeProfiles(h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profiles = h
}

// Run adds a background task of the listener's sections (sampling for a
// page's chart): fn runs on a goroutine of its own from Serve until stop is
// closed by Shutdown. Nothing runs without a listener.
func (s *Server) Run(fn func(stop <-chan struct{})) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks = append(s.tasks, fn)
}

// Readiness is why the process is not ready, "" when every readiness check
// passes: what /readyz reports, for a gauge or a log line.
func (s *Server) Readiness() string {
	s.mu.Lock()
	checks := s.ready
	s.mu.Unlock()
	return firstFailing(checks)
}

func firstFailing(checks []check) string {
	for _, c := range checks {
		if why := c.fn(); why != "" {
			return why
		}
	}
	return ""
}

// Handler serves every endpoint. The listener serves it; it is exported for
// embedding the endpoints in another server.
func (s *Server) Handler() http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	mux := http.NewServeMux()
	ready, healthy, regErr, notes := s.ready, s.healthy, s.regErr, s.notes
	scrape := promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
	mux.Handle("GET /metrics", s.gate.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if regErr != nil {
			WriteText(w, http.StatusInternalServerError, regErr.Error()+"\n")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		scrape.ServeHTTP(w, r)
	})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if why := firstFailing(healthy); why != "" {
			WriteText(w, http.StatusServiceUnavailable, "unhealthy: "+why+"\n")
			return
		}
		WriteText(w, http.StatusOK, "ok\n")
	})
	// 200 only when route queries (or whatever the process serves) get
	// real answers: probes that take a process out of rotation use it
	// during start and shutdown.
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		var extra strings.Builder
		for _, fn := range notes {
			if line := fn(); line != "" {
				extra.WriteString(line + "\n")
			}
		}
		if why := firstFailing(ready); why != "" {
			WriteText(w, http.StatusServiceUnavailable, "not ready: "+why+"\n"+extra.String())
			return
		}
		WriteText(w, http.StatusOK, "ready\n"+extra.String())
	})
	// The probes stay outside the gate: a burst of status pages must not
	// make a load balancer take the process out of rotation.
	if s.profiles != nil {
		mux.Handle("/debug/pprof/", s.gate.wrap(s.profiles))
	}
	for _, sec := range s.sections {
		mux.Handle(sec.pattern, s.gate.wrap(sec.h))
	}
	return mux
}

// WriteText answers a short plain-text body that no cache keeps.
func WriteText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}

// Addr is the address the listener is bound to, "" when there is none or
// before Listen (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Listen binds Options.Addr; it does nothing when Addr is empty. Binding
// apart from serving lets a taken port fail start-up cheaply.
func (s *Server) Listen() error {
	s.mu.Lock()
	regErr := s.regErr
	s.mu.Unlock()
	if regErr != nil {
		return regErr
	}
	addr := strings.TrimSpace(s.opts.Addr)
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", addr, err)
	}
	s.ln = newLimitListener(ln, s.limits.MaxConns, s.log)
	return nil
}

// Serve serves the bound listener on a goroutine of its own; endpoints
// names what the line logged says is served.
func (s *Server) Serve(endpoints string) {
	if s.ln == nil {
		return
	}
	writeTimeout := DefaultWriteTimeout
	if s.opts.WriteTimeout > 0 {
		writeTimeout = s.opts.WriteTimeout
	}
	// The write timeout holds for the profiles too: those that run for a
	// requested time (?seconds= of a CPU profile, a trace or a delta
	// profile) push their own connection's deadline out by that time
	// through http.ResponseController, which net/http/pprof does itself.
	l := s.limits
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ConnState:         s.ln.track,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.done, s.stop = make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	for _, fn := range s.tasks {
		s.tasksDone.Go(func() { fn(s.stop) })
	}
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin listener stopped; metrics and probes are unavailable", "addr", s.ln.Addr().String(), "err", err)
		}
	}()
	s.log.Info("admin listener serving "+endpoints, "addr", s.ln.Addr().String(), "pprof", s.profiles != nil,
		"max_conns", l.MaxConns, "max_in_flight", l.MaxInFlight)
	if s.profiles != nil && !isLoopback(s.ln.Addr()) {
		s.log.Warn("pprof is served on an admin listener beyond loopback: profiles reveal the server's internals",
			"addr", s.ln.Addr().String(), "setting", "adminListen")
	}
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// Shutdown stops the listener, letting answers in progress finish until
// ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		if s.ln == nil {
			return nil
		}
		err := s.ln.Close() // bound, never served
		s.ln = nil
		return err
	}
	s.stopOnce.Do(func() { close(s.stop) })
	s.tasksDone.Wait()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
		return fmt.Errorf("stop admin listener: %w", err)
	}
	<-s.done
	return nil
}

// buildInfo is the build_info gauge: the version stamped at build time
// (core/buildinfo: the tag or commit, "-dirty" for a modified tree).
func buildInfo() prometheus.Collector {
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "rocketns_build_info",
		Help:        "Always 1; the labels say which build runs.",
		ConstLabels: prometheus.Labels{"version": buildinfo.Version(), "go_version": goVersion},
	})
	g.Set(1)
	return g
}

// LabelValue escapes a Prometheus label value.
func LabelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
