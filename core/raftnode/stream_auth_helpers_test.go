// Test helpers for the raft connection's security: a fixed membership for
// a layer used without a node, the opening exchange played by hand from
// either side, an attacker speaking raft's own msgpack RPCs through
// hashicorp/raft's NetworkTransport, and 3-node TCP groups with the
// layer's options.

package raftnode

import (
	"crypto/hmac"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// loopbackMember is the member a bare layer accepts: id "t" on 127.0.0.1.
var loopbackMember = []Peer{{ID: "t", RaftAddr: "127.0.0.1:1"}}

// attachLoopback lets bare layers (no node) accept and dial as member "t".
func attachLoopback(layers ...*StreamLayer) {
	for _, s := range layers {
		s.attach(staticMembers{self: "t", peers: loopbackMember})
	}
}

// finishDial plays the dialer's exchange by hand on c after the preamble
// was sent: the acknowledgement with the acceptor's hello, the hello as id
// with the proof under secret (none when nil; a stranger's guess when the
// acceptor wants one), the status and the acceptor's proof.
func finishDial(c net.Conn, id string, secret []byte) error {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	ack := make([]byte, len(PreambleAck)+1)
	if _, err := io.ReadFull(c, ack); err != nil {
		return fmt.Errorf("acknowledgement: %w", err)
	}
	if string(ack[:len(PreambleAck)]) != PreambleAck {
		return fmt.Errorf("acknowledgement %q", ack)
	}
	theirs, err := readHello(c)
	if err != nil {
		return err
	}
	ours, _ := newHello(id)
	if err := writeHello(c, ours); err != nil {
		return err
	}
	switch {
	case secret != nil:
		c.Write(proof(secret, "dialer", ours, theirs))
	case ack[len(PreambleAck)]&flagSecret != 0:
		c.Write(make([]byte, proofLen)) // a stranger's guess
	}
	st := make([]byte, 1)
	if _, err := io.ReadFull(c, st); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if st[0] != statusOK {
		return fmt.Errorf("%w: status %d", errRefused, st[0])
	}
	if ack[len(PreambleAck)]&flagSecret != 0 {
		got := make([]byte, proofLen)
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if secret == nil || !hmac.Equal(got, proof(secret, "acceptor", ours, theirs)) {
			return errBadProof
		}
	}
	return nil
}

// attackerStream is a raft.StreamLayer for an attacker's NetworkTransport:
// it dials from src (empty: any loopback source), sends the preamble and
// plays the rest of the exchange as id, with secret when given. raft's
// NetworkTransport then speaks its msgpack RPCs over the connection, so
// the attacker sends exactly what a member would.
type attackerStream struct {
	src    string
	id     string
	secret []byte
	closed chan struct{}
}

func (a *attackerStream) Accept() (net.Conn, error) { <-a.closed; return nil, ErrStreamClosed }
func (a *attackerStream) Close() error              { return nil }
func (a *attackerStream) Addr() net.Addr            { return advertisedAddr{"127.0.0.66:1"} }
func (a *attackerStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if a.src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(a.src)}
	}
	c, err := d.Dial("tcp", string(addr))
	if err != nil {
		return nil, err
	}
	c.Write([]byte(Preamble))
	if err := finishDial(c, a.id, a.secret); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// attacker returns a NetworkTransport that dials as a does.
func attacker(t *testing.T, a *attackerStream) *raft.NetworkTransport {
	a.closed = make(chan struct{})
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: a, MaxPool: 0, Timeout: 5 * time.Second,
		Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { tr.Close(); close(a.closed) })
	return tr
}

// lastLog is a node's last index and term, what a forged AppendEntries
// must name to be appended.
func lastLog(n *Node) (index, term uint64) {
	term, _ = strconv.ParseUint(n.raft.Stats()["last_log_term"], 10, 64)
	return n.raft.LastIndex(), term
}

// forgedEntry is the attack: one AppendEntries claiming leadership
// one term above the node's, continuing its log with data and committing
// it. id and addr are who it claims to come from.
func forgedEntry(n *Node, id, addr, data string) *raft.AppendEntriesRequest {
	last, lastTerm := lastLog(n)
	term := n.raft.CurrentTerm() + 1
	return &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte(addr)},
		Term:              term,
		PrevLogEntry:      last,
		PrevLogTerm:       lastTerm,
		Entries:           []*raft.Log{{Index: last + 1, Term: term, Type: raft.LogCommand, Data: []byte(data)}},
		LeaderCommitIndex: last + 1,
	}
}

// secureGroup is a 3-node group on loopback TCP whose layers are made
// with opts(i) (Advertise and Bind filled in when empty: each node on a
// port of its own).
func secureGroup(t *testing.T, opts func(i int) StreamOptions) ([]*Node, []*recFSM, []Peer, []*StreamLayer) {
	t.Helper()
	const n = 3
	var (
		peers   []Peer
		streams []*StreamLayer
	)
	for i := range n {
		o := opts(i)
		if o.Bind == "" {
			o.Bind = "127.0.0.1:0"
		}
		if o.Log == nil {
			o.Log = testLogger(t).With("node", i)
		}
		st, err := NewStream(o)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i), RaftAddr: st.Addr().String(), ServeAddr: st.Addr().String()})
	}
	nodes := make([]*Node, n)
	fsms := make([]*recFSM, n)
	for i := range n {
		cfg := Config{ID: peers[i].ID, Peers: peers, InMemory: true, Stream: streams[i], Logger: testLogger(t).With("node", peers[i].ID)}
		fsms[i] = &recFSM{}
		node, err := New(cfg, fsms[i])
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node
		t.Cleanup(func() { node.Close() })
	}
	return nodes, fsms, peers, streams
}
