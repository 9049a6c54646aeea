// In-memory groups: election, ordering, partitions and shutdowns mid-write,
// quorum loss, the barrier and membership.

package raftnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestGroupElectsAndAppliesInOrder(t *testing.T) {
	var (
		mu     sync.Mutex
		events = map[string][]bool{}
	)
	g := newGroup(t, 3, false, func(c *Config) {
		id := c.ID
		c.OnLeadership = func(ready bool) {
			mu.Lock()
			events[id] = append(events[id], ready)
			mu.Unlock()
		}
	})
	l := g.leader()
	ctx := context.Background()
	res, err := g.nodes[l].Apply(ctx, []byte("e0"))
	if err != nil {
		t.Fatalf("apply e0: %v", err)
	}
	if res != "applied:e0" {
		t.Fatalf("apply e0 returned %v", res)
	}
	// Apply returns after the local FSM applied the entry.
	if got := g.fsms[l].list(); len(got) != 1 || got[0] != "e0" {
		t.Fatalf("after Apply(e0) the leader's FSM holds %q", got)
	}
	want := []string{"e0"}
	for i := 1; i < 50; i++ {
		d := fmt.Sprintf("e%d", i)
		g.write(d)
		want = append(want, d)
	}
	if got := g.converge(); !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
	// OnLeadership alternates, starting with true; the leader's last call
	// said ready.
	mu.Lock()
	for id, calls := range events {
		for i, c := range calls {
			if c != (i%2 == 0) {
				t.Fatalf("%s: OnLeadership calls %v", id, calls)
			}
		}
	}
	mu.Unlock()

	// What follows is checked against one leader at a time: on a loaded
	// machine leadership may move between two looks, which raft allows, so
	// a view that disagrees with a leader that has since changed is looked
	// at again. A view that stays wrong fails after remotingtest.Hang.
	for end := time.Now().Add(remotingtest.Hang); ; time.Sleep(10 * time.Millisecond) {
		wrong := leaderViews(g, &mu, events)
		if wrong == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%s (still after %v)", wrong, remotingtest.Hang)
		}
	}
}

// leaderViews checks the ready leader's last OnLeadership call, a
// follower's refusal and both nodes' Leader and Stats against one leader,
// and returns what disagreed, or "" when all agreed and the leader was the
// same before and after.
func leaderViews(g *group, mu *sync.Mutex, events map[string][]bool) string {
	l := g.leader()
	mu.Lock()
	calls := slices.Clone(events[g.peers[l].ID])
	mu.Unlock()
	if len(calls) == 0 || !calls[len(calls)-1] {
		return fmt.Sprintf("leader's OnLeadership calls: %v", calls)
	}

	// A follower refuses with the leader's id and broker-facing address.
	f := (l + 1) % 3
	_, err := g.nodes[f].Apply(context.Background(), []byte("x"))
	var nl *NotLeaderError
	if !errors.As(err, &nl) || !errors.Is(err, ErrNotLeader) {
		return fmt.Sprintf("follower Apply: %v", err)
	}
	if nl.Leader.ID != g.peers[l].ID || nl.Leader.ServeAddr != g.peers[l].ServeAddr || nl.Leader.RaftAddr != g.peers[l].RaftAddr || nl.Leader.Self {
		return fmt.Sprintf("follower names leader %+v, want %+v", nl.Leader, g.peers[l])
	}
	info, ok := g.nodes[f].Leader()
	if !ok || info.ID != g.peers[l].ID || info.ServeAddr != g.peers[l].ServeAddr {
		return fmt.Sprintf("follower Leader() = %+v, %v", info, ok)
	}
	if !g.nodes[f].HasLeader() || g.nodes[f].IsLeader() || g.nodes[f].ReadyLeader() {
		return "follower's view of itself is wrong"
	}

	st := g.nodes[l].Stats()
	if st.State != "Leader" || !st.ReadyLeader || st.LeaderID != g.peers[l].ID || st.Voters != 3 ||
		st.AppliedIndex < 50 || st.CommitIndex < st.AppliedIndex || st.LastLogIndex < st.CommitIndex || st.Term == 0 || st.MembershipMismatch {
		return fmt.Sprintf("leader stats %+v", st)
	}
	fs := g.nodes[f].Stats()
	if fs.State != "Follower" || fs.ReadyLeader || fs.LeaderID != g.peers[l].ID || fs.LastContact.IsZero() {
		return fmt.Sprintf("follower stats %+v", fs)
	}
	if g.leader() != l {
		return "leadership moved while it was looked at"
	}
	return ""
}

// writer keeps writing unique entries through whichever node leads and
// records which were acknowledged.
type writer struct {
	mu    sync.Mutex
	acked []string
	fails int
	n     atomic.Int64
}

func (w *writer) run(ctx context.Context, g *group) {
	for i := 0; ctx.Err() == nil; i++ {
		d := fmt.Sprintf("w%d", i)
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := g.apply(actx, d)
		cancel()
		w.mu.Lock()
		if err == nil {
			w.acked = append(w.acked, d)
			w.n.Add(1)
		} else {
			w.fails++
		}
		w.mu.Unlock()
	}
}

func (w *writer) waitAcked(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.n.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d acknowledged writes within 20s, want %d", w.n.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkAcked asserts every acknowledged write is in entries exactly once and
// in acknowledgement order.
func checkAcked(t *testing.T, entries, acked []string) {
	t.Helper()
	noDuplicates(t, entries)
	pos := map[string]int{}
	for i, e := range entries {
		pos[e] = i
	}
	last := -1
	for _, a := range acked {
		p, ok := pos[a]
		if !ok {
			t.Fatalf("acknowledged write %q lost (have %d entries)", a, len(entries))
		}
		if p < last {
			t.Fatalf("acknowledged write %q applied before an earlier acknowledged one", a)
		}
		last = p
	}
}

func TestLeaderLossMidWrite(t *testing.T) {
	for _, how := range []string{"partition", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			g := newGroup(t, 3, false, nil)
			old := g.leader()
			ctx, cancel := context.WithCancel(context.Background())
			w := &writer{}
			done := make(chan struct{})
			go func() { defer close(done); w.run(ctx, g) }()
			w.waitAcked(t, 30)
			if how == "partition" {
				g.partition(old)
			} else {
				g.stop(old)
			}
			g.leader(old)
			w.waitAcked(t, w.n.Load()+30)
			cancel()
			<-done
			if how == "partition" {
				g.heal(old)
				entries := g.converge()
				checkAcked(t, entries, w.acked)
			} else {
				entries := g.converge(old)
				checkAcked(t, entries, w.acked)
			}
			t.Logf("%d acknowledged, %d refused or uncertain", len(w.acked), w.fails)
		})
	}
}

func TestDeposedLeaderPendingApplyFails(t *testing.T) {
	g := newGroup(t, 3, false, nil)
	g.leader()
	ctx := context.Background()
	g.write("before")
	old := g.leader()
	g.partition(old)
	// The old leader still believes it leads (its lease has not run out),
	// so this entry is appended to its log but can never commit.
	_, err := g.nodes[old].Apply(ctx, []byte("orphan"))
	if err == nil {
		t.Fatal("Apply on a partitioned leader succeeded")
	}
	if !errors.Is(err, ErrLeadershipLost) && !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Apply on a partitioned leader: %v", err)
	}
	t.Logf("partitioned leader's Apply: %v", err)
	g.leader(old)
	// The partitioned node may still call itself ready for a moment; write
	// through the others.
	applySure(t, func() ([]*Node, []*recFSM) {
		nodes, fsms := g.view()
		nodes[old] = nil
		return nodes, fsms
	}, "after")
	g.heal(old)
	entries := g.converge()
	if !slices.Equal(entries, []string{"before", "after"}) {
		t.Fatalf("entries after heal: %v (the orphan must be dropped, never committed)", entries)
	}
	if g.nodes[old].ReadyLeader() {
		t.Fatal("deposed leader still ready")
	}
}

func TestFiveNodeQuorum(t *testing.T) {
	// A leader lease of a second leaves the leader in place, waiting for a
	// quorum, while the write below times out.
	g := newGroup(t, 5, false, func(c *Config) {
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = time.Second, time.Second, time.Second
	})
	ctx := context.Background()
	g.leader()
	g.write("a")
	// Lose two, the leader among them: three still commit.
	l := g.leader()
	other := (l + 1) % 5
	g.stop(l)
	g.stop(other)
	g.leader()
	g.write("b")
	l2 := g.leader()
	if got := g.converge(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("survivors applied %v", got)
	}
	// Lose a third (not the leader): no quorum, so the write times out.
	for i, n := range g.nodes {
		if n != nil {
			g.partition(i)
			break
		}
	}
	actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := g.nodes[l2].Apply(actx, []byte("c"))
	cancel()
	// The lease outlasts the write's deadline, so the answer is a timeout;
	// only a machine stalled past the lease can have deposed the leader
	// first, and then the write was refused all the same.
	if !errors.Is(err, ErrTimeout) && (err == nil || g.nodes[l2].IsLeader()) {
		t.Fatalf("apply with 2 of 5: %v, want a timeout", err)
	}
	t.Logf("apply with 2 of 5: %v", err)
	// And stay refused: no node becomes the ready leader again.
	for range 20 {
		for _, n := range g.nodes {
			if n != nil && n.ReadyLeader() {
				if _, err := n.Apply(ctx, []byte("d")); err == nil {
					t.Fatal("a write committed with 2 of 5 nodes")
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, n := range g.nodes {
		if n != nil {
			if got := g.fsms[i].list(); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("survivor applied %v", got)
			}
		}
	}
}

func TestSingleNodeGroup(t *testing.T) {
	g := newGroup(t, 1, false, nil)
	l := g.leader()
	g.write("solo")
	if got := g.fsms[l].list(); !slices.Equal(got, []string{"solo"}) {
		t.Fatal(got)
	}
}

func TestApplyDeadlineAndShutdown(t *testing.T) {
	g := newGroup(t, 3, false, nil)
	l := g.leader()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.nodes[l].Apply(ctx, []byte("x")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Apply with a done context: %v", err)
	}
	n := g.nodes[l]
	g.stop(l)
	if _, err := n.Apply(context.Background(), []byte("y")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Apply after Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A barrier is required before a new leader serves: with the FSM blocked, an
// elected leader stays not ready and refuses writes.
func TestBarrierGatesReadiness(t *testing.T) {
	gate := make(chan struct{})
	var blocking atomic.Bool
	g := newGroup(t, 3, false, nil)
	// Registered after the group's, so it runs first: a failure below must
	// not leave the FSM blocked while the nodes close.
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	t.Cleanup(release)
	g.leader()
	g.write("a")
	l := g.leader()
	// Restart one follower with an FSM that blocks on its first Apply.
	f := (l + 1) % 3
	g.stop(f)
	_, tr := raft.NewInmemTransport(raft.ServerAddress(g.peers[f].RaftAddr))
	g.trans[f] = tr
	g.heal(f)
	cfg := Config{ID: g.peers[f].ID, Peers: g.peers, InMemory: true, Transport: tr, Logger: testLogger(t)}
	fastTimeouts(&cfg)
	blocking.Store(true)
	bf := &blockingFSM{gate: gate, blocking: &blocking}
	n, err := New(cfg, bf)
	if err != nil {
		t.Fatal(err)
	}
	g.nodes[f] = n
	g.fsms[f] = &recFSM{}
	// Make it the leader while its FSM cannot apply "a".
	// The transfer waits one election timeout for the target, which may
	// still be catching up, so it is retried.
	deadline := time.Now().Add(20 * time.Second)
	for !n.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("transfer target never led")
		}
		for _, o := range g.nodes {
			if o != n && o.IsLeader() {
				o.raft.LeadershipTransferToServer(raft.ServerID(g.peers[f].ID), raft.ServerAddress(g.peers[f].RaftAddr)).Error()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 10 {
		if n.ReadyLeader() {
			t.Fatal("leader ready before its FSM applied the previous term's entries")
		}
		if _, err := n.Apply(context.Background(), []byte("b")); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("Apply before the barrier: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var nl *NotLeaderError
	if _, err := n.Apply(context.Background(), []byte("b")); !errors.As(err, &nl) || (!nl.Leader.Self && n.IsLeader()) {
		t.Fatalf("not-ready leader's refusal: %v", err)
	}
	release()
	// Whoever leads now (this node once its FSM caught up, or another if
	// a loaded machine moved the leadership) takes the write.
	g.mu.Lock()
	g.fsms[f] = &bf.recFSM
	g.mu.Unlock()
	g.write("b")
	if got := g.converge(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("applied %v", got)
	}
}

type blockingFSM struct {
	recFSM
	gate     chan struct{}
	blocking *atomic.Bool
}

func (b *blockingFSM) Apply(index uint64, data []byte) any {
	if b.blocking.Load() {
		<-b.gate
		b.blocking.Store(false)
	}
	return b.recFSM.Apply(index, data)
}

func TestMembershipMismatchDetectedAndReconciled(t *testing.T) {
	g := newGroup(t, 3, true, nil)
	g.leader()
	g.write("a")
	// Configure a fourth member and restart everyone with the new list,
	// first without permission to change raft's membership.
	g.peers = append(g.peers, Peer{ID: "n3", RaftAddr: "raft-n3", ServeAddr: "10.0.0.3:9878"})
	g.dirs = append(g.dirs, t.TempDir())
	g.nodes = append(g.nodes, nil)
	g.fsms = append(g.fsms, nil)
	g.trans = append(g.trans, nil)
	g.closeAll()
	for i := range 4 {
		g.start(i)
	}
	l := g.leader()
	st := g.nodes[l].Stats()
	if !st.MembershipMismatch || st.Voters != 3 {
		t.Fatalf("stats after a peer was added to the config: %+v", st)
	}
	// Now let the leader apply it.
	g.closeAll()
	g.mutate = func(c *Config) { c.ApplyMembershipChanges = true }
	for i := range 4 {
		g.start(i)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		l = g.leader()
		if st := g.nodes[l].Stats(); st.Voters == 4 && !st.MembershipMismatch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("membership not reconciled: %+v", g.nodes[l].Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.write("b")
	if got := g.converge(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after adding n3: %v", got)
	}
	members, err := g.nodes[g.leader()].Members()
	if err != nil || len(members) != 4 {
		t.Fatalf("members %v, %v", members, err)
	}
}

func TestMembershipDiff(t *testing.T) {
	cfg := func(servers ...string) raft.Configuration {
		var c raft.Configuration
		for i := 0; i < len(servers); i += 2 {
			c.Servers = append(c.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(servers[i]), Address: raft.ServerAddress(servers[i+1])})
		}
		return c
	}
	peers := func(servers ...string) []Peer {
		var out []Peer
		for i := 0; i < len(servers); i += 2 {
			out = append(out, Peer{ID: servers[i], RaftAddr: servers[i+1]})
		}
		return out
	}
	f := func(have raft.Configuration, want []Peer, self string, exp ...string) {
		t.Helper()
		got := describe(membershipDiff(have, want, self))
		if !slices.Equal(got, exp) {
			t.Fatalf("diff\n got %q\nwant %q", got, exp)
		}
	}
	f(cfg("a", "1", "b", "2"), peers("a", "1", "b", "2"), "a")
	f(cfg("a", "1", "b", "2"), peers("a", "1", "b", "2", "c", "3"), "a", "add c 3 (not a member)")
	f(cfg("a", "1", "b", "2", "c", "3"), peers("b", "2", "c", "9"), "a",
		"add c 9 (address 3 in raft)", "remove a 1 (not configured)")
	f(cfg("a", "1", "z", "5", "y", "4"), peers("a", "1"), "a", "remove y 4 (not configured)", "remove z 5 (not configured)")
}
