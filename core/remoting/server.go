// server.go holds a listener's options, its lifecycle (New, Start,
// Shutdown) and the once-a-second tick that closes idle connections.

package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/rocketns/rocketns/codec"
)

// Options configure one listener. The zero value of each field is a
// usable default, except Addr.
type Options struct {
	// Addr is the host:port to listen on; port 0 picks a free one.
	Addr string
	// Log receives the listener's lines; nil is slog.Default().
	Log *slog.Logger

	// Routes is the dispatch table.
	Routes []Route
	// Unknown answers codes without a route; nil is NotSupported.
	Unknown Handler
	// Version is stamped on every reply. No peer acts on it; the Java
	// NameServer writes its release (codec.ServerVersion), a standalone
	// Java controller 0.
	Version int32
	// JSONReplies answers every request with a JSON header, as the Java
	// controller does; otherwise a reply uses its request's serialize
	// type, as the Java NameServer does.
	JSONReplies bool

	// MaxFrame bounds a frame, its 4-byte length prefix included; <= 0 is
	// codec.DefaultMaxFrame. A longer frame closes the connection.
	MaxFrame int
	// MaxConnections closes connections at accept beyond this many; <= 0
	// is no limit. TLS connections count, and so do those handed to a
	// Sniffer's protocol until it closes them.
	MaxConnections int
	// ReservedConnections of MaxConnections are kept for the addresses
	// Reserved admits (the broker and admin networks): a connection from
	// any other address is closed at accept once MaxConnections -
	// ReservedConnections are open, so that connections from elsewhere
	// cannot lock the brokers and operators out. <= 0, or a nil
	// Reserved, keeps none.
	ReservedConnections int
	Reserved            func(netip.Addr) bool
	// MaxConnectionsPerIP closes connections at accept beyond this many
	// from one source address (loopback included); <= 0 is no limit.
	MaxConnectionsPerIP int
	// Budget bounds the bytes buffered for all connections sharing it
	// (budget.go); nil is no bound beyond the per-connection ones.
	Budget *Budget
	// IdleTimeout closes a connection that neither read nor wrote for
	// this long, and bounds the wait for the rest of a partial frame; 0
	// is none.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection whose replies could not be sent
	// in this time (a peer that stopped reading); 0 is none.
	WriteTimeout time.Duration
	// MaxPendingRequestBytes closes a connection whose unread input
	// exceeds it (a peer that pipelines faster than it is served); <= 0
	// is no limit.
	MaxPendingRequestBytes int
	// MaxPendingResponseBytes flushes a long pipelined batch whenever its
	// unflushed replies exceed it, so a peer that does not read holds at
	// most that much; <= 0 flushes only at the end of a batch.
	MaxPendingResponseBytes int
	// HeavySlots bounds the heavy requests (Route.Weigh) answered at
	// once; <= 0 is DefaultHeavySlots.
	HeavySlots int
	// HeavyShare bounds the time the heavy turns are busy, once a burst
	// of heavyBurst each is spent, as a fraction of the time passed
	// (heavyQueue); 0 is DefaultHeavyShare, 1 or more no bound.
	HeavyShare float64

	// TLS, when set, serves TLS connections beside plaintext ones: a
	// connection whose first byte opens a TLS record is handed to
	// crypto/tls. Without it such a connection is closed.
	TLS *TLS
	// Sniffers are other protocols sharing the port (see Sniffer).
	Sniffers []Sniffer

	// ConnClosed runs once a connection has closed, with its id: on the
	// connection's goroutine for netpoll connections, never concurrently
	// with a handler of the same connection. It must not block.
	ConnClosed func(id ConnID)
	// Observe is told of every request handled (oneway ones included):
	// its code and the reply's code, and for the requests picked for
	// timing (Route.TimeEvery) how long the handler took and how many
	// requests the sample stands for; weight is 0 for the others. A
	// deferred request is observed when its reply is completed, timed
	// from its dispatch. It runs on the request path: keep it cheap.
	Observe func(code, resp int32, took time.Duration, weight uint64)
	// Refused is told of every handler error, after resp holds the
	// refusal; nil logs it at debug level.
	Refused func(c *Conn, req, resp *codec.Command, err error)
	// Events receives the listener's own events, for metrics.
	Events Events
}

// TLS is how a listener serves TLS connections.
type TLS struct {
	// Config serves every handshake; it may pick fresh material per
	// handshake through GetConfigForClient.
	Config *tls.Config
	// Enforce closes plaintext connections (Java's "enforcing" mode);
	// otherwise both are served ("permissive").
	Enforce bool
	// HandshakeTimeout bounds a handshake, so a peer that opens a TLS
	// connection and stalls is closed before the idle timeout; 0 is 10 s.
	HandshakeTimeout time.Duration
}

// Events are hooks for what a listener counts; nil fields are skipped.
// They may run on any goroutine, concurrently.
type Events struct {
	// FrameRejected: a connection sent a frame that does not decode
	// (reason is a codec.Reason* constant, or "other").
	FrameRejected func(reason string)
	// ConnRefused: a connection was closed at accept for MaxConnections
	// (MaxConnectionsPerIP refusals are counted in Stats).
	ConnRefused func()
	// TLSHandshake: a TLS handshake ended.
	TLSHandshake func(ok bool)
}

// Server is one listener. Everything it owns is reachable from here; there
// is no package-level state, so a process may run several.
type Server struct {
	log      *slog.Logger
	table    *table
	unknown  Handler
	version  int32
	jsonOnly bool
	maxFrame int
	limits   limits
	tls      *TLS
	sniffers []Sniffer
	// sniffs: the first bytes of a connection decide its protocol (TLS
	// or a sniffer), so its first read may wait for them.
	sniffs     bool
	connClosed func(ConnID)
	observe    func(code, resp int32, took time.Duration, weight uint64)
	refused    func(c *Conn, req, resp *codec.Command, err error)
	events     Events

	addr     string
	loop     netpoll.EventLoop
	ln       netpoll.Listener
	serveErr chan error

	now atomic.Int64 // unix ms, refreshed every tick; a coarse clock for idle checks

	connsMu  sync.Mutex
	conns    map[ConnID]*Conn
	handed   map[*handedConn]struct{} // sniffed connections handed to their protocol
	nextConn atomic.Uint64
	// perIP counts connections by source address, with
	// MaxConnectionsPerIP; under connsMu.
	perIP map[string]int

	bufPool bufPool
	budget  *Budget

	// refused and refusedLogAt rate-limit the MaxConnections log line.
	refusedN     atomic.Int64
	refusedLogAt atomic.Int64
	// refusedIP and refusedIPTotal count the MaxConnectionsPerIP refusals
	// for the log line and for Stats.
	refusedIP      atomic.Int64
	refusedIPTotal atomic.Int64
	refusedIPLogAt atomic.Int64
	refusedTotal   atomic.Int64

	// handoffs counts the goroutines serving connections taken off
	// netpoll: TLS connections, and sniffed ones until their callback
	// returns.
	handoffs sync.WaitGroup

	// workers run the connections' tasks (workers.go).
	workers *workers
	// heavy hands out the turns of heavy requests (heavy.go).
	heavy      *heavyQueue
	heavySlots int
	inflight   *gate
	closing    atomic.Bool
	stop       chan struct{}
	ticker     sync.WaitGroup
	// watch looks at the input of connections whose flush or handler
	// blocks (watch.go); it runs until watchStop, closed once every
	// connection is.
	watch     *watcher
	watchStop chan struct{}

	hooks testHooks
}

// limits are the per-connection bounds of Options.
type limits struct {
	maxConns, maxIn, maxOut int
	idle, write             time.Duration
	maxPerIP                int
	// reserved of maxConns are for the addresses reservedFor admits.
	reserved    int
	reservedFor func(netip.Addr) bool
}

// testHooks let tests observe events that have no other outside effect.
// All nil in production.
type testHooks struct {
	// flushFailed runs when a flush failed, before the connection is
	// closed and while its unsent replies are still held.
	flushFailed func(id ConnID)
	// shutdownBegun runs in Shutdown once the server counts as shutting
	// down, before anything is stopped.
	shutdownBegun func()
}

// New checks o and builds a listener; Start binds it.
func New(o Options) (*Server, error) {
	t, err := newTable(o.Routes)
	if err != nil {
		return nil, fmt.Errorf("remoting %s: %w", o.Addr, err)
	}
	s := &Server{
		log:      o.Log,
		table:    t,
		unknown:  o.Unknown,
		version:  o.Version,
		jsonOnly: o.JSONReplies,
		maxFrame: o.MaxFrame,
		limits: limits{maxConns: o.MaxConnections, maxIn: o.MaxPendingRequestBytes, maxOut: o.MaxPendingResponseBytes,
			idle: o.IdleTimeout, write: o.WriteTimeout},
		tls:        o.TLS,
		sniffers:   o.Sniffers,
		connClosed: o.ConnClosed,
		observe:    o.Observe,
		refused:    o.Refused,
		events:     o.Events,
		addr:       o.Addr,
		conns:      make(map[ConnID]*Conn),
		perIP:      make(map[string]int),
		budget:     o.Budget,
		handed:     make(map[*handedConn]struct{}),
		workers:    newWorkers(maxIdleWorkers),
		inflight:   newGate(),
		stop:       make(chan struct{}),
		watchStop:  make(chan struct{}),
		serveErr:   make(chan error, 1),
	}
	s.watch = newWatcher(s)
	s.limits.maxPerIP = o.MaxConnectionsPerIP
	if o.Reserved != nil && o.ReservedConnections > 0 {
		s.limits.reserved, s.limits.reservedFor = o.ReservedConnections, o.Reserved
	}
	s.heavySlots = o.HeavySlots
	if s.heavySlots <= 0 {
		s.heavySlots = DefaultHeavySlots()
	}
	share := o.HeavyShare
	if share <= 0 {
		share = DefaultHeavyShare
	}
	s.heavy = newHeavyQueue(s.heavySlots, share)
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.unknown == nil {
		s.unknown = NotSupported
	}
	if s.maxFrame <= 0 {
		s.maxFrame = codec.DefaultMaxFrame
	}
	if s.tls != nil && s.tls.Config == nil {
		return nil, fmt.Errorf("remoting %s: TLS without a tls.Config", o.Addr)
	}
	if err := s.checkSniffers(); err != nil {
		return nil, fmt.Errorf("remoting %s: %w", o.Addr, err)
	}
	s.sniffs = s.tls != nil || len(s.sniffers) > 0
	s.now.Store(time.Now().UnixMilli())
	return s, nil
}

// Start listens on Options.Addr and serves in the background until
// Shutdown.
func (s *Server) Start() error {
	if err := configureNetpoll(); err != nil {
		return err
	}
	ln, err := netpoll.CreateListener("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.addr, err)
	}
	loop, err := netpoll.NewEventLoop(s.onRequest, netpoll.WithOnPrepare(s.onPrepare))
	if err != nil {
		ln.Close()
		return fmt.Errorf("event loop: %w", err)
	}
	s.ln, s.loop = ln, loop
	s.now.Store(time.Now().UnixMilli())
	s.workers.start()
	go func() { s.serveErr <- loop.Serve(ln) }()
	s.ticker.Add(2)
	go func() {
		defer s.ticker.Done()
		s.watch.run(s.watchStop)
	}()
	go func() {
		defer s.ticker.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.tick()
			}
		}
	}()
	return nil
}

// Addr is the address the listener is bound to, nil before Start.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// ConnCount is the number of connections served now (netpoll and TLS).
func (s *Server) ConnCount() int {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting connections, lets requests being handled finish,
// and closes every connection, handed-off ones included. A connection
// waiting for the rest of a frame is closed at once: a half-sent frame is
// not a request being handled. Deferred replies completed after Shutdown
// began are dropped. When ctx ends first, every connection is closed all
// the same and the error says what was still running.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.closing.CompareAndSwap(false, true) {
		return errors.New("remoting: already shut down")
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
		c.Close()
	}
	s.closeHanded()
	// Hand-off goroutines end once their sockets are closed; one being
	// handed off right now sees closing and ends too (continueHandoff).
	if err := WaitOrDone(ctx, s.handoffs.Wait); err != nil {
		errs = append(errs, fmt.Errorf("waiting for tls and handed-off connections: %w", err))
	}
	close(s.watchStop)
	s.ticker.Wait()
	if s.loop != nil {
		s.workers.stop()
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
			c.Close()
		}
	}
}

// WaitOrDone runs wait (a WaitGroup's Wait, say) on a goroutine and
// returns when it returns or when ctx ends, with ctx's error: a Shutdown
// bounded by its context. After ctx ends the goroutine lives on until wait
// returns, which closing what it waits for makes happen; each call has a
// channel of its own, so a late return closes nothing that is not its own.
func WaitOrDone(ctx context.Context, wait func()) error {
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

// tick refreshes the coarse clock and closes connections idle (nothing read
// and nothing written) for longer than IdleTimeout, as the Java server's
// IdleStateHandler does. netpoll's own idle timeout is TCP keepalive, which
// is not the same thing. It also closes connections whose unread input
// passed MaxPendingRequestBytes (checkInput), and lets the budget give
// back what an attack made the process take (Budget.settle).
func (s *Server) tick() {
	t := time.Now()
	now := t.UnixMilli()
	s.now.Store(now)
	if released, ok := s.budget.settle(t); ok {
		s.log.Info("connections let go of their buffered bytes: collecting so that the memory goes back to the system",
			"released_bytes", released, "budget_bytes", s.budget.limit, "setting", "maxBufferedBytes")
	}
	idle := s.limits.idle.Milliseconds()
	for _, c := range s.snapshotConns() {
		if idle > 0 && now-c.lastActive.Load() > idle {
			s.log.Info("closing idle connection", "peer", c.peer, "idle_seconds", s.limits.idle.Seconds())
			c.Close()
			continue
		}
		s.checkInput(c)
	}
}

// CloseConn closes the connection with id (as ConnClosed and Conn.ID name
// it) and reports whether it was open: a controller closes the connection
// of a broker whose heartbeats expired, knowing only the id it recorded.
// ConnClosed then runs for it as for any close. Handed-off connections
// (Sniffers) have no id and are not found.
func (s *Server) CloseConn(id ConnID) bool {
	s.connsMu.Lock()
	c := s.conns[id]
	s.connsMu.Unlock()
	if c == nil {
		return false
	}
	c.Close()
	return true
}

func (s *Server) snapshotConns() []*Conn {
	s.connsMu.Lock()
	out := make([]*Conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	s.connsMu.Unlock()
	return out
}
