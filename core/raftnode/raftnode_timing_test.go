// Figures, not assertions: leader failover on loopback TCP with the default
// timeouts, and write latency and throughput with bbolt's fsync.

package raftnode

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// loopGroup is a 3-node group on loopback TCP with bbolt stores, whose
// members can be stopped and restarted on the same ports.
type loopGroup struct {
	tb     testing.TB
	peers  []Peer
	dirs   []string
	nodes  []*Node
	mutate func(*Config) // applied to each node's configuration, if set
}

func newLoopGroup(tb testing.TB, n int) *loopGroup { return newLoopGroupWith(tb, n, nil) }

func newLoopGroupWith(tb testing.TB, n int, mutate func(*Config)) *loopGroup {
	g := &loopGroup{tb: tb, nodes: make([]*Node, n), mutate: mutate}
	var streams []*StreamLayer
	for i := range n {
		st, err := ListenStream("127.0.0.1:0", "", testLogger(tb))
		if err != nil {
			tb.Fatal(err)
		}
		streams = append(streams, st)
		g.peers = append(g.peers, Peer{ID: fmt.Sprintf("n%d", i), RaftAddr: st.Addr().String(), ServeAddr: st.Addr().String()})
		g.dirs = append(g.dirs, tb.TempDir())
	}
	for i := range n {
		g.start(i, streams[i])
	}
	tb.Cleanup(func() {
		for i := range g.nodes {
			g.stop(i)
		}
	})
	return g
}

func (g *loopGroup) start(i int, st *StreamLayer) {
	if st == nil {
		var err error
		// The port was just released by the stopped node; rebinding it can
		// take a moment.
		for try := 0; ; try++ {
			st, err = ListenStream(g.peers[i].RaftAddr, "", testLogger(g.tb))
			if err == nil || try == 100 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			g.tb.Fatal(err)
		}
	}
	cfg := Config{ID: g.peers[i].ID, Peers: g.peers, Dir: g.dirs[i], Stream: st, Logger: testLogger(g.tb)}
	if g.mutate != nil {
		g.mutate(&cfg)
	}
	n, err := New(cfg, &recFSM{})
	if err != nil {
		g.tb.Fatal(err)
	}
	g.nodes[i] = n
}

func (g *loopGroup) stop(i int) {
	if g.nodes[i] != nil {
		g.nodes[i].Close()
		g.nodes[i] = nil
	}
}

// BenchmarkLeaderFailover kills the leader (closing its sockets, as a
// process kill does) and measures until another node has answered a write.
// Run with -benchtime=10x; it reports the median and the maximum.
func BenchmarkLeaderFailover(b *testing.B) {
	g := newLoopGroup(b, 3)
	var samples []time.Duration
	for i := 0; i < b.N; i++ {
		l := waitReadyLeader(b, g.nodes)
		// Let the followers settle into the leader's heartbeats.
		if _, err := g.nodes[l].Apply(context.Background(), []byte("warm")); err != nil {
			b.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		start := time.Now()
		g.stop(l)
		for {
			done := false
			for _, n := range g.nodes {
				if n != nil && n.ReadyLeader() {
					if _, err := n.Apply(context.Background(), []byte("first")); err == nil {
						done = true
						break
					}
				}
			}
			if done {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatal("no new leader within 30s")
			}
			time.Sleep(time.Millisecond)
		}
		samples = append(samples, time.Since(start))
		g.start(l, nil)
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms")
	b.Logf("failover samples: %v", samples)
}

// BenchmarkApply is one write at a time on a 3-node loopback group with
// bbolt stores: ns/op is the commit-and-apply latency, two fsyncs deep
// (leader and one follower in parallel, then the commit).
func BenchmarkApply(b *testing.B) {
	g := newLoopGroup(b, 3)
	l := waitReadyLeader(b, g.nodes)
	data := make([]byte, 200) // about one controller event
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.nodes[l].Apply(context.Background(), data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyParallel is many writers at once: raft batches them into
// shared fsyncs, so throughput rises well above 1/latency.
func BenchmarkApplyParallel(b *testing.B) {
	g := newLoopGroup(b, 3)
	l := waitReadyLeader(b, g.nodes)
	data := make([]byte, 200)
	var fails atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.nodes[l].Apply(context.Background(), data); err != nil {
				fails.Add(1)
			}
		}
	})
	if fails.Load() > 0 {
		b.Fatalf("%d writes failed", fails.Load())
	}
}
