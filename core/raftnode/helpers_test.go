// Test helpers: a recording FSM and in-memory groups.

package raftnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// recFSM records every applied entry in order.
type recFSM struct {
	mu       sync.Mutex
	entries  []string
	lastIdx  uint64
	restores int
}

func (f *recFSM) Apply(index uint64, data []byte) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index <= f.lastIdx {
		panic(fmt.Sprintf("index %d applied after %d", index, f.lastIdx))
	}
	f.lastIdx = index
	f.entries = append(f.entries, string(data))
	return "applied:" + string(data)
}

func (f *recFSM) Snapshot() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []byte(strings.Join(f.entries, "\n")), nil
}

func (f *recFSM) Restore(data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restores++
	f.entries = nil
	if len(data) > 0 {
		f.entries = strings.Split(string(data), "\n")
	}
	return nil
}

func (f *recFSM) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

// testLogger writes to the test log only when RAFTNODE_LOG is set: raft is
// chatty and -race runs are long enough without it.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("RAFTNODE_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(p)))
	return len(p), nil
}

// fastTimeouts suit the in-memory transport, where nothing waits on a wire.
func fastTimeouts(c *Config) {
	c.HeartbeatTimeout = 100 * time.Millisecond
	c.ElectionTimeout = 100 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.ApplyTimeout = 2 * time.Second
}

// group is a raft group on raft's in-memory transport.
type group struct {
	mu     sync.Mutex // guards nodes against the writer goroutine of some tests
	t      *testing.T
	peers  []Peer
	nodes  []*Node
	fsms   []*recFSM
	trans  []*raft.InmemTransport
	dirs   []string // empty: in-memory stores
	mutate func(*Config)
}

func newGroup(t *testing.T, n int, persistent bool, mutate func(*Config)) *group {
	g := &group{t: t, mutate: mutate}
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		g.peers = append(g.peers, Peer{ID: id, RaftAddr: "raft-" + id, ServeAddr: fmt.Sprintf("10.0.0.%d:9878", i)})
		if persistent {
			g.dirs = append(g.dirs, t.TempDir())
		} else {
			g.dirs = append(g.dirs, "")
		}
	}
	g.nodes = make([]*Node, n)
	g.fsms = make([]*recFSM, n)
	g.trans = make([]*raft.InmemTransport, n)
	for i := range n {
		g.start(i)
	}
	t.Cleanup(g.closeAll)
	return g
}

// start (re)creates node i with a fresh FSM and transport, connected to the
// transports of every running node.
func (g *group) start(i int) {
	g.t.Helper()
	_, tr := raft.NewInmemTransport(raft.ServerAddress(g.peers[i].RaftAddr))
	g.trans[i] = tr
	for j, other := range g.trans {
		if j != i && other != nil && g.nodes[j] != nil {
			tr.Connect(raft.ServerAddress(g.peers[j].RaftAddr), other)
			other.Connect(raft.ServerAddress(g.peers[i].RaftAddr), tr)
		}
	}
	cfg := Config{
		ID:        g.peers[i].ID,
		Peers:     g.peers,
		Dir:       g.dirs[i],
		InMemory:  g.dirs[i] == "",
		Transport: tr,
		Logger:    testLogger(g.t).With("node", g.peers[i].ID),
	}
	fastTimeouts(&cfg)
	if g.mutate != nil {
		g.mutate(&cfg)
	}
	g.fsms[i] = &recFSM{}
	n, err := New(cfg, g.fsms[i])
	if err != nil {
		g.t.Fatalf("start %s: %v", cfg.ID, err)
	}
	g.mu.Lock()
	g.nodes[i] = n
	g.mu.Unlock()
}

func (g *group) stop(i int) {
	if g.nodes[i] == nil {
		return
	}
	if err := g.nodes[i].Close(); err != nil {
		g.t.Errorf("close %s: %v", g.peers[i].ID, err)
	}
	g.mu.Lock()
	g.nodes[i] = nil
	g.mu.Unlock()
}

func (g *group) closeAll() {
	for i := range g.nodes {
		g.stop(i)
	}
}

// partition cuts node i off from every other node, both ways.
func (g *group) partition(i int) {
	g.trans[i].DisconnectAll()
	for j, tr := range g.trans {
		if j != i && tr != nil {
			tr.Disconnect(raft.ServerAddress(g.peers[i].RaftAddr))
		}
	}
}

func (g *group) heal(i int) {
	for j, tr := range g.trans {
		if j != i && tr != nil && g.nodes[j] != nil {
			g.trans[i].Connect(raft.ServerAddress(g.peers[j].RaftAddr), tr)
			tr.Connect(raft.ServerAddress(g.peers[i].RaftAddr), g.trans[i])
		}
	}
}

// leader waits for exactly one ready leader among the running nodes other
// than those in skip, and returns its index.
func (g *group) leader(skip ...int) int {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		found := -1
		count := 0
		for i, n := range g.nodes {
			if n != nil && !slices.Contains(skip, i) && n.ReadyLeader() {
				found = i
				count++
			}
		}
		if count == 1 {
			return found
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.t.Fatalf("no single ready leader within 20s")
	return -1
}

// apply writes data through whichever node is the ready leader, retrying
// refusals that leave nothing behind (not leader) until ctx ends.
func (g *group) apply(ctx context.Context, data string) error {
	for {
		g.mu.Lock()
		nodes := slices.Clone(g.nodes)
		g.mu.Unlock()
		for _, n := range nodes {
			if n == nil || !n.ReadyLeader() {
				continue
			}
			_, err := n.Apply(ctx, []byte(data))
			if err == nil || !errors.Is(err, ErrNotLeader) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// converge waits until every running node other than skip has applied the
// same entries, and returns them.
func (g *group) converge(skip ...int) []string {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lists [][]string
	for time.Now().Before(deadline) {
		lists = lists[:0]
		same := true
		for i, f := range g.fsms {
			if g.nodes[i] == nil || slices.Contains(skip, i) {
				continue
			}
			l := f.list()
			if len(lists) > 0 && !slices.Equal(l, lists[0]) {
				same = false
			}
			lists = append(lists, l)
		}
		if same && len(lists) > 0 {
			return lists[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("nodes did not converge within 20s: %d lists, lengths %v", len(lists), lens(lists))
	return nil
}

func lens(ls [][]string) []int {
	var out []int
	for _, l := range ls {
		out = append(out, len(l))
	}
	return out
}

// noDuplicates fails if an entry was applied twice.
func noDuplicates(t *testing.T, entries []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e] {
			t.Fatalf("entry %q applied twice", e)
		}
		seen[e] = true
	}
}

// applySure writes data exactly once through whichever node is the ready
// leader, as a careful client would on a loaded machine where leadership
// can move mid-write: after an uncertain outcome (leadership lost, timeout)
// it commits a barrier on the ready leader, whose FSM then holds every
// entry that will ever commit, and retries only if data is not there.
func applySure(tb testing.TB, view func() ([]*Node, []*recFSM), data string) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		nodes, _ := view()
		l := -1
		for i, n := range nodes {
			if n != nil && n.ReadyLeader() {
				l = i
			}
		}
		if l < 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := nodes[l].Apply(ctx, []byte(data))
		cancel()
		if err == nil {
			return
		}
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		tb.Logf("write %s: %v; checking whether it committed", data, err)
		for time.Now().Before(deadline) {
			nodes, fsms := view()
			found := -1
			for i, n := range nodes {
				if n != nil && n.ReadyLeader() && n.raft.Barrier(5*time.Second).Error() == nil && n.ReadyLeader() {
					found = i
					break
				}
			}
			if found >= 0 {
				if slices.Contains(fsms[found].list(), data) {
					return
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	tb.Fatalf("write %s not committed within 60s", data)
}

func (g *group) view() ([]*Node, []*recFSM) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.nodes), slices.Clone(g.fsms)
}

func (g *group) write(data string) { applySure(g.t, g.view, data) }
