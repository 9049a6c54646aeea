// The stream layer over loopback TCP: the preamble check, the hand-over
// path a shared listener uses, and 3-node groups on both.

package raftnode

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// The preamble must never be mistaken for a remoting frame (its first byte
// is the top byte of a length below 16 MiB) or a TLS record.
func TestPreambleFirstByte(t *testing.T) {
	if b := Preamble[0]; b <= 0x01 || b == 0x16 {
		t.Fatalf("preamble starts with %#x", b)
	}
}

func TestStreamRefusesWithoutPreamble(t *testing.T) {
	s, err := listenStream("127.0.0.1:0", "", testLogger(t), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	attachLoopback(s)
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := s.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	addr := s.ListenAddr().String()
	f := func(first []byte, wantAccepted bool) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(first)
		if !wantAccepted {
			// The layer closes the connection: the read ends.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			var ne net.Error
			if _, err := c.Read(make([]byte, 1)); err == nil || (errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("connection sent %q was not closed: %v", first, err)
			}
			select {
			case a := <-accepted:
				t.Fatalf("connection sent %q was accepted from %v", first, a.RemoteAddr())
			default:
			}
			return
		}
		// The acceptor acknowledges the preamble before anything else;
		// the rest of the exchange follows.
		if err := finishDial(c, "t", nil); err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("x"))
		select {
		case a := <-accepted:
			// The preamble is stripped: the first byte raft reads is ours.
			a.SetReadDeadline(time.Now().Add(5 * time.Second))
			b := make([]byte, 1)
			if _, err := io.ReadFull(a, b); err != nil || b[0] != 'x' {
				t.Fatalf("first byte after the preamble: %q %v", b, err)
			}
			a.Close()
		case <-time.After(10 * time.Second):
			t.Fatalf("connection sent %q not accepted", first)
		}
	}
	f([]byte{0, 0, 0, 20, 0, 0, 0, 10}, false) // a remoting frame
	f([]byte{0x16, 3, 1, 0, 0xc8}, false)      // a TLS hello
	f([]byte("RNSRAFT1"), false)               // another generation
	f([]byte("RNSRAFT2"), false)               // the previous one, without the hello
	f([]byte("RNS"), false)                    // then silence: the close comes from the peer's close below... or the deadline
	f([]byte(Preamble), true)
	// Split across writes, byte by byte.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range Preamble {
		c.Write([]byte{Preamble[i]})
		time.Sleep(time.Millisecond)
	}
	if err := finishDial(c, "t", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-accepted:
		a.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("split preamble not accepted")
	}
	c.Close()
}

func TestStreamDialSendsPreamble(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := NewStreamLayer("127.0.0.1:1", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	attachLoopback(s)
	// peer plays the accepting side: it reads the preamble, answers ack
	// (after a pause, so a dialer that did not wait would be seen writing
	// early), plays the rest of the exchange when ack is right, and
	// reports everything raft sent.
	peer := func(ack string) <-chan string {
		got := make(chan string, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				got <- err.Error()
				return
			}
			defer c.Close()
			b := make([]byte, len(Preamble))
			io.ReadFull(c, b)
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			early, _ := c.Read(make([]byte, 16))
			if early > 0 {
				got <- "bytes before the acknowledgement"
				return
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, ack)
			if ack == PreambleAck+"\x00" {
				ours, _ := newHello("t")
				writeHello(c, ours)
				if theirs, err := readHello(c); err != nil || theirs.id != "t" {
					got <- fmt.Sprintf("hello %q: %v", theirs.id, err)
					return
				}
				c.Write([]byte{statusOK})
			}
			rest := make([]byte, 2)
			io.ReadFull(c, rest)
			got <- string(b) + string(rest)
		}()
		return got
	}
	got := peer(PreambleAck + "\x00")
	c, err := s.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hi"))
	if g := <-got; g != Preamble+"hi" {
		t.Fatalf("peer read %q", g)
	}
	c.Close()

	// A wrong acknowledgement (another generation) or none fails the dial.
	got = peer("RNSOK1\n")
	if c, err := s.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second); !errors.Is(err, errBadAck) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial with a wrong acknowledgement: %v", err)
	}
	<-got
	silent := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			silent <- c
		}
	}()
	if _, err := s.Dial(raft.ServerAddress(ln.Addr().String()), 300*time.Millisecond); err == nil {
		t.Fatal("dial without an acknowledgement succeeded")
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("dial without an acknowledgement: %v", err)
	}
	(<-silent).Close()

	if s.Addr().String() != "127.0.0.1:1" {
		t.Fatalf("advertised %v", s.Addr())
	}
	if _, err := NewStreamLayer("no-port", nil); err == nil {
		t.Fatal("NewStreamLayer accepted an address without a port")
	}
	// A host name that does not resolve (yet) is fine: peers dial it later.
	if s, err := NewStreamLayer("ctl-0.ctl.invalid:9878", nil); err != nil || s.Addr().String() != "ctl-0.ctl.invalid:9878" {
		t.Fatalf("unresolved host name: %v", err)
	}
}

// After Close, Accept and Handoff fail and a handed connection is closed.
func TestStreamClose(t *testing.T) {
	s, err := NewStreamLayer("127.0.0.1:1", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer b.Close()
	s.Close()
	if _, err := s.Accept(); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
	if err := s.Handoff(a); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Handoff after Close: %v", err)
	}
	if _, err := b.Read(make([]byte, 1)); err == nil {
		t.Fatal("handed connection not closed")
	}
}

// sniffer stands in for the remoting listener: it reads the first byte of
// each connection, hands raft connections to the stream layer with that
// byte put back, and answers anything else itself.
type sniffer struct {
	ln     net.Listener
	stream *StreamLayer
	wg     sync.WaitGroup
}

func startSniffer(t *testing.T) *sniffer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &sniffer{ln: ln}
}

func (s *sniffer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		first, err := br.Peek(1)
		c.SetReadDeadline(time.Time{})
		if err != nil {
			c.Close()
			continue
		}
		if first[0] == Preamble[0] {
			s.stream.Handoff(&bufferedConn{Conn: c, r: br})
			continue
		}
		c.Write([]byte("remoting"))
		c.Close()
	}
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// tcpGroup is a 3-node group on loopback TCP, each node's raft reached
// either on its own listener or through a sniffer.
func tcpGroup(t *testing.T, shared bool, mutate func(*Config)) ([]*Node, []*recFSM, []Peer, []*sniffer) {
	t.Helper()
	const n = 3
	var (
		peers    []Peer
		streams  []*StreamLayer
		sniffers []*sniffer
	)
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		if shared {
			sn := startSniffer(t)
			addr := sn.ln.Addr().String()
			st, err := NewStreamLayer(addr, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			sn.stream = st
			sn.wg.Add(1)
			go sn.serve()
			t.Cleanup(func() { sn.ln.Close(); sn.wg.Wait() })
			sniffers = append(sniffers, sn)
			streams = append(streams, st)
			peers = append(peers, Peer{ID: id, RaftAddr: addr, ServeAddr: addr})
		} else {
			st, err := ListenStream("127.0.0.1:0", "", testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			streams = append(streams, st)
			peers = append(peers, Peer{ID: id, RaftAddr: st.Addr().String(), ServeAddr: fmt.Sprintf("127.0.0.1:%d", 9770+i)})
		}
	}
	nodes := make([]*Node, n)
	fsms := make([]*recFSM, n)
	for i := range n {
		cfg := Config{ID: peers[i].ID, Peers: peers, InMemory: true, Stream: streams[i], Logger: testLogger(t).With("node", peers[i].ID)}
		if mutate != nil {
			mutate(&cfg)
		}
		fsms[i] = &recFSM{}
		node, err := New(cfg, fsms[i])
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node
		t.Cleanup(func() { node.Close() })
	}
	return nodes, fsms, peers, sniffers
}

func waitReadyLeader(t testing.TB, nodes []*Node) int {
	t.Helper()
	leader := -1
	remotingtest.WaitFor(t, "a ready leader", func() bool {
		for i, n := range nodes {
			if n != nil && n.ReadyLeader() {
				leader = i
				return true
			}
		}
		return false
	})
	return leader
}

func TestTCPGroup(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			nodes, fsms, peers, sniffers := tcpGroup(t, shared, nil)
			waitReadyLeader(t, nodes)
			for i := range 20 {
				applySure(t, func() ([]*Node, []*recFSM) { return nodes, fsms }, fmt.Sprint(i))
			}
			l := waitReadyLeader(t, nodes)
			deadline := time.Now().Add(20 * time.Second)
			for i := range nodes {
				for len(fsms[i].list()) < 20 {
					if time.Now().After(deadline) {
						t.Fatalf("node %d applied %d of 20", i, len(fsms[i].list()))
					}
					time.Sleep(10 * time.Millisecond)
				}
				if !slices.Equal(fsms[i].list(), fsms[l].list()) {
					t.Fatalf("node %d applied %v, leader %v", i, fsms[i].list(), fsms[l].list())
				}
			}
			// A follower names the leader (retried: a loaded machine may move
			// the leadership between the two looks).
			for try := 0; ; try++ {
				l := waitReadyLeader(t, nodes)
				f := (l + 1) % 3
				info, ok := nodes[f].Leader()
				if ok && info.ID == peers[l].ID && info.RaftAddr == peers[l].RaftAddr && info.ServeAddr == peers[l].ServeAddr {
					break
				}
				if try == 100 {
					t.Fatalf("follower sees leader %+v, want %+v", info, peers[l])
				}
				time.Sleep(50 * time.Millisecond)
			}
			if shared {
				// The same port still answers the other protocol.
				c, err := net.Dial("tcp", sniffers[0].ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				c.Write([]byte{0, 0, 0, 4})
				b, _ := io.ReadAll(c)
				c.Close()
				if string(b) != "remoting" {
					t.Fatalf("remoting client on the shared port got %q", b)
				}
			}
		})
	}
}
