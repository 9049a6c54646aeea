// The controller node: its listeners (one shared with raft, or one each),
// the raft node over the FSM, the background loops, and start and
// shutdown.

package ctlserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/metrics"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting"
)

// Server is one controller node. New builds it, Start opens its store and
// serves, Shutdown stops it; a Server is not restarted (build a new one on
// the same store directory).
type Server struct {
	cfg     Config
	log     *slog.Logger
	fsm     *FSM
	peers   string // 1005's peers field
	version int32  // stamped on every reply and 1008
	// settings are what 1010 lists, with the run-time settings in force;
	// a 1009 swaps them, updateMu serialising its check, persist, swap.
	settings atomic.Pointer[config.Controller]
	updateMu sync.Mutex

	// Set by Start before anything can call in (the listener is started
	// last, the loops wait for started).
	node    *raftnode.Node
	remote  *remoting.Server
	stream  *raftnode.StreamLayer
	started chan struct{}

	liveMu sync.Mutex
	live   *controller.Liveness

	// jobs is the leader's queue of requests to decide one at a time;
	// only the writer goroutine receives from it.
	jobs chan *job
	// dirty is set (by the writer only) when a write's outcome is
	// unknown: its entry may still be applied, so the next decision waits
	// for a barrier.
	dirty bool
	// electing names the sets with a controller-triggered election queued.
	electMu  sync.Mutex
	electing map[string]bool

	notify *notifier

	// applied is each set's latest election applied here (announceMu);
	// announced the highest masterEpoch announced per set (writer only);
	// reconcileDue and kick ask the writer to announce what was applied
	// but not announced (announce.go).
	announceMu   sync.Mutex
	applied      map[string]appliedElection
	announced    map[string]int32
	reconcileDue atomic.Bool
	kick         chan struct{}

	// leaderStop ends the inactive-master scan of the current ready
	// leadership (nil while not the ready leader).
	leaderMu   sync.Mutex
	leaderStop chan struct{}

	counts counters
	// requests and listener are the remoting port's counters (metrics.go).
	requests *metrics.Requests
	listener *metrics.Listener

	closing atomic.Bool
	stop    chan struct{}
	wg      sync.WaitGroup

	// noState answers the requests refused before the state is looked at.
	noState *controller.State
}

// New checks cfg and builds a node; nothing is opened until Start.
func New(cfg Config) (*Server, error) {
	cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := cfg.Membership
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger.With("controller", m.SelfID),
		peers:     peersText(m),
		live:      newLiveness(cfg.MaxLiveBrokers),
		electing:  map[string]bool{},
		started:   make(chan struct{}),
		stop:      make(chan struct{}),
		noState:   controller.NewState(),
		applied:   map[string]appliedElection{},
		announced: map[string]int32{},
		kick:      make(chan struct{}, 1),
	}
	var err error
	if s.requests, err = requestMetrics(s.codeTable()); err != nil {
		return nil, err
	}
	s.listener = metrics.NewListener(MetricsPrefix)
	s.fsm = NewFSM(s.log)
	s.fsm.elected = s.elected
	settings := cfg.Settings
	if settings == nil {
		settings = &s.cfg.Controller
	}
	s.settings.Store(settings)
	if cfg.Embedded {
		s.version = codec.ServerVersion
	}
	s.jobs = make(chan *job, cfg.RequestQueueCapacity)
	s.notify = newNotifier(s.log, cfg.NotifyTimeout, s.version)
	return s, nil
}

// Start opens the raft store, joins the group and serves brokers: DLedger
// style on the self peer's port, which raft shares; jRaft style on the
// node's broker-facing port, raft on its own.
func (s *Server) Start() (err error) {
	m := s.cfg.Membership
	self := m.Self()
	defer func() {
		if err != nil {
			s.closeStarted()
		}
	}()
	opts := remoting.Options{
		Addr:                s.cfg.listenAddr(self.ServeAddr),
		Log:                 s.log,
		Routes:              s.dispatchTable(),
		Version:             s.version,
		JSONReplies:         true,
		MaxFrame:            s.cfg.FrameMaxLength,
		MaxConnections:      s.cfg.MaxConnections,
		TLS:                 s.cfg.TLS,
		Budget:              s.cfg.Budget,
		MaxConnectionsPerIP: s.cfg.MaxConnectionsPerIP,
		ConnClosed:          s.connClosed,
		Observe:             s.observe,
		Events:              s.listener.Events(),
	}
	if s.cfg.IdleTimeout > 0 {
		opts.IdleTimeout = s.cfg.IdleTimeout
	}
	if opts.Budget == nil {
		opts.Budget = remoting.NewBudget(max(remoting.DefaultBudgetBytes(), 4*int64(max(s.cfg.FrameMaxLength, codec.DefaultMaxFrame))))
	}
	// Raft connections: from members' addresses only, with the cluster
	// secret or mutual TLS when set. On the shared port the listener's
	// caps count them; on a raft port of its own the same caps apply.
	so := raftnode.StreamOptions{Advertise: self.RaftAddr, Log: s.log, Secret: s.cfg.RaftSecret, TLS: s.cfg.RaftTLS}
	if m.Style == membership.JRaft {
		so.Bind, so.MaxConns, so.MaxConnsPerIP = s.cfg.listenAddr(self.RaftAddr), s.cfg.MaxConnections, s.cfg.MaxConnectionsPerIP
		if s.stream, err = raftnode.NewStream(so); err != nil {
			return fmt.Errorf("controller %s: %w", m.SelfID, err)
		}
	} else {
		if s.stream, err = raftnode.NewStream(so); err != nil {
			return fmt.Errorf("controller %s: %w", m.SelfID, err)
		}
		stream := s.stream
		opts.Sniffers = []remoting.Sniffer{{Magic: []byte(raftnode.Preamble), Serve: func(nc net.Conn) { stream.Handoff(nc) }}}
	}
	if s.remote, err = remoting.New(opts); err != nil {
		return fmt.Errorf("controller %s: %w", m.SelfID, err)
	}
	rc := s.cfg.Raft
	rc.ID, rc.Peers, rc.Dir, rc.InMemory, rc.Stream = m.SelfID, nil, s.cfg.StorePath, s.cfg.InMemory, s.stream
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = s.cfg.RaftHeartbeatTimeout, s.cfg.RaftElectionTimeout, s.cfg.RaftLeaderLeaseTimeout
	rc.OnLeadership, rc.Logger = s.onLeadership, s.log
	for _, p := range m.Peers {
		rc.Peers = append(rc.Peers, raftnode.Peer{ID: p.ID, RaftAddr: p.RaftAddr, ServeAddr: p.ServeAddr})
	}
	if s.node, err = raftnode.New(rc, s.fsm); err != nil {
		return fmt.Errorf("controller %s: %w", m.SelfID, err)
	}
	if err = s.remote.Start(); err != nil {
		return fmt.Errorf("controller %s: %w", m.SelfID, err)
	}
	close(s.started)
	s.wg.Add(2)
	go s.runWriter()
	go s.runExpiryScan()
	for _, w := range m.Warnings {
		s.log.Warn("controller: " + w)
	}
	if !s.stream.Authenticated() {
		s.log.Warn("controller: raft connections are not authenticated: anything that can connect from a member's host can write the controller state and disrupt elections; set controllerRaftSecretFile (a secret shared by the members) or controllerRaftTLSEnable (mutual TLS)",
			"raft", self.RaftAddr)
	}
	s.log.Info("controller started", "style", m.Style.String(), "serve", s.remote.Addr().String(),
		"raft", self.RaftAddr, "peers", len(m.Peers), "store", s.cfg.StorePath)
	return nil
}

// closeStarted undoes a Start that failed half-way (Shutdown then refuses:
// the server never started).
func (s *Server) closeStarted() {
	s.closing.Store(true)
	close(s.stop)
	s.stopLeaderScan()
	if s.node != nil {
		s.node.Close()
		s.node = nil
	}
	if s.stream != nil {
		s.stream.Close()
	}
	s.wg.Wait()
	s.notify.close()
}

// Addr is the bound broker-facing address, nil before Start.
func (s *Server) Addr() net.Addr {
	if s.remote == nil {
		return nil
	}
	return s.remote.Addr()
}

// RaftAddr is the bound raft address: the broker-facing one in DLedger
// style, the own raft listener's in jRaft style; nil before Start.
func (s *Server) RaftAddr() net.Addr {
	if s.stream == nil {
		return nil
	}
	if a := s.stream.ListenAddr(); a != nil {
		return a
	}
	return s.Addr()
}

// ID is this node's raft id.
func (s *Server) ID() string { return s.cfg.Membership.SelfID }

// Node is the raft node (tests, tools), nil before Start.
func (s *Server) Node() *raftnode.Node { return s.node }

// Shutdown stops serving: the broker-facing listener (its connections
// closed, requests being handled finished), the background loops, the
// pending role-change notices, and the raft node (a leader stops without
// handing over; the others elect within an election timeout). Requests
// queued for the leader are dropped with their connections.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.closing.CompareAndSwap(false, true) {
		return errors.New("controller: already shut down")
	}
	select {
	case <-s.started:
	default:
		return errors.New("controller: not started")
	}
	var errs []error
	close(s.stop)
	s.stopLeaderScan()
	if err := s.remote.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("controller listener: %w", err))
	}
	// Closing raft ends a write waiting for its commit (ErrShutdown), so
	// the writer returns.
	if err := s.node.Close(); err != nil {
		errs = append(errs, fmt.Errorf("raft: %w", err))
	}
	if err := remoting.WaitOrDone(ctx, s.wg.Wait); err != nil {
		errs = append(errs, fmt.Errorf("controller loops: %w", err))
	}
	s.notify.close()
	s.log.Info("controller stopped")
	return errors.Join(errs...)
}

// nowMs is the liveness clock.
func (s *Server) nowMs() int64 { return s.cfg.Clock().UnixMilli() }

// runtime is the settings in force, the run-time ones among them.
func (s *Server) runtime() *config.Controller { return s.settings.Load() }

// onLeadership follows the ready leadership: the inactive-master scan runs
// while it lasts. raftnode calls it serialised and wants it quick.
func (s *Server) onLeadership(ready bool) {
	if !ready {
		s.stopLeaderScan()
		s.log.Info("controller: no longer the leader")
		return
	}
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if s.leaderStop != nil || s.closing.Load() {
		return
	}
	stop := make(chan struct{})
	s.leaderStop = stop
	s.wg.Add(1)
	go s.runInactiveMasterScan(stop)
	s.kickReconcile()
	s.log.Info("controller: leader, serving leader requests")
}

func (s *Server) stopLeaderScan() {
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if s.leaderStop != nil {
		close(s.leaderStop)
		s.leaderStop = nil
	}
}

// every runs fn each interval (the first time after first) until stop or
// the server's stop closes.
func (s *Server) every(first, interval time.Duration, stop <-chan struct{}, fn func()) {
	defer s.wg.Done()
	select {
	case <-s.started:
	case <-s.stop:
		return
	}
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.stop:
			return
		case <-t.C:
			fn()
			t.Reset(interval)
		}
	}
}

func (s *Server) runExpiryScan() {
	first := min(firstExpiryScan, s.cfg.ScanNotActiveBrokerInterval)
	s.every(first, s.cfg.ScanNotActiveBrokerInterval, nil, s.expiryScan)
}

func (s *Server) runInactiveMasterScan(stop <-chan struct{}) {
	s.every(s.cfg.ScanInactiveMasterInterval, s.cfg.ScanInactiveMasterInterval, stop, s.inactiveMasterScan)
}
