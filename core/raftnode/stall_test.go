// A leader on a busy machine: stalls shorter than the heartbeat timeout,
// on the heartbeat path or in the log store, must not cost it the
// leadership while its peers are alive.

package raftnode

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// stallTransport is a node's in-memory transport whose AppendEntries (the
// leader's heartbeats and replication) are held while a stall is in force,
// both before they are sent and before their answer is seen: what the
// leader sees when its process gets no CPU for that long. Replication
// cannot bypass it through a pipeline.
type stallTransport struct {
	*raft.InmemTransport
	mu    sync.Mutex
	until time.Time
	// after counts AppendEntries answered that were sent after the last
	// stall ended.
	after atomic.Int64
}

func (s *stallTransport) stall(d time.Duration) {
	s.mu.Lock()
	s.until = time.Now().Add(d)
	s.mu.Unlock()
	s.after.Store(0)
}

func (s *stallTransport) wait() time.Time {
	s.mu.Lock()
	until := s.until
	s.mu.Unlock()
	time.Sleep(time.Until(until))
	return until
}

func (s *stallTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	until := s.wait()
	start := time.Now()
	err := s.InmemTransport.AppendEntries(id, target, args, resp)
	s.wait()
	if err == nil && start.After(until) {
		s.after.Add(1)
	}
	return err
}

func (s *stallTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// A leader whose heartbeat round trips stall for 35 % of the heartbeat
// timeout, again and again, stays the leader in the same term: with the
// lease defaulting to a quarter second it stepped down on each stall, and
// its followers, which still had it as their leader, elected a new one.
func TestLeaderKeepsLeadershipThroughStalls(t *testing.T) {
	var (
		mu     sync.Mutex
		trans  = map[string]*stallTransport{}
		losses atomic.Int64
	)
	g := newGroup(t, 3, false, func(c *Config) {
		// The heartbeat timeout is raised from the in-memory default so that
		// the margin left after the stall dwarfs a loaded machine's
		// scheduling delays; the lease is left to its default.
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = time.Second, time.Second, 0
		st := &stallTransport{InmemTransport: c.Transport.(*raft.InmemTransport)}
		c.Transport = st
		mu.Lock()
		trans[c.ID] = st
		mu.Unlock()
		c.OnLeadership = func(ready bool) {
			if !ready {
				losses.Add(1)
			}
		}
	})
	l := g.leader()
	g.write("before")
	term := g.nodes[l].Stats().Term
	mu.Lock()
	st := trans[g.peers[l].ID]
	mu.Unlock()
	const stalls = 3
	for i := range stalls {
		st.stall(350 * time.Millisecond)
		// Every lease check that could fail falls before the leader has
		// heard from both followers again a few times.
		remotingtest.WaitFor(t, "round trips after the stall", func() bool {
			return st.after.Load() >= 6 || g.nodes[l].State() != raft.Leader
		})
		if s := g.nodes[l].State(); s != raft.Leader {
			t.Fatalf("stall %d: the leader stepped down (%v) with both followers alive", i+1, s)
		}
	}
	for i, n := range g.nodes {
		if got := n.Stats().Term; got != term {
			t.Errorf("%s: term %d after the stalls, want %d", g.peers[i].ID, got, term)
		}
	}
	if !g.nodes[l].ReadyLeader() || losses.Load() != 0 {
		t.Fatalf("after %d stalls: ready leader %v, %d leaderships lost", stalls, g.nodes[l].ReadyLeader(), losses.Load())
	}
	g.write("after")
}

// slowLogs stalls every store of log entries while armed, as an fsync does
// on a disk shared with heavy writers.
type slowLogs struct {
	raft.LogStore
	stall time.Duration
	armed *atomic.Bool
}

func (s slowLogs) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s slowLogs) StoreLogs(logs []*raft.Log) error {
	if s.armed.Load() {
		time.Sleep(s.stall)
	}
	return s.LogStore.StoreLogs(logs)
}

// Writes whose fsync takes twice the heartbeat timeout, on the leader and
// on both followers, leave the leader in place with the default timings:
// raft's network transport answers heartbeats beside the log (the main
// loop that is stuck in the store never sees them), so a slow disk slows
// the writes and nothing else. A transport that queued heartbeats behind
// the store would fail here.
func TestSlowLogStoreKeepsLeadership(t *testing.T) {
	var (
		armed  atomic.Bool
		losses atomic.Int64
	)
	stall := 2 * DefaultHeartbeatTimeout
	g := newLoopGroupWith(t, 3, func(c *Config) {
		c.wrapLogs = func(l raft.LogStore) raft.LogStore { return slowLogs{LogStore: l, stall: stall, armed: &armed} }
		c.ApplyTimeout = time.Minute // writes are meant to be slow here
		c.OnLeadership = func(ready bool) {
			if !ready {
				losses.Add(1)
			}
		}
	})
	l := waitReadyLeader(t, g.nodes)
	term := g.nodes[l].Stats().Term
	armed.Store(true)
	for i := range 2 {
		if _, err := g.nodes[l].Apply(context.Background(), fmt.Appendf(nil, "slow-%d", i)); err != nil {
			t.Fatalf("write %d with a stalled store: %v", i, err)
		}
	}
	armed.Store(false)
	for i, n := range g.nodes {
		if got := n.Stats().Term; got != term {
			t.Errorf("%s: term %d after the slow writes, want %d", g.peers[i].ID, got, term)
		}
	}
	if !g.nodes[l].ReadyLeader() || losses.Load() != 0 {
		t.Fatalf("after the slow writes: ready leader %v, %d leaderships lost", g.nodes[l].ReadyLeader(), losses.Load())
	}
}

// recordHandler keeps the messages logged through it.
type recordHandler struct {
	mu   *sync.Mutex
	msgs *[]string
}

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	*h.msgs = append(*h.msgs, r.Message)
	h.mu.Unlock()
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// The transport a node builds on its stream layer carries raft's pre-vote:
// without it a follower that stalls past its heartbeat timeout raises the
// term, and the leader steps down when it next hears that term, although
// both were alive. raft turns pre-vote off, with a warning, for a transport
// that lacks RequestPreVote (a wrapper that forgets to pass it on).
func TestNodeTransportKeepsPreVote(t *testing.T) {
	var (
		mu   sync.Mutex
		msgs []string
	)
	st, err := ListenStream("127.0.0.1:0", "", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(Config{ID: "n0", Peers: []Peer{{ID: "n0", RaftAddr: st.Addr().String()}}, InMemory: true, Stream: st,
		Logger: slog.New(recordHandler{mu: &mu, msgs: &msgs})}, &recFSM{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	// raft says so when its election went through a pre-vote.
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, "pre-vote successful") }) {
		t.Fatalf("elected without a pre-vote; raft logged %q", msgs)
	}
}
