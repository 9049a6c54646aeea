// Who may open a raft connection: members' addresses only, the cluster
// secret proven both ways and never replayed, mutual TLS, a removed member
// refused, and held connections capped and closed. Each test plays an
// attack from the issue against running nodes: a stranger's forged
// AppendEntries is the one that rewrote a controller's state.

package raftnode

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/tlstest"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// sendForged sends the forged entry to every node through tr and returns
// the errors.
func sendForged(tr *raft.NetworkTransport, nodes []*Node, peers []Peer, claim int) []error {
	var errs []error
	for i, n := range nodes {
		req := forgedEntry(n, peers[claim].ID, peers[claim].RaftAddr, "forged")
		var resp raft.AppendEntriesResponse
		errs = append(errs, tr.AppendEntries(raft.ServerID(peers[i].ID), raft.ServerAddress(peers[i].RaftAddr), req, &resp))
	}
	return errs
}

// noForgedEntry writes a marker through the real leader, waits until every
// node applied it, and fails if any node applied the forged entry: had it
// been accepted, it would sit before the marker.
func noForgedEntry(t *testing.T, nodes []*Node, fsms []*recFSM, marker string) {
	t.Helper()
	applySure(t, func() ([]*Node, []*recFSM) { return nodes, fsms }, marker)
	remotingtest.WaitFor(t, "every node to apply "+marker, func() bool {
		for _, f := range fsms {
			if !slices.Contains(f.list(), marker) {
				return false
			}
		}
		return true
	})
	for i, f := range fsms {
		if slices.Contains(f.list(), "forged") {
			t.Fatalf("node %d applied the forged entry: %v", i, f.list())
		}
	}
}

// A stranger's forged AppendEntries (one term up, continuing each node's
// log, committing one entry) is refused at the connection when it comes
// from an address that is no member's host, with no setting: members are
// on 127.0.0.1, the stranger dials from 127.0.0.2.
func TestStrangerAddressRefused(t *testing.T) {
	nodes, fsms, peers, streams := secureGroup(t, func(int) StreamOptions { return StreamOptions{} })
	waitReadyLeader(t, nodes)
	applySure(t, func() ([]*Node, []*recFSM) { return nodes, fsms }, "before")
	tr := attacker(t, &attackerStream{src: "127.0.0.2", id: peers[0].ID})
	for i, err := range sendForged(tr, nodes, peers, 0) {
		if err == nil {
			t.Fatalf("node %d took a stranger's AppendEntries", i)
		}
	}
	// Nothing of the stranger reached raft: it was refused at the
	// connection, before any RPC.
	for i, n := range nodes {
		if n.Stats().RefusedRPCs != 0 {
			t.Errorf("node %d: an RPC of the stranger reached the guard", i)
		}
		if streams[i].Stats().Refused == 0 {
			t.Errorf("node %d counted no refused connection", i)
		}
	}
	noForgedEntry(t, nodes, fsms, "after")
}

// Behind a shared remoting port, a stranger's raft connection is closed
// before the acknowledgement, and the port keeps serving remoting.
func TestStrangerAddressRefusedOnSharedPort(t *testing.T) {
	srv, st := sharedPort(t)
	attachLoopback(st)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	c, err := d.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(Preamble))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 16)); err == nil || os.IsTimeout(err) {
		t.Fatalf("stranger's raft connection got %d bytes, %v; want it closed", n, err)
	}
	remotingtest.WaitFor(t, "the refusal counted", func() bool { return st.Stats().Refused == 1 })
	w := remotingtest.Dial(t, srv.Addr().String())
	if r := w.Call(remotingtest.Request(echoCode, 1, "v", "ok")); r.Remark != "ok" {
		t.Fatalf("remoting beside the refused raft connection: %+v", r)
	}
}

// With a cluster secret, the same attack from a member's own address
// fails: without the secret, with a wrong one, claiming a member's id or
// not; the members themselves keep working.
func TestForgedEntryWithoutSecretRefused(t *testing.T) {
	nodes, fsms, peers, _ := secureGroup(t, func(int) StreamOptions { return StreamOptions{Secret: testSecret} })
	waitReadyLeader(t, nodes)
	for _, a := range []*attackerStream{
		{id: peers[0].ID},
		{id: peers[0].ID, secret: []byte("fedcba9876543210fedcba9876543210")},
		{id: "evil", secret: []byte("0123456789abcdef0123456789abcdeX")},
	} {
		tr := attacker(t, a)
		for i, err := range sendForged(tr, nodes, peers, 0) {
			if err == nil {
				t.Fatalf("node %d took AppendEntries from a peer without the secret (%+v)", i, a)
			}
		}
	}
	noForgedEntry(t, nodes, fsms, "after")
}

// Layer to layer: the same secret connects, a different one or none is
// refused both ways, with an error that says which.
func TestSecretBetweenLayers(t *testing.T) {
	mk := func(secret []byte) *StreamLayer {
		s, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", Secret: secret, Log: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		attachLoopback(s)
		go func() {
			for {
				c, err := s.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return s
	}
	good, good2 := mk(testSecret), mk(testSecret)
	other := mk([]byte("fedcba9876543210fedcba9876543210"))
	none := mk(nil)
	dial := func(from, to *StreamLayer) error {
		c, err := from.Dial(raft.ServerAddress(to.ListenAddr().String()), 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(good, good2); err != nil {
		t.Fatalf("same secret: %v", err)
	}
	if err := dial(other, good); !errors.Is(err, errRefused) {
		t.Fatalf("other secret dialing: %v", err)
	}
	if err := dial(none, good); !errors.Is(err, errModeMismatch) {
		t.Fatalf("no secret dialing one with a secret: %v", err)
	}
	if err := dial(good, none); !errors.Is(err, errModeMismatch) {
		t.Fatalf("a secret dialing one without: %v", err)
	}
	if _, err := NewStream(StreamOptions{Advertise: "127.0.0.1:1", Secret: []byte("short")}); err == nil {
		t.Fatal("a 5-byte secret was taken")
	}
}

// A proof seen on the wire does not open another connection: the
// acceptor's nonce is fresh each time.
func TestSecretProofDoesNotReplay(t *testing.T) {
	s, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", Secret: testSecret, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	attachLoopback(s)
	go func() {
		for {
			c, err := s.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	fixed := hello{id: "t"}
	copy(fixed.nonce[:], bytes.Repeat([]byte{7}, nonceLen))
	// open runs the dialer's side with the fixed nonce and the proof
	// prove returns, and reports the status.
	open := func(prove func(acceptor hello) []byte) (byte, []byte) {
		c, err := net.Dial("tcp", s.ListenAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(Preamble))
		io.ReadFull(c, make([]byte, len(PreambleAck)+1))
		theirs, err := readHello(c)
		if err != nil {
			t.Fatal(err)
		}
		p := prove(theirs)
		writeHello(c, fixed)
		c.Write(p)
		st := make([]byte, 1)
		if _, err := io.ReadFull(c, st); err != nil {
			t.Fatal(err)
		}
		return st[0], p
	}
	st, seen := open(func(a hello) []byte { return proof(testSecret, "dialer", fixed, a) })
	if st != statusOK {
		t.Fatalf("the honest proof got status %d", st)
	}
	if st, _ := open(func(hello) []byte { return seen }); st != statusBadProof {
		t.Fatalf("the replayed proof got status %d", st)
	}
	// The acceptor's own proof, reflected as the dialer's, fails too.
	if st, _ := open(func(a hello) []byte { return proof(testSecret, "acceptor", fixed, a) }); st != statusBadProof {
		t.Fatalf("a reflected proof got status %d", st)
	}
}

// peerTLS is mutual TLS with a certificate of ca for 127.0.0.1.
func peerTLS(t *testing.T, ca *tlstest.CA, serial int64) *PeerTLS {
	pair := ca.Pair(t, serial, false)
	return &PeerTLS{
		Certificate: func() (*tls.Certificate, error) { return &pair, nil },
		Roots:       func() *x509.CertPool { return ca.Pool() },
	}
}

// Mutual TLS: a group works over it; a peer without a client certificate,
// or with one another CA issued, is refused; a layer refuses to dial a
// peer whose certificate its CA did not issue.
func TestMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "raft")
	nodes, fsms, peers, streams := secureGroup(t, func(i int) StreamOptions { return StreamOptions{TLS: peerTLS(t, ca, int64(10+i))} })
	waitReadyLeader(t, nodes)
	for i := range 5 {
		applySure(t, func() ([]*Node, []*recFSM) { return nodes, fsms }, fmt.Sprint(i))
	}
	// rawTLS opens a TLS raft connection to node 0 presenting certs and
	// plays the hello: it must fail.
	rawTLS := func(certs []tls.Certificate) error {
		c, err := net.Dial("tcp", peers[0].RaftAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(Preamble))
		ack := make([]byte, len(PreambleAck)+1)
		if _, err := io.ReadFull(c, ack); err != nil || ack[len(PreambleAck)] != flagTLS {
			t.Fatalf("acknowledgement %q %v", ack, err)
		}
		if _, err := readHello(c); err != nil {
			t.Fatal(err)
		}
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, Certificates: certs, MinVersion: tls.VersionTLS13})
		if err := tc.Handshake(); err != nil {
			return err
		}
		// TLS 1.3: the server checks the client's certificate after the
		// client's handshake returned; the refusal shows at the read.
		h, _ := newHello(peers[1].ID)
		writeHello(tc, h)
		_, err = io.ReadFull(tc, make([]byte, 1))
		return err
	}
	before := streams[0].Stats().Refused
	if err := rawTLS(nil); err == nil {
		t.Fatal("a peer without a client certificate got an answer")
	}
	other := tlstest.NewCA(t, "other")
	if err := rawTLS([]tls.Certificate{other.Pair(t, 99, true)}); err == nil {
		t.Fatal("a peer with another CA's certificate got an answer")
	}
	// The server counts a refusal after its alert went out.
	remotingtest.WaitFor(t, "node 0 to count both refusals", func() bool { return streams[0].Stats().Refused-before >= 2 })
	// A layer with another CA's certificate can dial nobody.
	s, err := NewStream(StreamOptions{Advertise: "127.0.0.1:1", TLS: peerTLS(t, other, 5), Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.attach(staticMembers{self: peers[1].ID, peers: peers})
	if c, err := s.Dial(raft.ServerAddress(peers[0].RaftAddr), 5*time.Second); err == nil {
		c.Close()
		t.Fatal("dialed a member with another CA's certificate")
	}
	noForgedEntry(t, nodes, fsms, "after")
}

// A certificate that chains to the roots but names another host is
// refused both ways.
func TestMutualTLSChecksTheHost(t *testing.T) {
	ca := tlstest.NewCA(t, "raft")
	pair := ca.Pair(t, 1, false) // names 127.0.0.1
	p := &PeerTLS{Certificate: func() (*tls.Certificate, error) { return &pair, nil }, Roots: func() *x509.CertPool { return ca.Pool() }}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	cs := tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	if err := verifyPeer(cs, p.Roots(), []string{"127.0.0.1"}); err != nil {
		t.Fatalf("own host: %v", err)
	}
	if err := verifyPeer(cs, p.Roots(), []string{"127.0.0.2", "ctl-1.example"}); err == nil {
		t.Fatal("a certificate for 127.0.0.1 passed for other hosts")
	}
	if err := verifyPeer(cs, tlstest.NewCA(t, "x").Pool(), []string{"127.0.0.1"}); err == nil {
		t.Fatal("a certificate passed against other roots")
	}
	if err := verifyPeer(tls.ConnectionState{}, p.Roots(), []string{"127.0.0.1"}); err == nil {
		t.Fatal("no certificate passed")
	}
}

// mutableMembers is a membership a test changes.
type mutableMembers struct {
	mu    sync.Mutex
	self  string
	peers []Peer
}

func (m *mutableMembers) selfID() string { return m.self }
func (m *mutableMembers) members() []Peer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.peers)
}
func (m *mutableMembers) set(p []Peer) {
	m.mu.Lock()
	m.peers = p
	m.mu.Unlock()
}

// A membership change closes the removed member's open connections
// (revalidate) and refuses its new ones, by id on a shared host and by
// address on its own.
func TestMembershipChangeClosesRemovedMember(t *testing.T) {
	acc, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	all := []Peer{{ID: "a", RaftAddr: acc.ListenAddr().String()}, {ID: "b", RaftAddr: "127.0.0.1:2"}, {ID: "c", RaftAddr: "127.0.0.3:3"}}
	m := &mutableMembers{self: "a", peers: all}
	acc.attach(m)
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := acc.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dialer := func(id, src string) *attackerStream { return &attackerStream{id: id, src: src} }
	open := func(a *attackerStream) (net.Conn, error) {
		return a.Dial(raft.ServerAddress(acc.ListenAddr().String()), 5*time.Second)
	}
	b, err := open(dialer("b", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := open(dialer("c", "127.0.0.3"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		<-accepted
	}
	m.set(all[:1]) // b and c removed
	acc.revalidate()
	for _, conn := range []net.Conn{b, c} {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
			t.Fatalf("a removed member's connection stayed open: %v", err)
		}
	}
	if _, err := open(dialer("b", "")); !errors.Is(err, errRefused) {
		t.Fatalf("removed member on a shared host: %v", err)
	}
	if _, err := open(dialer("c", "127.0.0.3")); err == nil {
		t.Fatal("removed member on its own host was accepted")
	}
}

// A member removed from the group (the operator took it out of every other
// node's configuration and the leader reconciled raft's membership) is
// refused afterwards, though it still runs with the old configuration:
// members share 127.0.0.1 here, so its id is what gives it away.
func TestRemovedMemberRefused(t *testing.T) {
	const n = 4
	addrs := remotingtest.FreeAddrs(t, n)
	var dirs []string
	var all []Peer
	for i := range n {
		dirs = append(dirs, t.TempDir())
		all = append(all, Peer{ID: fmt.Sprintf("n%d", i), RaftAddr: addrs[i], ServeAddr: addrs[i]})
	}
	nodes := make([]*Node, n)
	var mu sync.Mutex
	start := func(i int, peers []Peer, apply bool) {
		t.Helper()
		// No idle close: only the membership may close n3's connections.
		st, err := NewStream(StreamOptions{Bind: addrs[i], Advertise: addrs[i], IdleTimeout: time.Hour, Log: testLogger(t).With("node", i)})
		if err != nil {
			t.Fatal(err)
		}
		node, err := New(Config{ID: all[i].ID, Peers: peers, Dir: dirs[i], Stream: st, ApplyMembershipChanges: apply,
			Logger: testLogger(t).With("node", all[i].ID)}, &recFSM{})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		nodes[i] = node
		mu.Unlock()
	}
	t.Cleanup(func() {
		for _, node := range nodes {
			if node != nil {
				node.Close()
			}
		}
	})
	for i := range n {
		start(i, all, false)
	}
	waitReadyLeader(t, nodes)
	for i := range 3 {
		nodes[i].Close()
		nodes[i] = nil
		start(i, all[:3], true)
		waitReadyLeader(t, nodes)
	}
	// The old-configuration n3 never removes itself: hand its leadership
	// over whenever it has it, until a reconfigured leader removed it.
	remotingtest.WaitFor(t, "n3 to leave raft's membership", func() bool {
		if nodes[3].ReadyLeader() {
			nodes[3].raft.LeadershipTransfer()
		}
		for i := range 3 {
			ms, err := nodes[i].Members()
			if err != nil || slices.ContainsFunc(ms, func(p Peer) bool { return p.ID == "n3" }) {
				return false
			}
		}
		return true
	})
	remotingtest.WaitFor(t, "n0's connections from n3 to close", func() bool {
		st := nodes[0].cfg.Stream
		st.mu.Lock()
		defer st.mu.Unlock()
		for c := range st.open {
			if c.accepted && c.peer == "n3" {
				return false
			}
		}
		return true
	})
	for i := range 3 {
		c, err := nodes[3].cfg.Stream.Dial(raft.ServerAddress(addrs[i]), 5*time.Second)
		if err == nil {
			c.Close()
			t.Fatalf("n%d accepted the removed n3", i)
		}
		if !errors.Is(err, errRefused) {
			t.Fatalf("n3 dialing n%d: %v", i, err)
		}
	}
}

// acceptedFrom reports whether s holds an accepted connection from id.
func acceptedFrom(s *StreamLayer, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.open {
		if c.accepted && c.peer == id {
			return true
		}
	}
	return false
}

// A member removed from raft's membership has the connections it opened
// to every node closed, the leader's and the followers', when the change
// reaches each node's log, however silent they are: a node learns of the
// change by polling raft's configuration, which is the only news raft
// gives a follower.
func TestRemovedMemberConnectionsClosed(t *testing.T) {
	// No idle close: only the membership change may end the connections.
	nodes, _, _, streams := secureGroup(t, func(int) StreamOptions { return StreamOptions{IdleTimeout: time.Hour} })
	// n3 shares the nodes' host, so only its id tells it apart; nothing
	// listens at its address and the three others keep a quorum of four.
	n3 := raft.ServerAddress(remotingtest.FreeAddrs(t, 1)[0])
	changeMembership := func(what string, change func(r *raft.Raft) raft.IndexFuture) {
		t.Helper()
		remotingtest.WaitFor(t, what, func() bool {
			l := waitReadyLeader(t, nodes)
			return change(nodes[l].raft).Error() == nil
		})
	}
	hasN3 := func(n *Node) bool {
		ms, err := n.Members()
		return err == nil && slices.ContainsFunc(ms, func(p Peer) bool { return p.ID == "n3" })
	}
	changeMembership("n3 added", func(r *raft.Raft) raft.IndexFuture { return r.AddVoter("n3", n3, 0, 0) })
	remotingtest.WaitFor(t, "every node to have n3 in its membership", func() bool {
		return !slices.ContainsFunc(nodes, func(n *Node) bool { return !hasN3(n) })
	})
	var conns []net.Conn
	for i, s := range streams {
		c, err := (&attackerStream{id: "n3"}).Dial(raft.ServerAddress(s.Addr().String()), 5*time.Second)
		if err != nil {
			t.Fatalf("n%d refused the member n3: %v", i, err)
		}
		defer c.Close()
		conns = append(conns, c)
		remotingtest.WaitFor(t, "n3's connection registered", func() bool { return acceptedFrom(s, "n3") })
	}
	changeMembership("n3 removed", func(r *raft.Raft) raft.IndexFuture { return r.RemoveServer("n3", 0, 0) })
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(remotingtest.Hang))
		if _, err := c.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
			t.Fatalf("n%d kept the removed n3's connection open: %v", i, err)
		}
		remotingtest.WaitFor(t, "the closed connection forgotten", func() bool { return !acceptedFrom(streams[i], "n3") })
	}
}

// watchClose reports when c's peer closes it.
func watchClose(c net.Conn, closed *atomic.Int64) {
	go func() {
		c.SetReadDeadline(time.Time{})
		io.Copy(io.Discard, c)
		closed.Add(1)
	}()
}

// Held raft connections, the 20,000 silent ones: from a member's
// address the own listener holds at most MaxConnsPerIP (MaxConns in all)
// and closes the rest at once; those silent before the exchange are
// closed at the handshake timeout, those silent after it at the idle
// timeout; a stranger's never count; and a member on another address
// still connects meanwhile.
func TestHeldRaftConnectionsCappedAndClosed(t *testing.T) {
	const perIP = 20
	s, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", MaxConns: 30, MaxConnsPerIP: perIP,
		HandshakeTimeout: time.Minute, IdleTimeout: 300 * time.Millisecond, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.attach(staticMembers{self: "t", peers: []Peer{{ID: "t", RaftAddr: "127.0.0.1:1"}, {ID: "u", RaftAddr: "127.0.0.2:1"}}})
	// raft's side: every accepted connection is read until it ends.
	var ended atomic.Int64
	go func() {
		for {
			c, err := s.Accept()
			if err != nil {
				return
			}
			go func() {
				_, err := io.Copy(io.Discard, c)
				if err == nil { // io.EOF, as raft must see it
					ended.Add(1)
				}
				c.Close()
			}()
		}
	}()
	addr := s.ListenAddr().String()
	dial := func(src string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	const attempts = 200
	var closed atomic.Int64
	for range attempts {
		watchClose(dial("127.0.0.1"), &closed)
	}
	remotingtest.WaitFor(t, "all but the capped silent connections closed", func() bool { return closed.Load() == attempts-perIP })
	var strangers atomic.Int64
	for range 50 {
		watchClose(dial("127.0.0.3"), &strangers)
	}
	remotingtest.WaitFor(t, "a stranger's connections closed", func() bool { return strangers.Load() == 50 })
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	if held != perIP {
		t.Fatalf("holding %d connections, want %d", held, perIP)
	}
	// The member on 127.0.0.2 is not crowded out.
	u := &attackerStream{src: "127.0.0.2", id: "u"}
	c, err := u.Dial(raft.ServerAddress(addr), 10*time.Second)
	if err != nil {
		t.Fatalf("a member on another address: %v", err)
	}
	// Silent after the exchange: closed at the idle timeout, and raft's
	// reader sees a clean end.
	watchClose(c, &closed)
	remotingtest.WaitFor(t, "the idle connection closed", func() bool { return ended.Load() == 1 && closed.Load() == attempts-perIP+1 })
	if s.Stats().Refused < attempts-perIP+50 {
		t.Fatalf("refused %d", s.Stats().Refused)
	}
}

// Silent before the exchange: closed at the handshake timeout, freeing
// the place.
func TestSilentRaftConnectionClosedAtHandshakeTimeout(t *testing.T) {
	s, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", MaxConnsPerIP: 1, HandshakeTimeout: 200 * time.Millisecond, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	attachLoopback(s)
	for range 3 {
		c, err := net.Dial("tcp", s.ListenAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
			t.Fatalf("silent connection: %v", err)
		}
		c.Close()
	}
	remotingtest.WaitFor(t, "the place freed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.held == 0 && len(s.perIP) == 0
	})
}

// A dialed connection raft kept pooled past half the idle timeout is
// replaced before raft writes on it, so raft never writes into one the
// acceptor closed: the bytes arrive on a fresh connection.
func TestPooledConnectionReplacedWhenIdle(t *testing.T) {
	acc, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", IdleTimeout: 400 * time.Millisecond, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	dialer, err := NewStream(StreamOptions{Advertise: "127.0.0.1:1", IdleTimeout: 400 * time.Millisecond, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dialer.Close()
	attachLoopback(acc, dialer)
	got, accepted := make(chan string, 4), make(chan struct{}, 4)
	go func() {
		for {
			c, err := acc.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				defer c.Close()
				b := make([]byte, 5)
				if _, err := io.ReadFull(c, b); err == nil {
					got <- string(b)
				}
			}()
		}
	}()
	c, err := dialer.Dial(raft.ServerAddress(acc.ListenAddr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.(*streamConn).cur.Load().raw.LocalAddr().String()
	// Accept returns a connection once the layer tracks it: only then can
	// an empty table mean the acceptor closed it.
	select {
	case <-accepted:
	case <-time.After(remotingtest.Hang):
		t.Fatal("the connection was never accepted")
	}
	// Idle past the acceptor's timeout: the acceptor closed its side.
	remotingtest.WaitFor(t, "the acceptor to close the idle connection", func() bool {
		acc.mu.Lock()
		defer acc.mu.Unlock()
		return len(acc.open) == 0
	})
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatalf("write on a pooled idle connection: %v", err)
	}
	select {
	case g := <-got:
		if g != "hello" {
			t.Fatalf("read %q", g)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the bytes never arrived")
	}
	if now := c.(*streamConn).cur.Load().raw.LocalAddr().String(); now == first {
		t.Fatal("the connection was not replaced")
	}
}

// The table resolves host names in the background and refuses while it
// has no answer; a name that later resolves elsewhere (a rescheduled pod)
// moves with it.
func TestPeerSetResolvesLate(t *testing.T) {
	p := newPeerSet(testLogger(t))
	defer p.close()
	var mu sync.Mutex
	answer := map[string][]netip.Addr{}
	p.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := answer[host]; ok {
			return slices.Clone(a), nil
		}
		return nil, errors.New("no such host")
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	p.now = func() time.Time { return time.Unix(0, clock.Load()) }
	p.src.Store(ptr[memberSource](staticMembers{self: "a", peers: []Peer{{ID: "a", RaftAddr: "10.0.0.1:9878"}, {ID: "b", RaftAddr: "ctl-1.ctl:9878"}}}))
	b1, b2 := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	if !p.allowIP(netip.MustParseAddr("10.0.0.1")) {
		t.Fatal("a literal member address refused")
	}
	if p.allowIP(b1) {
		t.Fatal("an unresolved name's future address allowed")
	}
	mu.Lock()
	answer["ctl-1.ctl"] = []netip.Addr{b1}
	mu.Unlock()
	step := func() { clock.Add(int64(resolveRetry)) }
	remotingtest.WaitFor(t, "the name to resolve", func() bool { step(); return p.allowIP(b1) })
	mu.Lock()
	answer["ctl-1.ctl"] = []netip.Addr{b2}
	mu.Unlock()
	remotingtest.WaitFor(t, "the name to move", func() bool { step(); return p.allowIP(b2) && !p.allowIP(b1) })
	// A lookup failure keeps the last answer.
	mu.Lock()
	delete(answer, "ctl-1.ctl")
	mu.Unlock()
	clock.Add(int64(resolveTTL))
	p.allowIP(b2)
	p.close()
	if !p.allowIP(b2) {
		t.Fatal("a failed lookup dropped the member's address")
	}
}

func ptr[T any](v T) *T { return &v }

// changeOnCall is a membership whose change lands inside the call'th
// read of it made outside the layer's lock (an opening exchange's check):
// that read still answers the old members, and the change and the layer's
// revalidate run before it returns, as a change that commits between a
// handshake's check and the connection's registration would.
type changeOnCall struct {
	mutableMembers
	layer       *StreamLayer
	calls, call int
	to          []Peer
}

func (m *changeOnCall) members() []Peer {
	old := m.mutableMembers.members()
	if !m.layer.mu.TryLock() {
		return old // a read under the layer's lock
	}
	m.layer.mu.Unlock()
	m.mu.Lock()
	m.calls++
	now := m.calls == m.call
	m.mu.Unlock()
	if now {
		m.set(m.to)
		m.layer.revalidate()
	}
	return old
}

// A member removed while its connection's opening exchange is checked is
// not left with that connection: the revalidate of the change ran before
// the connection was registered, so the registration checks again.
func TestMembershipChangeDuringHandshakeClosesIt(t *testing.T) {
	// No idle close: only the membership may end the connection.
	acc, err := NewStream(StreamOptions{Bind: "127.0.0.1:0", IdleTimeout: time.Hour, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	all := []Peer{{ID: "a", RaftAddr: acc.ListenAddr().String()}, {ID: "b", RaftAddr: "127.0.0.3:2"}}
	m := &changeOnCall{mutableMembers: mutableMembers{self: "a", peers: all}, layer: acc, to: all[:1]}
	acc.attach(m)
	accepted, ended := make(chan struct{}, 2), make(chan struct{}, 2)
	go func() {
		for {
			c, err := acc.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() { io.Copy(io.Discard, c); c.Close(); ended <- struct{}{} }()
		}
	}()
	open := func() (net.Conn, error) {
		return (&attackerStream{id: "b", src: "127.0.0.3"}).Dial(raft.ServerAddress(acc.ListenAddr().String()), remotingtest.Hang)
	}
	// How many times an accepted connection's checks read the members.
	c, err := open()
	if err != nil {
		t.Fatal(err)
	}
	<-accepted
	c.Close()
	<-ended
	m.mu.Lock()
	perConn := m.calls
	m.call = m.calls + perConn // the last read of the next connection's checks
	m.mu.Unlock()
	if perConn == 0 {
		t.Fatal("the layer never read the members")
	}
	c, err = open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(remotingtest.Hang))
	if _, err := c.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
		t.Fatalf("the removed member's connection stayed open: %v", err)
	}
}
