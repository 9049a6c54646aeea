// The stream layer behind the real remoting listener's sniffer: the
// preamble, its acknowledgement and the hand-off off netpoll, with raft
// bytes sent the moment Dial returns, many connections at once, and a
// 3-node group whose raft shares each node's remoting port.

package raftnode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

const echoCode int32 = 1

// goroutineTB lets a function that fails with Fatalf run off the test's
// goroutine: the failure is recorded and only that goroutine ends.
type goroutineTB struct{ testing.TB }

func (g goroutineTB) Fatalf(format string, args ...any) {
	g.TB.Helper()
	g.TB.Errorf(format, args...)
	runtime.Goexit()
}

// sharedPort is a remoting listener on loopback whose sniffer hands raft
// connections to a stream layer advertised at the listener's address.
func sharedPort(t *testing.T) (*remoting.Server, *StreamLayer) {
	t.Helper()
	// The port must be known before the layer that advertises it, and
	// the layer before the listener that feeds it: bind, read, rebind.
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	st, err := NewStreamLayer(addr, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := remoting.New(remoting.Options{
		Addr: addr,
		Log:  testLogger(t),
		Routes: []remoting.Route{{Code: echoCode, Handler: func(_ *remoting.Conn, req, resp *codec.Command) error {
			resp.Remark, _ = req.ExtValue("v")
			return nil
		}}},
		Sniffers: []remoting.Sniffer{{Magic: []byte(Preamble), Serve: func(nc net.Conn) { st.Handoff(nc) }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, st
}

// Every byte a dialer writes right after Dial returns reaches the accepted
// side intact, for many connections dialled at once through the sniffer,
// while remoting requests keep being served on the same port. Before the
// acknowledgement, bytes that arrived while netpoll was handing the
// connection over could be lost or the stream cut.
func TestDialThroughRemotingSniffer(t *testing.T) {
	srv, st := sharedPort(t)
	const (
		conns   = 48
		payload = 256 << 10
	)
	pattern := func(i int) []byte {
		b := make([]byte, payload)
		for j := range b {
			b[j] = byte(i*31 + j*7)
		}
		return b
	}
	// The accepting side reads each connection to its end and checks it:
	// a 4-byte index first, then the index's pattern.
	results := make(chan error, conns)
	go func() {
		for {
			c, err := st.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// Lost bytes leave the read short: it fails at the deadline,
				// which only a hang reaches.
				c.SetReadDeadline(time.Now().Add(remotingtest.Hang))
				b := make([]byte, 4+payload)
				if _, err := io.ReadFull(c, b); err != nil {
					results <- fmt.Errorf("read: %w", err)
					return
				}
				i := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
				if !bytes.Equal(b[4:], pattern(i)) {
					results <- fmt.Errorf("connection %d: the bytes differ from those sent", i)
					return
				}
				c.Write([]byte{'k'})
				results <- nil
			}()
		}
	}()
	dialer, err := NewStreamLayer("127.0.0.1:1", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer dialer.Close()
	attachLoopback(st, dialer)

	stop := make(chan struct{})
	var remotingErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := remotingtest.Dial(t, srv.Addr().String())
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprint(i)
			w.Send(remotingtest.Request(echoCode, int32(i), "v", v))
			r, err := w.Recv()
			if err != nil || r.Remark != v {
				remotingErr = fmt.Errorf("remoting beside raft: %+v, %v", r, err)
				return
			}
		}
	}()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 48 dials at once through one poller: on a loaded machine the
			// preamble's acknowledgement can take more than seconds.
			c, err := dialer.Dial(raft.ServerAddress(srv.Addr().String()), remotingtest.Hang)
			if err != nil {
				results <- fmt.Errorf("dial %d: %w", i, err)
				return
			}
			defer c.Close()
			msg := append([]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}, pattern(i)...)
			// Small writes first, so the first bytes after the preamble
			// are a packet of their own, then the rest in one go.
			for _, part := range [][]byte{msg[:1], msg[1:4], msg[4:]} {
				if _, err := c.Write(part); err != nil {
					results <- fmt.Errorf("write %d: %w", i, err)
					return
				}
			}
			// Wait for the reader's answer, so the connection is not torn
			// down under it.
			c.SetReadDeadline(time.Now().Add(remotingtest.Hang))
			c.Read(make([]byte, 1))
		}()
	}
	for range conns {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if remotingErr != nil {
		t.Fatal(remotingErr)
	}
}

// A 3-node group whose raft traffic shares each node's remoting port, as a
// DLedger-style controller runs it: writes from many goroutines, every node
// applies them in the same order, and remoting on the same ports still
// answers.
func TestTCPGroupBehindRemoting(t *testing.T) {
	const n = 3
	var (
		peers   []Peer
		streams []*StreamLayer
		servers []*remoting.Server
	)
	for i := range n {
		srv, st := sharedPort(t)
		addr := srv.Addr().String()
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i), RaftAddr: addr, ServeAddr: addr})
		streams = append(streams, st)
		servers = append(servers, srv)
	}
	nodes := make([]*Node, n)
	fsms := make([]*recFSM, n)
	for i := range n {
		cfg := Config{ID: peers[i].ID, Peers: peers, InMemory: true, Stream: streams[i], Logger: testLogger(t).With("node", peers[i].ID)}
		fastTimeouts(&cfg)
		fsms[i] = &recFSM{}
		node, err := New(cfg, fsms[i])
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node
		t.Cleanup(func() { node.Close() })
	}
	waitReadyLeader(t, nodes)
	const writes = 200
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < writes; i += 8 {
				applySure(goroutineTB{t}, func() ([]*Node, []*recFSM) { return nodes, fsms }, fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	for i := range nodes {
		remotingtest.WaitFor(t, fmt.Sprintf("node %d applying all %d writes", i, writes), func() bool { return len(fsms[i].list()) >= writes })
	}
	for i := 1; i < n; i++ {
		if !slices.Equal(fsms[i].list(), fsms[0].list()) {
			t.Fatalf("node %d applied another order than node 0", i)
		}
	}
	noDuplicates(t, fsms[0].list())
	for _, srv := range servers {
		w := remotingtest.Dial(t, srv.Addr().String())
		if r := w.Call(remotingtest.Request(echoCode, 7, "v", "still here")); r.Remark != "still here" {
			t.Fatalf("remoting on a raft port: %+v", r)
		}
	}
}
