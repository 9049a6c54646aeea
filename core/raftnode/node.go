// The raft node: configuration, start-up with bootstrap, the write path, the
// leader barrier and leadership changes, leader lookup and shutdown.

package raftnode

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Peer is one configured member of the group.
type Peer struct {
	// ID is the raft server id, stable for the life of the member.
	ID string
	// RaftAddr is where raft traffic for the member goes.
	RaftAddr string
	// ServeAddr is the member's broker-facing address, reported as the
	// leader's address to clients. It may equal RaftAddr (one shared port).
	ServeAddr string
}

// Defaults for a LAN controller group: a dead leader is noticed after one to
// two heartbeat timeouts and a new one elected within about one more, so a
// leader change takes 1-2 s (DLedger's defaults take ~7.5 s, jRaft's ~13 s).
//
// The leader lease defaults to the heartbeat timeout (Config.withDefaults).
// raft's leader steps down when no quorum has answered its heartbeats
// (sent every tenth to fifth of the heartbeat timeout) within the lease, so
// the lease minus that interval is how long the nodes' processes may wait
// for CPU before the leader gives up a healthy group. Followers wait at
// least the heartbeat timeout before they ask for votes (and pre-vote
// keeps a lone one from winning), so a shorter lease buys no faster
// failover. A 250 ms lease left 150-200 ms, which a 2-core machine running
// builds and race-detector tests exceeded every minute or so (processes
// unscheduled for 250-800 ms; see BENCHMARKS.md), each time an election.
const (
	DefaultHeartbeatTimeout   = 500 * time.Millisecond
	DefaultElectionTimeout    = 500 * time.Millisecond
	DefaultLeaderLeaseTimeout = DefaultHeartbeatTimeout
	DefaultCommitTimeout      = 50 * time.Millisecond
	DefaultRPCTimeout         = 2 * time.Second
	DefaultApplyTimeout       = 5 * time.Second
	DefaultSnapshotInterval   = 60 * time.Second
	DefaultSnapshotThreshold  = 1024
	DefaultTrailingLogs       = 1024
	DefaultSnapshotRetain     = 2
	// barrierRetry is how long one barrier attempt may take before the
	// leader tries again (it keeps trying while it leads).
	barrierRetry = 5 * time.Second
)

// Config describes a node. Zero durations and counts take the defaults above.
type Config struct {
	// ID is this node's raft server id; it must be one of Peers.
	ID string
	// Peers is the configured group, this node included. A node with no
	// raft state yet bootstraps the group from it; afterwards raft's own
	// configuration (in the log) is authoritative and Peers is compared
	// with it (see ApplyMembershipChanges).
	Peers []Peer
	// Dir holds the raft state (controllerStorePath): raft.db (log and
	// stable store), snapshots/ and LOCK.
	Dir string
	// InMemory keeps everything in memory instead (tests only); Dir is then
	// ignored.
	InMemory bool

	// Stream carries raft traffic over TCP (NewStream). The node attaches
	// its membership to it: only members' addresses and ids are accepted.
	// Transport, when set instead, is used as is (tests pass raft's
	// in-memory transport). Either way raft sees it through the transport
	// guard (guard.go). The node closes either on Close.
	Stream    *StreamLayer
	Transport raft.Transport

	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	// LeaderLeaseTimeout is how long the leader keeps leading without
	// answers from a quorum; zero takes HeartbeatTimeout.
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// RPCTimeout bounds one raft RPC on the network transport (dial included).
	RPCTimeout time.Duration
	// ApplyTimeout bounds Apply when the context has no earlier deadline.
	ApplyTimeout time.Duration

	// SnapshotInterval is how often raft checks whether SnapshotThreshold
	// entries have accumulated since the last snapshot; after a snapshot the
	// log is compacted to the last TrailingLogs entries.
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64
	// SnapshotRetain is how many snapshots stay on disk.
	SnapshotRetain int

	// ApplyMembershipChanges lets the ready leader make raft's membership
	// equal to Peers (AddVoter / RemoveServer, one change at a time). Off,
	// a difference is only logged and shown in Stats.
	ApplyMembershipChanges bool

	// OnLeadership is called with true when this node becomes the ready
	// leader (elected and barrier applied) and with false when that ends.
	// Calls are serialized and alternate; it must return quickly (raft
	// waits for it), so start long work on a goroutine.
	OnLeadership func(ready bool)

	Logger *slog.Logger

	// wrapLogs, when set, wraps the bbolt log store (tests stall it).
	wrapLogs func(raft.LogStore) raft.LogStore
}

func (c *Config) withDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&c.ElectionTimeout, DefaultElectionTimeout)
	// A raised heartbeat timeout raises the lease with it (see the
	// defaults above).
	def(&c.LeaderLeaseTimeout, c.HeartbeatTimeout)
	def(&c.CommitTimeout, DefaultCommitTimeout)
	def(&c.RPCTimeout, DefaultRPCTimeout)
	def(&c.ApplyTimeout, DefaultApplyTimeout)
	def(&c.SnapshotInterval, DefaultSnapshotInterval)
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = DefaultTrailingLogs
	}
	if c.SnapshotRetain <= 0 {
		c.SnapshotRetain = DefaultSnapshotRetain
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c *Config) validate() error {
	if c.ID == "" {
		return errors.New("raft node: empty id")
	}
	if len(c.Peers) == 0 {
		return errors.New("raft node: no peers")
	}
	ids := map[string]bool{}
	addrs := map[string]bool{}
	for _, p := range c.Peers {
		if p.ID == "" || p.RaftAddr == "" {
			return fmt.Errorf("raft node: peer %+v lacks an id or raft address", p)
		}
		if ids[p.ID] || addrs[p.RaftAddr] {
			return fmt.Errorf("raft node: peer %s (%s) listed twice", p.ID, p.RaftAddr)
		}
		ids[p.ID], addrs[p.RaftAddr] = true, true
	}
	if !ids[c.ID] {
		return fmt.Errorf("raft node: id %s is not among the peers", c.ID)
	}
	if !c.InMemory && c.Dir == "" {
		return errors.New("raft node: no data directory")
	}
	if (c.Stream == nil) == (c.Transport == nil) {
		return errors.New("raft node: set exactly one of Stream and Transport")
	}
	if c.LeaderLeaseTimeout > c.HeartbeatTimeout || c.ElectionTimeout < c.HeartbeatTimeout {
		return fmt.Errorf("raft node: need LeaderLeaseTimeout (%v) <= HeartbeatTimeout (%v) <= ElectionTimeout (%v)",
			c.LeaderLeaseTimeout, c.HeartbeatTimeout, c.ElectionTimeout)
	}
	return nil
}

// Node is one member of a raft group running an FSM.
type Node struct {
	cfg   Config
	log   *slog.Logger
	raft  *raft.Raft
	peers map[string]Peer // configured, by id
	// raftp is raft once started, for the stream layer and the guard,
	// which run before New returns.
	raftp atomic.Pointer[raft.Raft]
	guard *guard

	lock  *dirLock
	store *boltStore // nil in memory

	notifyCh chan bool
	// readyTerm is the term in which this node became the ready leader
	// (0: not ready). ReadyLeader also checks raft's current state and
	// term, so a step-down is seen before the monitor has processed it.
	readyTerm atomic.Uint64
	// lostCh is closed when the ready leadership of readyTerm ends; both
	// change together under leaderMu.
	leaderMu  sync.Mutex
	lostCh    chan struct{}
	nonce     uint64
	seq       atomic.Uint64
	waiters   sync.Map // reqKey -> chan any
	mismatch  atomic.Bool
	health    *peerHealth // peers.go
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New opens (or creates) the node's state, bootstraps the configured group
// if the state is empty and starts raft.
func New(cfg Config, fsm FSM) (_ *Node, err error) {
	cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("raft_id", cfg.ID), peers: map[string]Peer{}, stop: make(chan struct{}), nonce: rand.Uint64()}
	for _, p := range cfg.Peers {
		n.peers[p.ID] = p
	}
	defer func() {
		if err != nil {
			n.releaseStores()
		}
	}()

	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	if cfg.InMemory {
		mem := raft.NewInmemStore()
		logs, stable, snaps = mem, mem, raft.NewInmemSnapshotStore()
	} else {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("raft data directory: %w", err)
		}
		if n.lock, err = lockDir(cfg.Dir); err != nil {
			return nil, err
		}
		fresh := !fileExists(filepath.Join(cfg.Dir, dbFile))
		if n.store, err = openBoltStore(filepath.Join(cfg.Dir, dbFile)); err != nil {
			return nil, err
		}
		if snaps, err = raft.NewFileSnapshotStoreWithLogger(cfg.Dir, cfg.SnapshotRetain, newHCLog(n.log)); err != nil {
			return nil, fmt.Errorf("raft snapshot store: %w", err)
		}
		logs, stable = n.store, n.store
		if cfg.wrapLogs != nil {
			logs = cfg.wrapLogs(logs)
		}
		if fresh {
			n.warnForeignStore()
		}
	}

	inner := cfg.Transport
	if inner == nil {
		cfg.Stream.attach(n)
		inner = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream:  cfg.Stream,
			MaxPool: 3,
			Timeout: cfg.RPCTimeout,
			Logger:  newHCLog(n.log),
		})
	}
	var trans raft.Transport
	n.guard, trans = newGuard(inner, n.log)

	n.notifyCh = make(chan bool, 8)
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = cfg.TrailingLogs
	rc.NotifyCh = n.notifyCh
	rc.Logger = newHCLog(n.log)
	rc.NoLegacyTelemetry = true

	has, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return nil, fmt.Errorf("raft state: %w", err)
	}
	if !has {
		// Every member with the same Peers writes the same first entry, so
		// bootstrapping all of them at once is safe; one that finds state
		// already present skips this and keeps what the group agreed on.
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, n.configuredMembership()); err != nil {
			return nil, fmt.Errorf("raft bootstrap: %w", err)
		}
		n.log.Info("raft group bootstrapped from the configured peers", "peers", len(cfg.Peers))
	}
	if n.raft, err = raft.NewRaft(rc, &fsmAdapter{fsm: fsm, applied: n.applied}, logs, stable, snaps, trans); err != nil {
		if c, ok := trans.(raft.WithClose); ok {
			c.Close()
		}
		return nil, fmt.Errorf("raft start: %w", err)
	}
	n.raftp.Store(n.raft)
	n.guard.start(n)
	if has {
		n.checkMembership()
	}
	n.watchPeers()
	n.wg.Add(1)
	go n.monitor()
	return n, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// warnForeignStore logs when the directory holds a Java controller's store:
// this node cannot read it and starts empty, which strands brokers that
// remember their ids.
func (n *Node) warnForeignStore() {
	for _, pattern := range []string{"dledger-*", "raft_meta", "log"} {
		if m, _ := filepath.Glob(filepath.Join(n.cfg.Dir, pattern)); len(m) > 0 {
			n.log.Warn("the raft data directory holds a Java controller store that is not read; the group state starts empty",
				"dir", n.cfg.Dir, "found", m[0])
			return
		}
	}
}

func (n *Node) configuredMembership() raft.Configuration {
	var c raft.Configuration
	for _, p := range n.cfg.Peers {
		c.Servers = append(c.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)})
	}
	return c
}

// Apply replicates data as one log entry and returns the FSM's result once
// the entry is committed and applied on this node. It fails at once with a
// *NotLeaderError unless ReadyLeader; ErrLeadershipLost and ErrTimeout mean
// the outcome is unknown (the caller must not report success, and must not
// blindly retry a non-idempotent write).
//
// The result comes from the local FSM through a request key carried in the
// entry's raft extensions, and a lost leadership from the monitor, not from
// raft's future: raft drops the futures of entries still queued for the FSM
// when it shuts down, and a goroutine waiting on one would never end.
func (n *Node) Apply(ctx context.Context, data []byte) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	n.leaderMu.Lock()
	lost, term := n.lostCh, n.readyTerm.Load()
	n.leaderMu.Unlock()
	if term == 0 || n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
		if n.raft.State() == raft.Shutdown {
			return nil, ErrShutdown
		}
		return nil, n.notLeader()
	}
	timeout := n.cfg.ApplyTimeout
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left < timeout {
			timeout = left
		}
	}
	if timeout <= 0 {
		return nil, ErrTimeout
	}
	key := reqKey{nonce: n.nonce, seq: n.seq.Add(1)}
	ch := make(chan any, 1)
	n.waiters.Store(key, ch)
	defer n.waiters.Delete(key)
	// raft's own timeout bounds only the enqueue; commit and apply are
	// bounded here.
	n.raft.ApplyLog(raft.Log{Data: data, Extensions: key.bytes()}, timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var err error
	select {
	case res := <-ch:
		return res, nil
	case <-lost:
		err = ErrLeadershipLost
	case <-timer.C:
		err = fmt.Errorf("%w after %v", ErrTimeout, timeout)
	case <-ctx.Done():
		err = fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
	case <-n.stop:
		err = ErrShutdown
	}
	// Applied at the same moment counts as applied.
	select {
	case res := <-ch:
		return res, nil
	default:
		return nil, err
	}
}

// reqKey ties an entry to the Apply call waiting for it. The nonce is drawn
// per node start, so an entry written by another node, or by this one before
// a restart, never completes a waiter.
type reqKey struct {
	nonce, seq uint64
}

func (k reqKey) bytes() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, k.nonce)
	binary.BigEndian.PutUint64(b[8:], k.seq)
	return b
}

// applied hands an FSM result to the Apply waiting for the entry, if any.
func (n *Node) applied(ext []byte, result any) {
	if len(ext) != 16 {
		return
	}
	key := reqKey{nonce: binary.BigEndian.Uint64(ext), seq: binary.BigEndian.Uint64(ext[8:])}
	if key.nonce != n.nonce {
		return
	}
	if ch, ok := n.waiters.Load(key); ok {
		select {
		case ch.(chan any) <- result:
		default: // a key is used once; never block the FSM goroutine
		}
	}
}

// monitor follows raft's leadership notifications, runs the barrier after
// each election and reports readiness.
func (n *Node) monitor() {
	defer n.wg.Done()
	var (
		gen         uint64
		cancel      context.CancelFunc = func() {}
		ready       bool
		barrierDone = make(chan barrierResult, 1)
		// A membership change closes the stream connections of members
		// it removed. raft tells nobody but the leader of a change, and
		// its GetConfiguration reports no index to notice one by (always
		// 0), so every poll checks the open connections: a change undone
		// between two polls (a member added, connecting, and removed)
		// leaves nothing to compare, yet its connections must close.
		watch = time.NewTicker(membershipPoll)
	)
	defer watch.Stop()
	lose := func() {
		cancel()
		cancel = func() {}
		if ready {
			ready = false
			n.leaderMu.Lock()
			n.readyTerm.Store(0)
			close(n.lostCh)
			n.lostCh = nil
			n.leaderMu.Unlock()
			n.log.Info("raft: no longer the ready leader")
			if n.cfg.OnLeadership != nil {
				n.cfg.OnLeadership(false)
			}
		}
	}
	for {
		select {
		case leader := <-n.notifyCh:
			gen++
			lose()
			if leader {
				ctx, stopBarrier := context.WithCancel(context.Background())
				cancel = stopBarrier
				n.wg.Add(1)
				go n.runBarrier(ctx, gen, barrierDone)
			}
		case r := <-barrierDone:
			if r.gen != gen || n.raft.State() != raft.Leader || n.raft.CurrentTerm() != r.term {
				continue
			}
			ready = true
			n.leaderMu.Lock()
			n.lostCh = make(chan struct{})
			n.readyTerm.Store(r.term)
			n.leaderMu.Unlock()
			n.log.Info("raft: ready leader", "term", r.term, "applied_index", n.raft.AppliedIndex())
			if n.cfg.OnLeadership != nil {
				n.cfg.OnLeadership(true)
			}
			n.wg.Add(1)
			go n.leaderMembership()
		case <-watch.C:
			if n.cfg.Stream != nil {
				n.cfg.Stream.revalidate()
			}
		case <-n.stop:
			lose()
			return
		}
	}
}

// membershipPoll is how often the monitor closes the connections of peers
// that are no longer members: how long a removed member's open
// connections outlive its removal.
const membershipPoll = 500 * time.Millisecond

type barrierResult struct {
	gen, term uint64
}

// runBarrier commits a barrier in the current term and waits until the FSM
// has applied everything before it, retrying while this node leads: only
// then does the leader's state include every entry a previous leader
// committed, and only then may it decide writes.
func (n *Node) runBarrier(ctx context.Context, gen uint64, out chan<- barrierResult) {
	defer n.wg.Done()
	for {
		term := n.raft.CurrentTerm()
		err := n.raft.Barrier(barrierRetry).Error()
		if err == nil {
			select {
			case out <- barrierResult{gen: gen, term: term}:
			case <-ctx.Done():
			}
			return
		}
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrRaftShutdown) {
			return
		}
		n.log.Warn("raft: leader barrier failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ReadyLeader reports whether this node leads and its barrier for the
// current term is applied: the only state in which it may answer
// leader-only requests.
func (n *Node) ReadyLeader() bool {
	t := n.readyTerm.Load()
	return t != 0 && n.raft.State() == raft.Leader && n.raft.CurrentTerm() == t
}

// IsLeader reports raft's own role (true before the barrier too), for
// metadata replies that say "isLeader" as soon as the election is won.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// State is raft's role: Follower, Candidate, Leader or Shutdown.
func (n *Node) State() raft.RaftState { return n.raft.State() }

// ID is this node's server id.
func (n *Node) ID() string { return n.cfg.ID }

// LeaderInfo names a leader.
type LeaderInfo struct {
	ID        string
	RaftAddr  string
	ServeAddr string // empty when the id is not in the configured peers
	Self      bool
}

// Leader returns the leader this node knows of; ok is false when none is.
func (n *Node) Leader() (info LeaderInfo, ok bool) {
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return LeaderInfo{}, false
	}
	info = LeaderInfo{ID: string(id), RaftAddr: string(addr), Self: string(id) == n.cfg.ID}
	if p, known := n.peers[info.ID]; known {
		info.ServeAddr = p.ServeAddr
	}
	return info, true
}

// HasLeader reports whether a leader is known (the /readyz condition).
func (n *Node) HasLeader() bool {
	_, id := n.raft.LeaderWithID()
	return id != ""
}

func (n *Node) notLeader() error {
	info, _ := n.Leader()
	return &NotLeaderError{Leader: info}
}

// WaitReady blocks until this node is the ready leader or ctx ends; tests
// and tools use it, servers use OnLeadership.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !n.ReadyLeader() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stop:
			return ErrShutdown
		case <-t.C:
		}
	}
	return nil
}

// Snapshot takes a snapshot now and compacts the log behind it.
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("raft snapshot: %w", err)
	}
	return nil
}

// Close shuts raft down (a leader stops at once, without handing over),
// closes the transport and the stores and releases the directory lock.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.closeErr = n.raft.Shutdown().Error()
		close(n.stop)
		n.wg.Wait()
		n.releaseStores()
	})
	return n.closeErr
}

func (n *Node) releaseStores() {
	if n.store != nil {
		if err := n.store.Close(); err != nil {
			n.log.Error("raft store close", "err", err)
		}
		n.store = nil
	}
	n.lock.release()
	n.lock = nil
}
