// Persistence: a group on bbolt restarted whole, with and without a
// snapshot, and (persist_kill_test.go) a process killed with SIGKILL mid-write.

package raftnode

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/goleak"
)

func writeN(t *testing.T, g *group, from, to int) []string {
	t.Helper()
	var out []string
	for i := from; i < to; i++ {
		d := fmt.Sprintf("p%d", i)
		g.write(d)
		out = append(out, d)
	}
	return out
}

func TestRestartWholeGroup(t *testing.T) {
	g := newGroup(t, 3, true, func(c *Config) {
		// Only the forced snapshot below, none on a timer.
		c.SnapshotInterval = time.Hour
		c.SnapshotThreshold = 1 << 20
		c.TrailingLogs = 5
	})
	g.leader()
	want := writeN(t, g, 0, 30)
	g.converge()

	// Stop everyone, start again from the same directories.
	g.closeAll()
	for i := range g.nodes {
		g.start(i)
	}
	l := g.leader()
	// The barrier makes the new leader's FSM complete before it is ready.
	if got := g.fsms[l].list(); !slices.Equal(got, want) {
		t.Fatalf("leader after restart: %d entries, want %d", len(got), len(want))
	}
	if got := g.converge(); !slices.Equal(got, want) {
		t.Fatalf("after restart: %v", got)
	}

	// Snapshot every node (compacting its log to 5 entries), write more,
	// restart: the state comes back from snapshot plus log.
	for i, n := range g.nodes {
		if err := n.Snapshot(); err != nil {
			t.Fatalf("snapshot on %s: %v", g.peers[i].ID, err)
		}
	}
	want = append(want, writeN(t, g, 30, 40)...)
	g.converge()
	snapIndex := g.nodes[l].Stats().LastSnapshotIndex
	if snapIndex == 0 {
		t.Fatal("no snapshot index after a forced snapshot")
	}
	g.closeAll()
	// The log behind the snapshot is gone from disk.
	s := openTestStore(t, g.dirs[l])
	first, _ := s.FirstIndex()
	s.Close()
	if first <= 1 {
		t.Fatalf("log not compacted after the snapshot: first index %d", first)
	}
	for i := range g.nodes {
		g.start(i)
	}
	g.leader()
	if got := g.converge(); !slices.Equal(got, want) {
		t.Fatalf("after snapshot and restart: %d entries %v, want %d", len(got), got, len(want))
	}
	for i, f := range g.fsms {
		f.mu.Lock()
		r := f.restores
		f.mu.Unlock()
		if r == 0 {
			t.Fatalf("node %s did not restore its snapshot", g.peers[i].ID)
		}
	}
	// A corrupt snapshot on disk stops the node rather than starting it on
	// wrong state.
	g.closeAll()
	snaps, _ := filepath.Glob(filepath.Join(g.dirs[0], "snapshots", "*", "state.bin"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot files")
	}
	for _, p := range snaps {
		b, _ := os.ReadFile(p)
		b[len(b)-1] ^= 0xff
		os.WriteFile(p, b, 0o600)
	}
	_, tr := raft.NewInmemTransport(raft.ServerAddress(g.peers[0].RaftAddr))
	cfg := Config{ID: g.peers[0].ID, Peers: g.peers, Dir: g.dirs[0], Transport: tr, Logger: testLogger(t)}
	if n, err := New(cfg, &recFSM{}); err == nil {
		n.Close()
		t.Fatal("a node started on a corrupt snapshot")
	} else {
		t.Logf("start on a corrupt snapshot: %v", err)
	}
}

// A second node on an existing directory does not bootstrap again and
// keeps its term.
func TestRestartKeepsTermAndSkipsBootstrap(t *testing.T) {
	g := newGroup(t, 1, true, nil)
	l := g.leader()
	writeN(t, g, 0, 3)
	term := g.nodes[l].Stats().Term
	g.closeAll()
	g.start(0)
	g.leader()
	st := g.nodes[0].Stats()
	if st.Term <= term {
		t.Fatalf("term after restart %d, before %d", st.Term, term)
	}
	if got := g.fsms[0].list(); !slices.Equal(got, []string{"p0", "p1", "p2"}) {
		t.Fatal(got)
	}
}

// The child side of TestKillMidWrite (persist_kill_test.go): a single-node group writing entries
// as fast as it can, printing each acknowledged one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RAFTNODE_CRASH_CHILD"); dir != "" {
		os.Exit(crashChild(dir))
	}
	code := m.Run()
	// Every Close must leave nothing running: a goroutine left behind by a
	// node is a node that did not really stop.
	if code == 0 {
		// netpoll's pollers (the remoting listener of some tests) live
		// for the process.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func crashChild(dir string) int {
	_, tr := raft.NewInmemTransport("solo")
	cfg := Config{ID: "solo", Peers: []Peer{{ID: "solo", RaftAddr: "solo"}}, Dir: dir, Transport: tr, SnapshotThreshold: 64, TrailingLogs: 16, SnapshotInterval: 50 * time.Millisecond}
	fastTimeouts(&cfg)
	cfg.Logger = testLogger(nopTB{})
	fsm := &recFSM{}
	n, err := New(cfg, fsm)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if err := n.WaitReady(context.Background()); err != nil {
		fmt.Println("error", err)
		return 1
	}
	start := len(fsm.list())
	w := bufio.NewWriter(os.Stdout)
	for i := start; ; i++ {
		d := "k" + strconv.Itoa(i)
		if _, err := n.Apply(context.Background(), []byte(d)); err != nil {
			fmt.Fprintln(w, "error", err)
			w.Flush()
			return 1
		}
		fmt.Fprintln(w, "ack", d)
		w.Flush()
	}
}

type nopTB struct{ testing.TB }
