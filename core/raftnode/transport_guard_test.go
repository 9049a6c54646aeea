// The transport guard: absurd terms and TimeoutNow not from the leader are
// refused even from a member's address, a member's legitimate leadership
// transfer still works, and the transport's optional interfaces survive
// the wrapping.

package raftnode

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func header(p Peer) raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(p.ID), Addr: []byte(p.RaftAddr)}
}

// The stall: AppendEntries with term 2^64-1 to every node made
// raft adopt it, the next election wrapped the term to 0 and no leader
// could ever be elected. Sent from a member's address, claiming a
// member's id (what a compromised peer or anyone on its host could do
// without a secret), every absurd term is refused, no node's term moves,
// and the group keeps a leader and takes writes.
func TestHugeTermRefused(t *testing.T) {
	nodes, fsms, peers, _ := secureGroup(t, func(int) StreamOptions { return StreamOptions{} })
	l := waitReadyLeader(t, nodes)
	claim := peers[l]
	tr := attacker(t, &attackerStream{id: claim.ID})
	terms := make([]uint64, len(nodes))
	for i, n := range nodes {
		terms[i] = n.raft.CurrentTerm()
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), errRefusedRPC.Error()) {
			t.Fatalf("%s: %v, want it refused", what, err)
		}
	}
	for i, n := range nodes {
		target := raft.ServerAddress(peers[i].RaftAddr)
		// Past the step by a margin elections of a loaded machine cannot
		// close meanwhile.
		for _, term := range []uint64{math.MaxUint64, maxTerm, n.raft.CurrentTerm() + maxTermStep + 1000} {
			var ae raft.AppendEntriesResponse
			refused(fmt.Sprintf("AppendEntries term %d to node %d at term %d", term, i, n.raft.CurrentTerm()), tr.AppendEntries("", target, &raft.AppendEntriesRequest{RPCHeader: header(claim), Term: term}, &ae))
			var rv raft.RequestVoteResponse
			refused("RequestVote", tr.RequestVote("", target, &raft.RequestVoteRequest{RPCHeader: header(claim), Term: term, LeadershipTransfer: true}, &rv))
			var pv raft.RequestPreVoteResponse
			refused("RequestPreVote", tr.RequestPreVote("", target, &raft.RequestPreVoteRequest{RPCHeader: header(claim), Term: term}, &pv))
			if ae.Term >= maxTerm || rv.Term >= maxTerm || pv.Term >= maxTerm {
				t.Fatalf("refusals answered terms %d %d %d", ae.Term, rv.Term, pv.Term)
			}
		}
	}
	for i, n := range nodes {
		// Only the group's own elections may have moved it.
		if got := n.raft.CurrentTerm(); got < terms[i] || got > terms[i]+100 {
			t.Errorf("node %d: term %d -> %d", i, terms[i], got)
		}
		if n.Stats().RefusedRPCs != 9 {
			t.Errorf("node %d refused %d RPCs, want 9", i, n.Stats().RefusedRPCs)
		}
	}
	applySure(t, func() ([]*Node, []*recFSM) { return nodes, fsms }, "after")
}

// TimeoutNow makes a follower start an election at once, deposing the
// leader: the stranger sent one every 100 ms and the group had a
// ready leader in 5-8 % of samples. Only the current leader sends it
// (leadership transfer), so one claiming any other sender is refused and
// the follower's term does not move; a stranger's address is refused at
// the connection.
func TestTimeoutNowNotFromLeaderRefused(t *testing.T) {
	nodes, _, peers, _ := secureGroup(t, func(int) StreamOptions { return StreamOptions{} })
	// round plays the attack once; it reports false when the leadership
	// moved on its own meanwhile (a loaded machine), which may make the
	// follower claimed the leader, whose TimeoutNow is legitimate.
	round := func() bool {
		l := waitReadyLeader(t, nodes)
		lterm := nodes[l].raft.CurrentTerm()
		f, other := (l+1)%3, (l+2)%3
		before := nodes[f].raft.CurrentTerm()
		refusedBefore := nodes[f].Stats().RefusedRPCs
		target := raft.ServerAddress(peers[f].RaftAddr)
		moved := func() bool { return !nodes[l].ReadyLeader() || nodes[l].raft.CurrentTerm() != lterm }
		tr := attacker(t, &attackerStream{id: peers[other].ID})
		for _, hdr := range []raft.RPCHeader{
			header(peers[other]), // a follower
			{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("evil"), Addr: []byte("127.0.0.66:1")},             // no member
			{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(peers[l].ID), Addr: []byte(peers[other].RaftAddr)}, // the leader's id at another's address
		} {
			var resp raft.TimeoutNowResponse
			err := tr.TimeoutNow("", target, &raft.TimeoutNowRequest{RPCHeader: hdr}, &resp)
			if err == nil || !strings.Contains(err.Error(), errRefusedRPC.Error()) {
				if _, id := nodes[f].leader(); string(id) != peers[l].ID {
					return false
				}
				t.Fatalf("TimeoutNow claiming %q at %q: %v", hdr.ID, hdr.Addr, err)
			}
		}
		stranger := attacker(t, &attackerStream{src: "127.0.0.2", id: peers[other].ID})
		var resp raft.TimeoutNowResponse
		if err := stranger.TimeoutNow("", target, &raft.TimeoutNowRequest{RPCHeader: header(peers[l])}, &resp); err == nil {
			t.Fatal("a stranger's TimeoutNow was answered")
		}
		if got := nodes[f].Stats().RefusedRPCs - refusedBefore; got != 3 {
			t.Fatalf("refused %d RPCs, want 3", got)
		}
		// A follower's term that moved is an election: one the refused
		// RPCs started, or the follower's own after a missed heartbeat
		// (a loaded machine). The round is played again; a guard that
		// let TimeoutNow through moves it every round and fails below.
		if got := nodes[f].raft.CurrentTerm(); got != before || moved() {
			t.Logf("follower's term %d -> %d", before, got)
			return false
		}
		return true
	}
	for try := 0; !round(); try++ {
		if try == 5 {
			t.Fatal("the leadership or the follower's term kept moving")
		}
		t.Log("the leadership moved on its own; again")
	}
}

// The leader's own TimeoutNow (a leadership transfer) passes the guard.
func TestLeadershipTransferThroughGuard(t *testing.T) {
	nodes, _, _, _ := secureGroup(t, func(int) StreamOptions { return StreamOptions{Secret: testSecret} })
	l := waitReadyLeader(t, nodes)
	if err := nodes[l].raft.LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	remotingtest.WaitFor(t, "another ready leader", func() bool {
		for i, n := range nodes {
			if i != l && n.ReadyLeader() {
				return true
			}
		}
		return false
	})
	for i, n := range nodes {
		if n.Stats().RefusedRPCs != 0 {
			t.Errorf("node %d refused %d RPCs", i, n.Stats().RefusedRPCs)
		}
	}
}

// fakeView is a node as the guard sees it.
type fakeView struct {
	staticMembers
	cur        uint64
	st         raft.RaftState
	leaderID   string
	leaderAddr string
}

func (v *fakeView) term() uint64          { return v.cur }
func (v *fakeView) state() raft.RaftState { return v.st }
func (v *fakeView) leader() (raft.ServerAddress, raft.ServerID) {
	return raft.ServerAddress(v.leaderAddr), raft.ServerID(v.leaderID)
}

func TestGuardCheck(t *testing.T) {
	peers := []Peer{{ID: "a", RaftAddr: "a:1"}, {ID: "b", RaftAddr: "b:1"}, {ID: "b", RaftAddr: "b:2"}}
	v := &fakeView{staticMembers: staticMembers{self: "a", peers: peers}, cur: 10, st: raft.Follower, leaderID: "b", leaderAddr: "b:1"}
	_, inmem := raft.NewInmemTransport("a:1")
	g, _ := newGuard(inmem, nil)
	g.view = v
	h := func(id, addr string) raft.RPCHeader { return raft.RPCHeader{ID: []byte(id), Addr: []byte(addr)} }
	for _, c := range []struct {
		name string
		cmd  any
		want string // "" passes
	}{
		{"heartbeat", &raft.AppendEntriesRequest{RPCHeader: h("b", "b:1"), Term: 10}, ""},
		{"new term", &raft.AppendEntriesRequest{RPCHeader: h("b", "b:2"), Term: 11}, ""},
		{"older term", &raft.AppendEntriesRequest{RPCHeader: h("b", "b:1"), Term: 3}, ""},
		{"step limit", &raft.AppendEntriesRequest{RPCHeader: h("b", "b:1"), Term: 10 + maxTermStep}, ""},
		{"past step", &raft.AppendEntriesRequest{RPCHeader: h("b", "b:1"), Term: 11 + maxTermStep}, "term too far ahead"},
		{"absurd", &raft.RequestVoteRequest{RPCHeader: h("b", "b:1"), Term: math.MaxUint64}, "absurd term"},
		{"max term", &raft.RequestPreVoteRequest{RPCHeader: h("b", "b:1"), Term: maxTerm}, "absurd term"},
		{"snapshot absurd", &raft.InstallSnapshotRequest{RPCHeader: h("b", "b:1"), Term: maxTerm + 1}, "absurd term"},
		{"no id", &raft.AppendEntriesRequest{RPCHeader: h("", "b:1"), Term: 10}, "the sender is not a member"},
		{"stranger", &raft.AppendEntriesRequest{RPCHeader: h("evil", "b:1"), Term: 10}, "the sender is not a member"},
		{"member at another's address", &raft.AppendEntriesRequest{RPCHeader: h("b", "a:1"), Term: 10}, "the sender is not a member"},
		{"member, no address", &raft.RequestVoteRequest{RPCHeader: h("b", ""), Term: 11}, ""},
		{"transfer from leader", &raft.TimeoutNowRequest{RPCHeader: h("b", "b:1")}, ""},
		{"transfer from follower", &raft.TimeoutNowRequest{RPCHeader: h("a", "a:1")}, "TimeoutNow not from the current leader"},
		{"transfer, leader's id elsewhere", &raft.TimeoutNowRequest{RPCHeader: h("b", "b:2")}, "TimeoutNow not from the current leader"},
		{"unknown", &struct{}{}, "unknown command *struct {}"},
	} {
		if got := g.check(c.cmd); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	v.leaderID, v.leaderAddr = "", ""
	if got := g.check(&raft.TimeoutNowRequest{RPCHeader: h("b", "b:1")}); got == "" {
		t.Error("TimeoutNow passed with no leader known")
	}
	v.leaderID, v.leaderAddr, v.st = "b", "b:1", raft.Candidate
	if got := g.check(&raft.TimeoutNowRequest{RPCHeader: h("b", "b:1")}); got == "" {
		t.Error("TimeoutNow passed on a candidate")
	}
}

// minimalTransport has none of the optional interfaces.
type minimalTransport struct{ raft.Transport }

// voteTransport answers votes with a term of its choosing.
type voteTransport struct {
	raft.Transport
	term uint64
}

func (v voteTransport) RequestVote(_ raft.ServerID, _ raft.ServerAddress, _ *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	resp.Term = v.term
	return nil
}

func (v voteTransport) RequestPreVote(_ raft.ServerID, _ raft.ServerAddress, _ *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	resp.Term = v.term
	return nil
}

// The wrapper keeps what the inner transport offers (raft turns pre-vote
// off without WithPreVote) and adds nothing it lacks.
func TestGuardKeepsTransportInterfaces(t *testing.T) {
	_, inmem := raft.NewInmemTransport("x")
	_, w := newGuard(inmem, nil)
	if _, ok := w.(raft.WithPreVote); !ok {
		t.Error("pre-vote lost over the in-memory transport")
	}
	if _, ok := w.(raft.WithPeers); !ok {
		t.Error("WithPeers lost over the in-memory transport")
	}
	if _, ok := w.(raft.WithClose); !ok {
		t.Error("no Close")
	}
	_, w = newGuard(minimalTransport{inmem}, nil)
	if _, ok := w.(raft.WithPreVote); ok {
		t.Error("pre-vote added over a transport without it")
	}
	if _, ok := w.(raft.WithPeers); ok {
		t.Error("WithPeers added over a transport without it")
	}
	st, err := NewStreamLayer("127.0.0.1:1", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	nt := raft.NewNetworkTransport(st, 1, 0, io.Discard)
	defer nt.Close()
	_, w = newGuard(nt, nil)
	if _, ok := w.(raft.WithPreVote); !ok {
		t.Error("pre-vote lost over the network transport")
	}
}

// A vote answer's term is adopted as it is: an absurd one is an error.
func TestGuardRefusesAbsurdAnswers(t *testing.T) {
	_, inmem := raft.NewInmemTransport("x")
	for _, term := range []uint64{math.MaxUint64, maxTerm} {
		g, w := newGuard(voteTransport{Transport: inmem, term: term}, testLogger(t))
		g.view = &fakeView{staticMembers: staticMembers{self: "a"}}
		var rv raft.RequestVoteResponse
		if err := w.RequestVote("b", "b:1", &raft.RequestVoteRequest{}, &rv); !errors.Is(err, errRefusedRPC) {
			t.Errorf("vote answer with term %d: %v", term, err)
		}
	}
	// Far ahead but below maxTerm passes: that is how a member back from
	// a long absence learns the group's term.
	g, w := newGuard(voteTransport{Transport: inmem, term: maxTerm - 1}, testLogger(t))
	g.view = &fakeView{staticMembers: staticMembers{self: "a"}}
	var rv raft.RequestVoteResponse
	if err := w.RequestVote("b", "b:1", &raft.RequestVoteRequest{}, &rv); err != nil {
		t.Errorf("a far but sane vote answer: %v", err)
	}
}
