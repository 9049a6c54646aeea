// sniff_limits_test.go checks that connections handed to a sniffer's
// protocol count in MaxConnections and MaxConnectionsPerIP for as long as
// the protocol keeps them: a raft transport sharing the port held any
// number of connections beyond both caps.

package remoting

import (
	"net"
	"testing"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// handOver dials the fake protocol and waits for its acknowledgement: the
// connection is then held by the protocol.
func handOver(t *testing.T, s *Server, conns <-chan net.Conn) (*fakeClient, net.Conn) {
	t.Helper()
	f := dialFake(t, s)
	f.write(fakeMagic)
	f.expect("ok\n")
	return f, <-conns
}

func TestHandedConnectionsCountInMaxConnections(t *testing.T) {
	conns := make(chan net.Conn, 8)
	s, _ := startTiny(t, func(o *Options) {
		o.MaxConnections = 2
		o.Sniffers = []Sniffer{fakeProtocol(conns)}
	})
	_, first := handOver(t, s, conns)
	handOver(t, s, conns)
	// Both places are held by the protocol: the next connection, of
	// either protocol, is closed at accept.
	if !dial(t, s).ClosedByPeer() {
		t.Fatal("a third connection was served beside two handed-off ones with MaxConnections=2")
	}
	remotingtest.WaitFor(t, "the refusal counted", func() bool { return s.Stats().RefusedConns == 1 })
	// Closing a handed-off connection frees its place.
	first.Close()
	remotingtest.WaitFor(t, "a place freed", func() bool {
		s.connsMu.Lock()
		defer s.connsMu.Unlock()
		return len(s.handed) == 1
	})
	w := dial(t, s)
	if r := w.Call(request(1, 1)); r == nil {
		t.Fatal("no answer after a place was freed")
	}
}

func TestHandedConnectionsCountInMaxConnectionsPerIP(t *testing.T) {
	conns := make(chan net.Conn, 8)
	s, _ := startTiny(t, func(o *Options) {
		o.MaxConnectionsPerIP = 2
		o.Sniffers = []Sniffer{fakeProtocol(conns)}
	})
	_, first := handOver(t, s, conns)
	handOver(t, s, conns)
	if !dial(t, s).ClosedByPeer() {
		t.Fatal("a third connection from one address was served beside two handed-off ones with MaxConnectionsPerIP=2")
	}
	remotingtest.WaitFor(t, "the refusal counted", func() bool { return s.Stats().RefusedPerIP == 1 })
	first.Close()
	remotingtest.WaitFor(t, "the address's count to drop", func() bool {
		s.connsMu.Lock()
		defer s.connsMu.Unlock()
		return s.perIP["127.0.0.1"] == 1
	})
	handOver(t, s, conns)
}
