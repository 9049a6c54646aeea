// sniff_test.go checks protocols told apart by their first bytes: a fake
// protocol with a magic preamble shares the port with remoting, gets a
// plain net.Conn with nothing lost, and is closed by Shutdown.

package remoting

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/tlstest"
)

// fakeMagic opens the fake protocol: 'R' can never start a frame.
const fakeMagic = "RAFT1"

// fakeProtocol answers "ok\n" once its magic is read, then echoes each
// line upper-cased, until the peer closes. conns receives each connection
// it was handed.
func fakeProtocol(conns chan<- net.Conn) Sniffer {
	return Sniffer{Magic: []byte(fakeMagic), Serve: func(nc net.Conn) {
		if conns != nil {
			conns <- nc
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		magic := make([]byte, len(fakeMagic))
		if _, err := io.ReadFull(br, magic); err != nil || string(magic) != fakeMagic {
			return
		}
		if _, err := io.WriteString(nc, "ok\n"); err != nil {
			return
		}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if _, err := io.WriteString(nc, strings.ToUpper(line)); err != nil {
				return
			}
		}
	}}
}

// fakeClient is a dialer of the fake protocol.
type fakeClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialFake(t *testing.T, s *Server) *fakeClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr().String(), remotingtest.Hang)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &fakeClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (f *fakeClient) write(s string) {
	f.t.Helper()
	if _, err := io.WriteString(f.nc, s); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeClient) line() (string, error) {
	f.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	return f.br.ReadString('\n')
}

func (f *fakeClient) expect(want string) {
	f.t.Helper()
	got, err := f.line()
	if err != nil || got != want {
		f.t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

// The protocol's contract: magic, wait for the acknowledgement, talk.
// Remoting on the same port is unaffected.
func TestSnifferSharesThePort(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.Sniffers = []Sniffer{fakeProtocol(nil)} })
	w := dial(t, s)
	f := dialFake(t, s)
	f.write(fakeMagic)
	f.expect("ok\n")
	f.write("hello\n")
	f.expect("HELLO\n")
	if r := w.Call(request(codeEcho, 1, "v", "remoting")); r.Remark != "remoting" {
		t.Fatalf("remoting beside the fake protocol: %+v", r)
	}
	f.write("again\n")
	f.expect("AGAIN\n")
	if s.ConnCount() != 1 {
		t.Fatalf("ConnCount %d: a handed-off connection counts as remoting", s.ConnCount())
	}
}

// Bytes that came with the magic, in the same write, reach the protocol:
// what netpoll had read is put back in front of the connection.
func TestSnifferGetsTheBytesAlreadyRead(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.Sniffers = []Sniffer{fakeProtocol(nil)} })
	f := dialFake(t, s)
	f.write(fakeMagic + "one\ntwo\n")
	f.expect("ok\n")
	f.expect("ONE\n")
	f.expect("TWO\n")
}

// A magic split across writes is waited for.
func TestSnifferWaitsForTheWholeMagic(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.Sniffers = []Sniffer{fakeProtocol(nil)} })
	f := dialFake(t, s)
	f.write(fakeMagic[:2])
	time.Sleep(20 * time.Millisecond)
	f.write(fakeMagic[2:])
	f.expect("ok\n")
}

// A connection that starts like the magic and then differs is neither
// protocol.
func TestSnifferMismatchCloses(t *testing.T) {
	s, logs := startTiny(t, func(o *Options) { o.Sniffers = []Sniffer{fakeProtocol(nil)} })
	f := dialFake(t, s)
	f.write("RAXXX")
	if _, err := f.line(); err == nil {
		t.Fatal("a wrong magic got an answer")
	}
	if !strings.Contains(logs.String(), "unknown protocol") {
		t.Fatalf("no log line:\n%s", logs)
	}
}

// A protocol that keeps its connection (returns from Serve at once) has it
// closed by Shutdown.
func TestShutdownClosesHandedOffConnections(t *testing.T) {
	kept := make(chan net.Conn, 1)
	o := testOptions(&remotingtest.Logs{})
	o.Sniffers = []Sniffer{{Magic: []byte(fakeMagic), Serve: func(nc net.Conn) {
		io.WriteString(nc, "ok\n")
		kept <- nc
	}}}
	s := newServer(t, o, nil)
	f := dialFake(t, s)
	f.write(fakeMagic)
	f.expect("ok\n")
	<-kept
	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.line(); err == nil {
		t.Fatal("handed-off connection still open after Shutdown")
	}
}

// Sniffers come before the TLS mode: an enforcing listener hands them
// over in plaintext, and still refuses plaintext remoting.
func TestSnifferOnAnEnforcingListener(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	s, _ := startTiny(t, func(o *Options) {
		o.TLS = tlsOption(t, ca, true)
		o.Sniffers = []Sniffer{fakeProtocol(nil)}
	})
	f := dialFake(t, s)
	f.write(fakeMagic)
	f.expect("ok\n")
	if served(dial(t, s), 1) {
		t.Fatal("plaintext remoting served by an enforcing listener")
	}
	w, err := dialTLS(t, s, ca)
	if err != nil || !served(w, 2) {
		t.Fatalf("TLS not served beside the sniffer: %v", err)
	}
}

func TestNewRefusesBadMagics(t *testing.T) {
	serve := func(net.Conn) {}
	f := func(maxFrame int, want string, magics ...string) {
		t.Helper()
		o := Options{Addr: "127.0.0.1:0", Routes: tinyRoutes(), MaxFrame: maxFrame}
		for _, m := range magics {
			o.Sniffers = append(o.Sniffers, Sniffer{Magic: []byte(m), Serve: serve})
		}
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("magics %q: %v, want %q", magics, err, want)
		}
	}
	f(0, "starts like a TLS record", "\x16abc")
	f(0, "starts like a frame", "\x00abc")
	f(0x53<<24, "starts like a frame", "RAFT")
	f(0, "another sniffer", "RAFT", "Rx")
	f(0, "needs a magic", "")
	if _, err := New(Options{Addr: "127.0.0.1:0", Sniffers: []Sniffer{fakeProtocol(nil)}, MaxFrame: codec.DefaultMaxFrame}); err != nil {
		t.Fatalf("a good magic refused: %v", err)
	}
}
