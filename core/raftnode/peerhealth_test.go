// The leader's view of its peers: an outage opens on the first failed
// heartbeat with one line, is recalled every repeatEvery, goes on across a
// change of leadership without a new line, closes with one line when
// heartbeats resume, and shows in Stats.

package raftnode

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestPeerHealthOutage(t *testing.T) {
	var buf bytes.Buffer
	clk := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newPeerHealth(slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return clk })
	peers := map[string]Peer{"n2": {ID: "n2", RaftAddr: "10.0.0.3:9878", ServeAddr: "10.0.0.3:9878"}}
	lastContact := clk.Add(-400 * time.Millisecond)
	for i := range 200 { // 50 s of failed heartbeats, 4 a second
		term := uint64(7)
		if i >= 100 {
			term = 9 // this node lost the leadership and won it again
		}
		h.failed(term, "n2", lastContact, peers)
		if i == 0 {
			if o := h.outages(7)["n2"]; o.since != clk || o.lastContact != lastContact || o.failures != 1 {
				t.Fatalf("outage %+v after the first failure", o)
			}
		}
		clk = clk.Add(250 * time.Millisecond)
	}
	if o := h.outages(7); len(o) != 0 {
		t.Errorf("an outage whose last failure was in term 9 is reported in term 7: %+v", o)
	}
	if o := h.outages(9)["n2"]; o.failures != 200 || o.since != clk.Add(-50*time.Second) {
		t.Errorf("outage %+v in term 9, want the one that began 50 s ago", o)
	}
	h.resumed("n2", peers)
	if o := h.outages(9); len(o) != 0 {
		t.Errorf("outages %+v after the heartbeats resumed", o)
	}
	h.resumed("n2", peers) // raft says it once; a second says nothing
	// Failing again after it was back while this node did not lead (no
	// failure for repeatEvery) is a new outage.
	h.failed(9, "n1", time.Time{}, peers)
	clk = clk.Add(repeatEvery)
	h.failed(11, "n1", time.Time{}, peers)
	if o := h.outages(11)["n1"]; o.failures != 1 || o.since != clk {
		t.Errorf("outage %+v, want a new one", o)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want down, one reminder (30 s) and back, then n1 down twice:\n%s", len(lines), out)
	}
	for i, want := range []string{
		`level=WARN msg="raft: peer unreachable; the group goes on while a majority of its peers answer" peer=n2 raft_addr=10.0.0.3:9878 last_contact_ago=400ms`,
		`level=WARN msg="raft: peer still unreachable" peer=n2 raft_addr=10.0.0.3:9878 down_for=30s failed_heartbeats=121`,
		`level=INFO msg="raft: peer reachable again" peer=n2 raft_addr=10.0.0.3:9878 down_for=50s failed_heartbeats=200`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s\nwant it to contain %s", i, lines[i], want)
		}
	}
}

// A follower cut off: the leader's Stats show it unreachable, with the
// leader's address and every peer's; healed, every peer is reachable.
// Leadership may move on a loaded machine, so each check looks at
// whichever node leads when it is made.
func TestLeaderStatsShowPeerDown(t *testing.T) {
	var logs lockedBuffer
	g := newGroup(t, 3, false, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil)).With("node", c.ID)
	})
	down := (g.leader() + 1) % 3
	g.partition(down)
	downID := g.peers[down].ID
	var st Stats
	li := -1
	remotingtest.WaitFor(t, "a leader to see the cut-off follower down", func() bool {
		for i, n := range g.nodes {
			if i == down {
				continue
			}
			st, li = n.Stats(), i
			if st.State != "Leader" {
				continue
			}
			for _, p := range st.Peers {
				if p.ID == downID && p.Tracked && !p.Reachable && !p.DownSince.IsZero() && p.Failures > 0 {
					return true
				}
			}
		}
		return false
	})
	if st.LeaderAddr != g.peers[li].ServeAddr || len(st.Peers) != 3 {
		t.Fatalf("leader address %q, peers %+v", st.LeaderAddr, st.Peers)
	}
	for i, p := range st.Peers {
		if p.ID != g.peers[i].ID || p.ServeAddr != g.peers[i].ServeAddr || p.Self != (i == li) || p.Leader != (i == li) {
			t.Errorf("peer %d: %+v", i, p)
		}
		if i != down && !p.Reachable {
			t.Errorf("peer %s shown unreachable: %+v", p.ID, p)
		}
	}
	if !strings.Contains(logs.String(), "raft: peer unreachable") {
		t.Errorf("no line said the peer went down:\n%s", logs.String())
	}
	// A follower knows the peers but not their health.
	remotingtest.WaitFor(t, "a follower listing untracked peers", func() bool {
		for i, n := range g.nodes {
			if i == down {
				continue
			}
			if f := n.Stats(); f.State == "Follower" && len(f.Peers) == 3 && !f.Peers[down].Tracked {
				return true
			}
		}
		return false
	})
	g.heal(down)
	remotingtest.WaitFor(t, "every peer reachable once healed", func() bool {
		for _, n := range g.nodes {
			st := n.Stats()
			if st.State != "Leader" {
				continue
			}
			for _, p := range st.Peers {
				if !p.Reachable {
					return false
				}
			}
			return true
		}
		return false
	})
}
