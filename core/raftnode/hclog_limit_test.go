// raft's printf-style arguments are formatted, and its repeated warnings
// and errors about one peer are spaced out, on a fake clock.

package raftnode

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

func TestHCLogFormatsPrintfArgs(t *testing.T) {
	var buf bytes.Buffer
	l := newHCLog(slog.New(slog.NewTextHandler(&buf, nil)))
	servers := []raft.Server{{Suffrage: raft.Voter, ID: "n0", Address: "10.0.0.1:9878"}}
	// As raft logs a configuration change (raft.go, "updating configuration").
	l.Info("updating configuration", "command", raft.AddVoter, "server-id", "n0", "servers", hclog.Fmt("%+v", servers))
	l.With("tag", hclog.Quote("a b")).Info("numbers", "hex", hclog.Hex(255), "octal", hclog.Octal(8), "binary", hclog.Binary(5))
	out := buf.String()
	for _, want := range []string{
		`servers="[{Suffrage:Voter ID:n0 Address:10.0.0.1:9878}]"`,
		`hex=0xff octal=010 binary=0b101`,
		`tag="\"a b\""`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "%+v") {
		t.Errorf("a format verb was logged as is:\n%s", out)
	}
}

// With a follower down, raft logs a failed heartbeat about three times a
// second and as many failed appends (108 ERROR lines in 30 s were seen):
// each message about one peer is written once per repeatEvery (30 s), the next
// one saying how many were left out; another peer's lines are not held
// back by the first one's, and information lines are not limited.
func TestHCLogSpacesOutRepeatedPeerLines(t *testing.T) {
	var buf bytes.Buffer
	clk := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newHCLogClock(slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return clk })
	down := raft.Server{Suffrage: raft.Voter, ID: "n2", Address: "10.0.0.3:9878"}
	const step = 280 * time.Millisecond
	n := 0
	for elapsed := time.Duration(0); elapsed < 65*time.Second; elapsed += step {
		l.Error("failed to heartbeat to", "peer", down.Address, "backoff time", 250*time.Millisecond, "error", "dial tcp: connection refused")
		l.Error("failed to appendEntries to", "peer", down, "error", "dial tcp: connection refused")
		l.Warn("failed to contact", "server-id", down.ID, "time", elapsed)
		n += 3
		clk = clk.Add(step)
	}
	l.Error("failed to heartbeat to", "peer", raft.ServerAddress("10.0.0.2:9878"), "error", "timeout")
	l.Info("entering leader state", "leader", "n0")
	l.Info("entering leader state", "leader", "n0")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	count := func(sub string) int {
		c := 0
		for _, line := range lines {
			if strings.Contains(line, sub) {
				c++
			}
		}
		return c
	}
	// 65 s at one line per message and peer per 30 s: 3 lines each.
	if got := count("10.0.0.3:9878") + count("server-id=n2"); got > 3*3 || got < 3 {
		t.Errorf("%d lines about the down peer for %d raft calls, want 3 to 9:\n%s", got, n, buf.String())
	}
	if count(`msg="failed to heartbeat to" component=raft peer=10.0.0.3:9878`) == 0 {
		t.Errorf("the first failure was not logged at once:\n%s", buf.String())
	}
	if count("suppressed=") == 0 {
		t.Errorf("no line says how many were left out:\n%s", buf.String())
	}
	if count("peer=10.0.0.2:9878") != 1 {
		t.Errorf("another peer's first failure was held back:\n%s", buf.String())
	}
	if count("entering leader state") != 2 {
		t.Errorf("information lines were limited:\n%s", buf.String())
	}
}

// Lines whose peer field a stranger chooses (vote requests name their
// sender) cannot grow the limiter without bound.
func TestHCLogLimiterIsBounded(t *testing.T) {
	clk := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lim := newLimiter(repeatEvery, func() time.Time { return clk })
	for i := range 10 * maxLimited {
		lim.admit(hclog.Warn, "rejecting vote request since we have a leader", strings.Repeat("x", i%97)+string(rune('a'+i%26))+time.Duration(i).String())
	}
	if n := lim.len(); n > maxLimited {
		t.Fatalf("%d entries tracked, want at most %d", n, maxLimited)
	}
}
