// server.go holds Server: building it and its listener, Start, Shutdown
// and the periodic tasks.

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/certs"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/kv"
	"github.com/rocketns/rocketns/core/logcap"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

// Server is one NameServer. Everything it owns is reachable from here; there
// is no package-level state.
type Server struct {
	cfg    *config.Config
	log    *slog.Logger
	routes *route.Table
	kv     *kv.Store

	// remote is the remoting listener, built by Start (or by a test's
	// pipe) from the dispatch table.
	remote *remoting.Server
	// budget bounds the bytes the remoting connections buffer; built by
	// New so that an embedded controller's port can share it.
	budget *remoting.Budget

	started time.Time

	// admin holds the run-time configuration and the 905 sender
	// (handlers_config.go, notify.go).
	admin adminState

	// tls is the certificate material; nil when tls.server.mode is
	// disabled.
	tls *certs.Material

	hooks hooks

	// metrics are always kept: the per-minute summary reads them too
	// (metrics.go). adminHTTP serves them when adminListen is set.
	metrics   *serverMetrics
	adminHTTP *adminhttp.Server
	listening atomic.Bool

	closing atomic.Bool
	stop    chan struct{}
	tasks   sync.WaitGroup

	// now, when set (WithClock), is the route table's clock instead of
	// the wall clock.
	now func() int64

	// stalled counts connections closed mid-frame (stalled.go).
	stalled atomic.Uint64

	// warm is the route snapshot's state (warm.go).
	warm warm
}

// Option changes how New builds a server.
type Option func(*Server)

// WithClock makes the route table read the time from now (unix
// milliseconds) instead of the wall clock: liveness, and so expiry, follow
// it. For tests that decide when brokers expire; run them with a long
// scanNotActiveBrokerInterval and scan when the clock has moved.
func WithClock(now func() int64) Option { return func(s *Server) { s.now = now } }

// hooks let tests observe events that have no other outside effect. All nil
// in production.
type hooks struct {
	// connClosed runs after a connection's brokers were dropped.
	connClosed func(id route.ConnID)
	// shutdownBegun runs in Shutdown once the server counts as shutting
	// down, before anything is stopped.
	shutdownBegun func()
}

// New builds a server from cfg and loads the KV store at cfg.KVConfigPath. A
// corrupt KV file is an error: starting with an empty store would overwrite
// the operator's data on the first write.
func New(cfg *config.Config, log *slog.Logger, opts ...Option) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	if _, ok := log.Handler().(*logcap.Handler); !ok {
		// Request strings (KV keys, broker and topic names) reach the log
		// capped whatever logger the server is given; the process's
		// logger (cmd/namesrv) rate-limits as well.
		log = slog.New(logcap.New(log.Handler(), logcap.Options{Burst: -1}))
	}
	store, err := kv.Open(cfg.KVConfigPath, kv.WithLimits(kv.Limits{
		MaxKeyBytes:       cfg.KVMaxKeyBytes,
		MaxValueBytes:     cfg.KVMaxValueBytes,
		MaxNamespaceBytes: cfg.KVMaxNamespaceBytes,
		MaxTotalBytes:     cfg.KVMaxTotalBytes,
	}))
	if err != nil {
		return nil, fmt.Errorf("load kv config: %w", err)
	}
	// Loaded whole all the same (README "Limits"): refusing to start, or
	// dropping entries, would lose the operator's data.
	for _, over := range store.OverLimits() {
		log.Warn("kv config loaded over its limits; writes that make it larger are refused until it is cleaned up",
			"path", cfg.KVConfigPath, "what", over)
	}
	s := &Server{
		cfg:  cfg,
		log:  log,
		kv:   store,
		stop: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if s.metrics, err = newServerMetrics(s.codeTable()); err != nil {
		return nil, err
	}
	if s.tls, err = certs.Load(cfg, log); err != nil {
		return nil, err
	}
	s.routes = route.New(route.Options{
		SupportActingMaster:               cfg.SupportActingMaster,
		DeleteTopicWithBrokerRegistration: cfg.DeleteTopicWithBrokerRegistration,
		MaxBrokerTimeout:                  cfg.MaxHeartbeatTimeoutMillis,
		MaxTopics:                         cfg.MaxTopics,
		MaxTopicsPerSource:                cfg.MaxTopicsPerSource,
	}, s.clock)
	s.loadSnapshot()
	s.budget = remoting.NewBudget(bufferedBytes(cfg))
	s.adminHTTP = s.newAdminHTTP()
	return s, nil
}

// clock is the route table's time source: real time, read at each call, so
// expiry decisions are exact to the millisecond.
func (s *Server) clock() int64 {
	if s.now != nil {
		return s.now()
	}
	return time.Now().UnixMilli()
}

// Routes exposes the route table (for tests and the process's own status).
func (s *Server) Routes() *route.Table { return s.routes }

// reservedNets are the networks reservedConnections keeps room for: the
// admin and broker allowlists, none when neither is set.
func (s *Server) reservedNets() ([]netip.Prefix, error) {
	admin, err := auth.ParseCIDRs(s.cfg.AdminAllowCIDRs)
	if err != nil {
		return nil, err
	}
	brokers, err := auth.ParseCIDRs(s.cfg.BrokerAllowCIDRs)
	if err != nil {
		return nil, err
	}
	return append(admin, brokers...), nil
}

// listener builds the remoting listener once: the dispatch table, the
// limits and TLS from the configuration, and the hooks that tie
// connections to brokers and requests to the metrics.
func (s *Server) listener() (*remoting.Server, error) {
	if s.remote != nil {
		return s.remote, nil
	}
	cfg := s.cfg
	o := remoting.Options{
		Addr:                    net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.ListenPort)),
		Log:                     s.remotingLog(), // counts stalled closes (stalled.go)
		Routes:                  s.dispatchTable(),
		Version:                 codec.ServerVersion,
		MaxFrame:                cfg.FrameMaxLength,
		MaxConnections:          cfg.MaxConnections,
		IdleTimeout:             secondsDuration(cfg.ServerChannelMaxIdleTimeSeconds),
		WriteTimeout:            secondsDuration(cfg.ServerWriteTimeoutSeconds),
		MaxPendingRequestBytes:  cfg.MaxPendingRequestBytes,
		MaxPendingResponseBytes: cfg.MaxPendingResponseBytes,
		MaxConnectionsPerIP:     cfg.MaxConnectionsPerIP,
		Budget:                  s.budget,
		HeavyShare:              float64(cfg.HeavyBusyPercent) / 100,
		ConnClosed:              s.onConnClosed,
		Refused:                 s.logRefusal,
		Observe:                 s.metrics.requests.Observe,
		Events:                  s.metrics.listener.Events(),
	}
	if s.tls != nil {
		o.TLS = &remoting.TLS{Config: s.tls.Config(), Enforce: s.tls.Mode() == config.TLSEnforcing}
	}
	if nets, err := s.reservedNets(); err != nil {
		return nil, err
	} else if len(nets) > 0 {
		o.ReservedConnections = cfg.ReservedConnections
		o.Reserved = func(a netip.Addr) bool {
			for _, n := range nets {
				if n.Contains(a) {
					return true
				}
			}
			return false
		}
	}
	r, err := remoting.New(o)
	if err != nil {
		return nil, err
	}
	s.remote = r
	return r, nil
}

// Budget is the buffered-bytes budget of the remoting port, for another
// listener of the process (an embedded controller) to share, so that
// maxBufferedBytes bounds the process and not each port.
func (s *Server) Budget() *remoting.Budget { return s.budget }

// bufferedBytes is the buffered-bytes budget: maxBufferedBytes, or by
// default a share of the Go memory limit (remoting.DefaultBudgetBytes) but
// room for two frames of frameMaxLength at least (a frame being read is
// charged twice its size).
func bufferedBytes(cfg *config.Config) int64 {
	if cfg.MaxBufferedBytes > 0 {
		return int64(cfg.MaxBufferedBytes)
	}
	return max(remoting.DefaultBudgetBytes(), 4*int64(cfg.FrameMaxLength))
}

// onConnClosed unregisters every broker whose latest registration came
// over the connection (Java 4.9.8 drops only one of them). Once Shutdown
// has begun it changes nothing: Shutdown closes the brokers' connections
// itself, and the table is what the final snapshot saved and what clients
// still connected are answered until their own connections close. Java
// drops each broker as its channel closes, so a stopping server answers
// routes missing brokers until it exits.
func (s *Server) onConnClosed(id remoting.ConnID) {
	if !s.closing.Load() {
		for _, ev := range s.routes.ConnClosed(route.ConnID(id)) {
			s.logEviction(ev)
		}
	}
	if h := s.hooks.connClosed; h != nil {
		h(route.ConnID(id))
	}
}

// Start listens on cfg.BindAddress:cfg.ListenPort and serves in the
// background until Shutdown.
func (s *Server) Start() error {
	// The admin port first, so a taken one fails start-up cheaply.
	if err := s.adminHTTP.Listen(); err != nil {
		return err
	}
	r, err := s.listener()
	if err == nil {
		err = r.Start()
	}
	if err != nil {
		s.adminHTTP.Shutdown(context.Background())
		return err
	}
	s.started = time.Now()
	s.listening.Store(true)
	s.adminHTTP.Serve("/metrics, /healthz, /readyz, /rocketmq/nsaddr and /")

	scan := time.Duration(s.cfg.ScanNotActiveBrokerInterval) * time.Millisecond
	if scan <= 0 {
		scan = 5 * time.Second
	}
	s.every(scan, s.scanExpired)
	s.every(10*time.Minute, s.dumpKV)
	s.every(time.Minute, func() { s.logSummary(time.Now()) })
	s.every(time.Minute, s.logStalled)
	s.startSnapshots()
	if s.tls != nil && s.tls.Watches() {
		s.every(certs.PollInterval, s.tls.Poll)
	}
	if s.tls != nil {
		st := s.tls.Settings()
		s.log.Info("tls", "mode", s.tls.Mode().String(), "client_auth", st.NeedClientAuth.String(),
			"test_mode", st.TestMode, "cert", st.CertPath)
	}
	return nil
}

// Addr is the address the server listens on (useful with port 0).
// It names the configured bind address with the port actually bound, so
// 0.0.0.0 reads as 0.0.0.0 (as in Java's banner) rather than as the [::]
// of Go's dual-stack listener.
func (s *Server) Addr() string {
	if s.remote == nil || s.remote.Addr() == nil {
		return ""
	}
	a := s.remote.Addr().String()
	if s.cfg.BindAddress == "" {
		return a
	}
	if _, port, err := net.SplitHostPort(a); err == nil {
		return net.JoinHostPort(s.cfg.BindAddress, port)
	}
	return a
}

// Shutdown stops accepting connections, lets requests being handled finish,
// closes every connection and flushes the KV store. Brokers and clients see
// their connection close and go to another NameServer. A connection waiting
// for the rest of a frame is closed at once: a half-sent frame is not a
// request being handled. When ctx ends first, every connection is closed
// all the same and the error says what was still running.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.closing.CompareAndSwap(false, true) {
		return errors.New("server already shut down")
	}
	close(s.stop)
	if h := s.hooks.shutdownBegun; h != nil {
		h()
	}
	// Before the connections close: what a restart loads is the table
	// the clients were being answered from.
	s.finalSnapshot()
	var errs []error
	if s.remote != nil {
		if err := s.remote.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	s.tasks.Wait()
	if err := s.kv.Flush(); err != nil {
		errs = append(errs, fmt.Errorf("flush kv config: %w", err))
	}
	// The admin listener last, so /readyz answers 503 for as long as the
	// shutdown takes.
	if err := s.adminHTTP.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// every runs fn at each period until Shutdown.
func (s *Server) every(period time.Duration, fn func()) {
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// scanExpired evicts the brokers past their timeout and closes the
// connections the route table names (Eviction.CloseConn): Java closes an
// expired broker's channel, so a broker that is stuck but connected sees
// the close and registers again once it reconnects.
func (s *Server) scanExpired() {
	var closed []route.ConnID
	for _, ev := range s.routes.ScanExpired() {
		s.logEviction(ev)
		if !ev.CloseConn || slices.Contains(closed, ev.Conn) || s.remote == nil {
			continue
		}
		closed = append(closed, ev.Conn)
		if s.remote.CloseConn(remoting.ConnID(ev.Conn)) {
			s.log.Info("closing an expired broker's connection", "cluster", ev.Cluster, "broker", ev.BrokerName,
				"id", ev.BrokerID, "addr", ev.BrokerAddr, "conn", ev.Conn)
		}
	}
}

func (s *Server) logEviction(ev route.Eviction) {
	s.metrics.eviction(ev.Reason)
	s.log.Info("broker removed", "reason", ev.Reason, "cluster", ev.Cluster,
		"broker", ev.BrokerName, "id", ev.BrokerID, "addr", ev.BrokerAddr)
	s.notifyMinBrokerID(ev.MinIDChange)
}

// dumpKV logs every KV entry, as the Java server does every 10 minutes, so an
// operator can recover the table from logs.
func (s *Server) dumpKV() {
	snap := s.kv.Snapshot()
	s.log.Info("kv config dump", "namespaces", len(snap))
	for ns, table := range snap {
		for k, v := range table {
			s.log.Info("kv config", "namespace", ns, "key", k, "value", v)
		}
	}
}

// maxFrame is frameMaxLength, which also bounds what a compressed
// registration may inflate to.
func (s *Server) maxFrame() int {
	if s.cfg.FrameMaxLength > 0 {
		return s.cfg.FrameMaxLength
	}
	return codec.DefaultMaxFrame
}

// connCount is the number of remoting connections open now.
func (s *Server) connCount() int {
	if s.remote == nil {
		return 0
	}
	return s.remote.ConnCount()
}
