// Figures, not assertions: what a raft connection's opening exchange costs
// on loopback with no authentication, the cluster secret and mutual TLS
// (raft pools its connections, so this is paid per new connection, not per
// RPC), and what the guard's check costs per RPC.

package raftnode

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/tlstest"
)

func BenchmarkDialExchange(b *testing.B) {
	ca := tlstest.NewCA(b, "bench")
	for _, tc := range []struct {
		name string
		opts func() StreamOptions
	}{
		{"plain", func() StreamOptions { return StreamOptions{} }},
		{"secret", func() StreamOptions { return StreamOptions{Secret: testSecret} }},
		{"tls", func() StreamOptions {
			pair := ca.Pair(b, 1, false)
			return StreamOptions{TLS: &PeerTLS{Certificate: func() (*tls.Certificate, error) { return &pair, nil }, Roots: ca.Pool}}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := tc.opts()
			o.Bind, o.Log = "127.0.0.1:0", testLogger(b)
			acc, err := NewStream(o)
			if err != nil {
				b.Fatal(err)
			}
			defer acc.Close()
			o.Bind, o.Advertise = "", "127.0.0.1:1"
			dialer, err := NewStream(o)
			if err != nil {
				b.Fatal(err)
			}
			defer dialer.Close()
			attachLoopback(acc, dialer)
			go func() {
				for {
					c, err := acc.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			addr := raft.ServerAddress(acc.ListenAddr().String())
			b.ResetTimer()
			for b.Loop() {
				c, err := dialer.Dial(addr, 5*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	peers := []Peer{{ID: "a", RaftAddr: "a:1"}, {ID: "b", RaftAddr: "b:1"}, {ID: "c", RaftAddr: "c:1"}}
	_, inmem := raft.NewInmemTransport("a:1")
	g, _ := newGuard(inmem, nil)
	g.view = &fakeView{staticMembers: staticMembers{self: "a", peers: peers}, cur: 10, st: raft.Follower, leaderID: "b", leaderAddr: "b:1"}
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("b"), Addr: []byte("b:1")}, Term: 10}
	for b.Loop() {
		if g.check(req) != "" {
			b.Fatal("refused")
		}
	}
}
