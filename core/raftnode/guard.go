// The transport guard between raft and its transport: it refuses the RPCs
// no honest member sends, which hashicorp/raft would act on as they come
// (it adopts any higher term, and starts an election on any TimeoutNow).

package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Term bounds. raft adopts the term of any request or vote answer above
// its own, and a term of 2^64-1 wraps to 0 at the next election, after
// which no election can win: the group is stuck for good, its term
// stored. A request whose term is more than maxTermStep above this node's,
// or any term at or above maxTerm, is refused; so no number of frames
// short of 2^46 can bring a group near the wrap. Honest terms rise by one
// per election; a member that was away longer than maxTermStep elections
// catches up from the vote answers it gets at its next election, which
// are checked against maxTerm only.
const (
	maxTermStep uint64 = 1 << 16
	maxTerm     uint64 = 1 << 62
)

// guardView is what the guard reads of the node: raft's term, role and
// leader, and the members.
type guardView interface {
	memberSource
	term() uint64
	state() raft.RaftState
	leader() (raft.ServerAddress, raft.ServerID)
}

// errRefusedRPC prefixes the error a refused RPC is answered with.
var errRefusedRPC = errors.New("raft RPC refused")

// guard is a raft.Transport over inner whose Consumer (and heartbeat
// handler) pass on only the RPCs check lets through, and whose outgoing
// RPCs fail when the answer carries an absurd term. It starts passing RPCs
// once start gives it the node; until then they wait.
type guard struct {
	inner raft.Transport
	log   *slog.Logger
	view  guardView

	out       chan raft.RPC
	started   chan struct{}
	stop      chan struct{}
	startOnce sync.Once
	stopOnce  sync.Once
	wg        sync.WaitGroup

	refused  atomic.Int64
	limiters sync.Map // reason -> *logLimiter
}

// newGuard wraps inner, keeping the optional interfaces it implements
// (WithClose always, WithPreVote and WithPeers when inner has them: raft
// turns pre-vote off for a transport without it).
func newGuard(inner raft.Transport, log *slog.Logger) (*guard, raft.Transport) {
	g := &guard{inner: inner, log: log, out: make(chan raft.RPC), started: make(chan struct{}), stop: make(chan struct{})}
	pv, hasPV := inner.(raft.WithPreVote)
	wp, hasWP := inner.(raft.WithPeers)
	switch {
	case hasPV && hasWP:
		return g, &struct {
			*guard
			preVoteGuard
			raft.WithPeers
		}{g, preVoteGuard{g, pv}, wp}
	case hasPV:
		return g, &struct {
			*guard
			preVoteGuard
		}{g, preVoteGuard{g, pv}}
	case hasWP:
		return g, &struct {
			*guard
			raft.WithPeers
		}{g, wp}
	}
	return g, g
}

// start hands the guard the node and starts passing RPCs.
func (g *guard) start(v guardView) {
	g.startOnce.Do(func() {
		g.view = v
		close(g.started)
		g.wg.Add(1)
		go g.consume()
	})
}

func (g *guard) consume() {
	defer g.wg.Done()
	in := g.inner.Consumer()
	for {
		select {
		case rpc := <-in:
			if !g.pass(rpc) {
				continue
			}
			select {
			case g.out <- rpc:
			case <-g.stop:
				return
			}
		case <-g.stop:
			return
		}
	}
}

// waitStarted reports false when the guard stopped before it started.
func (g *guard) waitStarted() bool {
	select {
	case <-g.started:
		return true
	case <-g.stop:
		return false
	}
}

// pass checks rpc and answers it with an error if refused.
func (g *guard) pass(rpc raft.RPC) bool {
	reason := g.check(rpc.Command)
	if reason == "" {
		return true
	}
	g.refuse(rpc, reason)
	return false
}

// check returns why cmd must be refused, or "".
func (g *guard) check(cmd any) string {
	v := g.view
	var (
		hdr     raft.RPCHeader
		term    uint64
		hasTerm = true
	)
	switch r := cmd.(type) {
	case *raft.AppendEntriesRequest:
		hdr, term = r.RPCHeader, r.Term
	case *raft.RequestVoteRequest:
		hdr, term = r.RPCHeader, r.Term
	case *raft.RequestPreVoteRequest:
		hdr, term = r.RPCHeader, r.Term
	case *raft.InstallSnapshotRequest:
		hdr, term = r.RPCHeader, r.Term
	case *raft.TimeoutNowRequest:
		hdr, hasTerm = r.RPCHeader, false
	default:
		return fmt.Sprintf("unknown command %T", cmd)
	}
	id, addr := string(hdr.ID), string(hdr.Addr)
	if !g.isMember(v, id, addr) {
		return "the sender is not a member"
	}
	if hasTerm {
		cur := v.term()
		if term >= maxTerm {
			return "absurd term"
		}
		if term > cur && term-cur > maxTermStep {
			return "term too far ahead"
		}
	}
	if _, ok := cmd.(*raft.TimeoutNowRequest); ok {
		// Only the leader sends TimeoutNow, to hand its leadership over.
		// Anyone else's would start an election that deposes it.
		leaderAddr, leaderID := v.leader()
		if v.state() != raft.Follower || leaderID == "" || id != string(leaderID) || (addr != "" && addr != string(leaderAddr)) {
			return "TimeoutNow not from the current leader"
		}
	}
	return ""
}

// isMember reports whether id is a member and addr, when given, one of
// its raft addresses.
func (g *guard) isMember(v guardView, id, addr string) bool {
	if id == "" {
		return false
	}
	found := false
	for _, m := range v.members() {
		if m.ID != id {
			continue
		}
		found = true
		if addr == "" || m.RaftAddr == addr {
			return true
		}
	}
	return found && addr == ""
}

// refuse answers rpc with an error and a response carrying this node's
// term, counts it and logs it at most once a second per reason.
func (g *guard) refuse(rpc raft.RPC, reason string) {
	g.refused.Add(1)
	cur := g.view.term()
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(g.view.selfID()), Addr: []byte(g.inner.LocalAddr())}
	var resp any
	var (
		term       uint64
		from, kind string
	)
	switch r := rpc.Command.(type) {
	case *raft.AppendEntriesRequest:
		resp, term, from, kind = &raft.AppendEntriesResponse{RPCHeader: hdr, Term: cur}, r.Term, string(r.ID), "AppendEntries"
	case *raft.RequestVoteRequest:
		resp, term, from, kind = &raft.RequestVoteResponse{RPCHeader: hdr, Term: cur}, r.Term, string(r.ID), "RequestVote"
	case *raft.RequestPreVoteRequest:
		resp, term, from, kind = &raft.RequestPreVoteResponse{RPCHeader: hdr, Term: cur}, r.Term, string(r.ID), "RequestPreVote"
	case *raft.InstallSnapshotRequest:
		// The snapshot's bytes, left unread, make the connection's next
		// command undecodable: the transport closes it.
		resp, term, from, kind = &raft.InstallSnapshotResponse{RPCHeader: hdr, Term: cur}, r.Term, string(r.ID), "InstallSnapshot"
	case *raft.TimeoutNowRequest:
		resp, from, kind = &raft.TimeoutNowResponse{RPCHeader: hdr}, string(r.ID), "TimeoutNow"
	}
	rpc.Respond(resp, fmt.Errorf("%w: %s", errRefusedRPC, reason))
	l, _ := g.limiters.LoadOrStore(reason, &logLimiter{})
	if n, ok := l.(*logLimiter).allow(time.Now()); ok {
		attrs := []any{"rpc", kind, "reason", reason, "from_id", from, "term", term, "current_term", cur}
		if n > 0 {
			attrs = append(attrs, "refused_since_last_line", n)
		}
		g.log.Warn("raft RPC refused", attrs...)
	}
}

// answer checks the term of an outgoing RPC's answer: a vote answer's term
// is adopted as it is, so an absurd one is turned into an error.
func (g *guard) answer(kind string, term uint64, err error) error {
	if err != nil || term < maxTerm {
		return err
	}
	g.refused.Add(1)
	l, _ := g.limiters.LoadOrStore("answer", &logLimiter{})
	if n, ok := l.(*logLimiter).allow(time.Now()); ok {
		g.log.Warn("raft answer refused: absurd term", "rpc", kind, "term", term, "refused_since_last_line", n)
	}
	return fmt.Errorf("%w: %s answer with term %d", errRefusedRPC, kind, term)
}

// Consumer implements raft.Transport: the RPCs that passed.
func (g *guard) Consumer() <-chan raft.RPC { return g.out }

// LocalAddr implements raft.Transport.
func (g *guard) LocalAddr() raft.ServerAddress { return g.inner.LocalAddr() }

// AppendEntriesPipeline implements raft.Transport. Pipelined answers are
// not adopted as terms (a higher one only stops the replication), so they
// pass unchecked.
func (g *guard) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	return g.inner.AppendEntriesPipeline(id, target)
}

// AppendEntries implements raft.Transport.
func (g *guard) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return g.answer("AppendEntries", resp.Term, g.inner.AppendEntries(id, target, args, resp))
}

// RequestVote implements raft.Transport.
func (g *guard) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	err := g.inner.RequestVote(id, target, args, resp)
	return g.answer("RequestVote", resp.Term, err)
}

// InstallSnapshot implements raft.Transport.
func (g *guard) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	err := g.inner.InstallSnapshot(id, target, args, resp, data)
	return g.answer("InstallSnapshot", resp.Term, err)
}

// EncodePeer implements raft.Transport.
func (g *guard) EncodePeer(id raft.ServerID, addr raft.ServerAddress) []byte {
	return g.inner.EncodePeer(id, addr)
}

// DecodePeer implements raft.Transport.
func (g *guard) DecodePeer(b []byte) raft.ServerAddress { return g.inner.DecodePeer(b) }

// SetHeartbeatHandler implements raft.Transport: heartbeats take the
// inner transport's fast path through the same check.
func (g *guard) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	if cb == nil {
		g.inner.SetHeartbeatHandler(nil)
		return
	}
	g.inner.SetHeartbeatHandler(func(rpc raft.RPC) {
		if !g.waitStarted() {
			rpc.Respond(nil, raft.ErrTransportShutdown)
			return
		}
		if g.pass(rpc) {
			cb(rpc)
		}
	})
}

// TimeoutNow implements raft.Transport.
func (g *guard) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return g.inner.TimeoutNow(id, target, args, resp)
}

// Close implements raft.WithClose: it stops the guard and closes the
// inner transport when it can be closed.
func (g *guard) Close() error {
	g.stopOnce.Do(func() { close(g.stop) })
	g.wg.Wait()
	if c, ok := g.inner.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// preVoteGuard adds raft.WithPreVote to a guard over a transport that has
// it.
type preVoteGuard struct {
	g     *guard
	inner raft.WithPreVote
}

// RequestPreVote implements raft.WithPreVote.
func (p preVoteGuard) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	err := p.inner.RequestPreVote(id, target, args, resp)
	return p.g.answer("RequestPreVote", resp.Term, err)
}
