//go:build e2e

// TestKillMidWrite: a single-node group in a child process (this test
// binary, see TestMain) killed with SIGKILL mid-write, three times, keeps
// every acknowledged entry.

package raftnode

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
)

func TestKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	var acked []string
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "RAFTNODE_CRASH_CHILD="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			d, ok := strings.CutPrefix(line, "ack ")
			if !ok {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child: %s", line)
			}
			acked = append(acked, d)
			n++
			if n == 300 {
				// Mid-stream: the next Apply is in flight.
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		cmd.Wait()
		t.Logf("round %d: %d acknowledged before SIGKILL", round, n)
	}
	// Reopen in this process: every acknowledged entry is there, once, in
	// order; at most the one in flight at each kill is extra.
	_, tr := raft.NewInmemTransport("solo")
	cfg := Config{ID: "solo", Peers: []Peer{{ID: "solo", RaftAddr: "solo"}}, Dir: dir, Transport: tr, Logger: testLogger(t)}
	fastTimeouts(&cfg)
	fsm := &recFSM{}
	n, err := New(cfg, fsm)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := fsm.list()
	checkAcked(t, got, acked)
	// Each run continued from the entries it found, so the log is k0, k1,
	// ... without a gap or a repeat, whatever the kills cut short.
	for i, e := range got {
		if e != "k"+strconv.Itoa(i) {
			t.Fatalf("entry %d is %q (of %d entries, %d acknowledged)", i, e, len(got), len(acked))
		}
	}
	t.Logf("%d entries after 3 kills, %d seen acknowledged", len(got), len(acked))
}
