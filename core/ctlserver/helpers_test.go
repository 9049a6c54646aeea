// What this package's tests share: loopback ports, membership from the
// Java keys, a fake clock, nodes started and stopped with the test, and
// waits on conditions.

package ctlserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// testLogger writes to the test log only when CTLSERVER_LOG is set: raft
// is chatty.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("CTLSERVER_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(p)))
	return len(p), nil
}

// dledger is a DLedger-style membership of the addresses, seen from node
// self, as the Java keys give it.
func dledger(t testing.TB, addrs []string, self int) *membership.Membership {
	t.Helper()
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("n%d-%s", i, a))
	}
	m, err := membership.Parse(membership.FromMap(map[string]string{
		membership.KeyDLedgerGroup:  "group1",
		membership.KeyDLedgerPeers:  strings.Join(peers, ";"),
		membership.KeyDLedgerSelfID: fmt.Sprintf("n%d", self),
	}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fakeClock is a settable liveness clock.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) Now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Set(t time.Time)     { c.ms.Store(t.UnixMilli()) }
func (c *fakeClock) Add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// fastRaft suits loopback groups on a loaded machine: leaders in well
// under a second, without elections from scheduling noise.
func fastRaft(c *Config) {
	c.RaftHeartbeatTimeout, c.RaftElectionTimeout, c.RaftLeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
	c.Raft.CommitTimeout, c.Raft.ApplyTimeout = 5*time.Millisecond, 3*time.Second
}

// startNode builds and starts a node from cfg (its logger set), shut down
// when the test ends; prepare, if set, sees it between New and Start.
func startNode(t testing.TB, cfg Config, prepare ...func(*Server)) *Server {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t).With("node", cfg.Membership.SelfID)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prepare {
		p(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	return s
}

// shutdown stops s unless it was stopped already.
func shutdown(t testing.TB, s *Server) {
	if s.closing.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown %s: %v", s.ID(), err)
	}
}

// single starts a one-node DLedger-style controller in memory, edited by
// edit (and prepare, see startNode), and waits until it leads.
func single(t testing.TB, edit func(*Config), prepare ...func(*Server)) *Server {
	t.Helper()
	addrs := remotingtest.FreeAddrs(t, 1)
	cfg := DefaultConfig(dledger(t, addrs, 0), "")
	cfg.InMemory = true
	cfg.BindAddress = "127.0.0.1"
	fastRaft(&cfg)
	if edit != nil {
		edit(&cfg)
	}
	s := startNode(t, cfg, prepare...)
	remotingtest.WaitFor(t, "a ready leader", func() bool { return s.node.ReadyLeader() })
	return s
}

// call sends req on a fresh connection to s and returns the reply.
func call(t testing.TB, s *Server, req *codec.Command) *codec.Command {
	t.Helper()
	return remotingtest.Dial(t, s.Addr().String()).Call(req)
}

var request = remotingtest.Request
