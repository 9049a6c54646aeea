// Package server is the NameServer's network side: the netpoll event loop,
// per-connection state, dispatch by request code, and the periodic tasks
// (liveness scan, idle connections, KV dump). How a route is built lives in
// core/route; this package only wires requests to it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/kv"
	"github.com/rocketns/rocketns/core/route"
	"github.com/valyala/bytebufferpool"
)

// Server is one NameServer. Everything it owns is reachable from here; there
// is no package-level state.
type Server struct {
	cfg    *config.Config
	log    *slog.Logger
	routes *route.Table
	kv     *kv.Store

	loop     netpoll.EventLoop
	ln       netpoll.Listener
	serveErr chan error

	started time.Time
	now     atomic.Int64 // unix ms, refreshed every tick; a coarse clock for idle checks

	connsMu  sync.Mutex
	conns    map[route.ConnID]*conn
	nextConn atomic.Uint64

	bufPool bytebufferpool.Pool
	// extraHandlers lets tests add codes (a handler that panics, say).
	extraHandlers map[int32]handler
	// admin holds the run-time configuration and the 905 sender
	// (handlers_config.go, notify.go).
	admin adminState

	// regSlots bounds how many registrations decode and apply at once, so a
	// registration storm leaves cores for route queries (Java gives route
	// queries a pool of their own for the same reason).
	regSlots chan struct{}

	// tls serves the TLS connections; nil when tls.server.mode is disabled.
	tls *tlsServer
	// tlsConns counts the goroutines serving TLS connections.
	tlsConns sync.WaitGroup

	// refused and refusedLogAt rate-limit the maxConnections log line.
	refused      atomic.Int64
	refusedLogAt atomic.Int64

	hooks hooks

	// metrics are always kept: the per-minute summary reads them too
	// (metrics.go). adminHTTP serves them when adminListen is set.
	metrics   *serverMetrics
	adminHTTP adminHTTP
	listening atomic.Bool

	inflight *gate
	closing  atomic.Bool
	stop     chan struct{}
	tasks    sync.WaitGroup
}

// New builds a server from cfg and loads the KV store at cfg.KVConfigPath. A
// corrupt KV file is an error: starting with an empty store would overwrite
// the operator's data on the first write.
func New(cfg *config.Config, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	store, err := kv.Open(cfg.KVConfigPath)
	if err != nil {
		return nil, fmt.Errorf("load kv config: %w", err)
	}
	s := &Server{
		inflight: newGate(),
		cfg:      cfg,
		log:      log,
		kv:       store,
		conns:    make(map[route.ConnID]*conn),
		stop:     make(chan struct{}),
		regSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		serveErr: make(chan error, 1),
		metrics:  newServerMetrics(),
	}
	if s.tls, err = newTLSServer(cfg, log); err != nil {
		return nil, err
	}
	s.routes = route.New(route.Options{
		SupportActingMaster:               cfg.SupportActingMaster,
		DeleteTopicWithBrokerRegistration: cfg.DeleteTopicWithBrokerRegistration,
	}, s.clock)
	return s, nil
}

// clock is the route table's time source: real time, read at each call, so
// expiry decisions are exact to the millisecond.
func (s *Server) clock() int64 { return time.Now().UnixMilli() }

// Routes exposes the route table (for tests and the process's own status).
func (s *Server) Routes() *route.Table { return s.routes }

// Start listens on cfg.BindAddress:cfg.ListenPort and serves in the
// background until Shutdown.
func (s *Server) Start() error {
	if err := s.listenAdmin(); err != nil {
		return err
	}
	addr := net.JoinHostPort(s.cfg.BindAddress, strconv.Itoa(s.cfg.ListenPort))
	ln, err := netpoll.CreateListener("tcp", addr)
	if err != nil {
		s.closeAdmin(context.Background())
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	loop, err := netpoll.NewEventLoop(s.onRequest,
		netpoll.WithOnPrepare(s.onPrepare),
	)
	if err != nil {
		ln.Close()
		s.closeAdmin(context.Background())
		return fmt.Errorf("event loop: %w", err)
	}
	s.ln, s.loop = ln, loop
	s.started = time.Now()
	s.now.Store(s.started.UnixMilli())
	go func() { s.serveErr <- loop.Serve(ln) }()
	s.listening.Store(true)
	s.serveAdmin()

	s.every(time.Second, s.tick)
	scan := time.Duration(s.cfg.ScanNotActiveBrokerInterval) * time.Millisecond
	if scan <= 0 {
		scan = 5 * time.Second
	}
	s.every(scan, s.scanExpired)
	s.every(10*time.Minute, s.dumpKV)
	s.every(time.Minute, func() { s.logSummary(time.Now()) })
	if s.tls != nil && s.tls.watches() {
		s.every(tlsPollInterval, s.tls.poll)
	}
	if s.tls != nil {
		s.log.Info("tls", "mode", s.tls.mode.String(), "client_auth", s.tls.settings.NeedClientAuth.String(),
			"test_mode", s.tls.settings.TestMode, "cert", s.tls.settings.CertPath)
	}
	return nil
}

// Addr is the address the server listens on (useful with port 0).
// It names the configured bind address with the port actually bound, so
// 0.0.0.0 reads as 0.0.0.0 (as in Java's banner) rather than as the [::]
// of Go's dual-stack listener.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	a := s.ln.Addr().String()
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
	s.closeWaiting()
	close(s.stop)
	if h := s.hooks.shutdownBegun; h != nil {
		h()
	}
	var errs []error
	if s.loop != nil {
		// netpoll's Shutdown closes the listener and idle connections,
		// and waits for the others to become idle.
		if err := s.loop.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("stop event loop: %w", err))
		}
	}
	select {
	case <-s.inflight.close():
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("waiting for in-flight requests: %w", ctx.Err()))
	}
	for _, c := range s.snapshotConns() {
		c.close()
	}
	// TLS goroutines end once their sockets are closed; one being handed
	// off right now sees closing and ends too (serveTLS).
	if err := waitOrDone(ctx, s.tlsConns.Wait); err != nil {
		errs = append(errs, fmt.Errorf("waiting for tls connections: %w", err))
	}
	s.tasks.Wait()
	if err := s.kv.Flush(); err != nil {
		errs = append(errs, fmt.Errorf("flush kv config: %w", err))
	}
	if err := s.closeAdmin(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// closeWaiting closes the connections blocked on a partial frame. It is one
// half of a pair with startWaiting: Shutdown sets closing and then looks at
// each conn's waiting flag, a conn sets waiting and then looks at closing,
// so whatever the interleaving at least one of them sees the other and no
// waiting connection is left open to hold the event loop's shutdown.
func (s *Server) closeWaiting() {
	for _, c := range s.snapshotConns() {
		if c.waiting.Load() {
			c.close()
		}
	}
}

// waitOrDone runs wait on a goroutine and returns when it returns or when
// ctx ends. After ctx ends the goroutine lives on until wait returns, which
// the connections Shutdown closes next make happen; each call has a channel
// of its own, so a late return closes nothing that is not its own.
func waitOrDone(ctx context.Context, wait func()) error {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

// tick refreshes the coarse clock and closes connections idle (nothing read
// and nothing written) for longer than serverChannelMaxIdleTimeSeconds, as
// the Java server's IdleStateHandler does. netpoll's own idle timeout is TCP
// keepalive, which is not the same thing. It also closes connections whose
// unread input passed maxPendingRequestBytes (checkInput).
func (s *Server) tick() {
	now := time.Now().UnixMilli()
	s.now.Store(now)
	idle := int64(s.cfg.ServerChannelMaxIdleTimeSeconds) * 1000
	for _, c := range s.snapshotConns() {
		if idle > 0 && now-c.lastActive.Load() > idle {
			s.log.Info("closing idle connection", "peer", c.peer, "idle_seconds", s.cfg.ServerChannelMaxIdleTimeSeconds)
			c.close()
			continue
		}
		s.checkInput(c)
	}
}

func (s *Server) scanExpired() {
	for _, ev := range s.routes.ScanExpired() {
		s.logEviction(ev)
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

func (s *Server) snapshotConns() []*conn {
	s.connsMu.Lock()
	out := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	s.connsMu.Unlock()
	return out
}
