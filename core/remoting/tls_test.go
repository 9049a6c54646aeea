// tls_test.go drives TLS over real loopback connections: which client each
// mode serves, the handshake event, the close hook and deferred replies of
// a TLS connection, and the same bytes on both transports.

package remoting

import (
	"bytes"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/tlstest"
)

// tlsOption serves a certificate of ca.
func tlsOption(t *testing.T, ca *tlstest.CA, enforce bool) *TLS {
	return &TLS{Config: &tls.Config{Certificates: []tls.Certificate{ca.Pair(t, 2, false)}}, Enforce: enforce}
}

func dialTLS(t *testing.T, s *Server, ca *tlstest.CA) (*remotingtest.Wire, error) {
	t.Helper()
	d := &net.Dialer{Timeout: remotingtest.Hang}
	nc, err := tls.DialWithDialer(d, "tcp", s.Addr().String(), &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		return nil, err
	}
	return remotingtest.Over(t, nc), nil
}

// served reports whether w gets an answer to a request; a closed
// connection or a failed handshake is not served.
func served(w *remotingtest.Wire, opaque int32) bool {
	w.Send(request(codeEcho, opaque))
	resp, err := w.Recv()
	return err == nil && resp.Opaque == opaque && resp.Code == codec.Success
}

// The table of Java's modes: which client each serves.
func TestTLSModesServeOrClose(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	f := func(mode *TLS, useTLS, want bool) {
		t.Helper()
		s, logs := startTiny(t, func(o *Options) { o.TLS = mode })
		var got bool
		if useTLS {
			w, err := dialTLS(t, s, ca)
			got = err == nil && served(w, 5)
		} else {
			got = served(dial(t, s), 5)
		}
		if got != want {
			t.Errorf("TLS %+v, tls client %v: served %v, want %v\nlogs:\n%s", mode, useTLS, got, want, logs)
		}
	}
	f(nil, false, true)
	f(nil, true, false)
	f(tlsOption(t, ca, false), false, true)
	f(tlsOption(t, ca, false), true, true)
	f(tlsOption(t, ca, true), false, false)
	f(tlsOption(t, ca, true), true, true)
}

func TestTLSConnectionEventsAndCloseHook(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	closed := make(chan ConnID, 4)
	handshakes := make(chan bool, 4)
	s, _ := startTiny(t, func(o *Options) {
		o.TLS = tlsOption(t, ca, false)
		o.ConnClosed = func(id ConnID) { closed <- id }
		o.Events.TLSHandshake = func(ok bool) { handshakes <- ok }
	})
	w, err := dialTLS(t, s, ca)
	if err != nil {
		t.Fatal(err)
	}
	if ok := <-handshakes; !ok {
		t.Fatal("handshake reported failed")
	}
	resp := w.Call(request(codeWho, 1))
	if s.ConnCount() != 1 {
		t.Fatalf("ConnCount %d with one TLS connection", s.ConnCount())
	}
	w.NC.Close()
	select {
	case id := <-closed:
		if got, _ := resp.ExtValue("id"); got != formatID(id) {
			t.Fatalf("ConnClosed reported %d, the handler saw %s", id, got)
		}
	case <-time.After(remotingtest.Hang):
		t.Fatal("the close of a TLS connection was not noticed")
	}
	// A client that does not trust the certificate fails its handshake.
	if _, err := dialTLS(t, s, tlstest.NewCA(t, "other")); err == nil {
		t.Fatal("handshake with an untrusted certificate succeeded")
	}
	if ok := <-handshakes; ok {
		t.Fatal("a failed handshake reported ok")
	}
}

func TestTLSAnswerIsTheSameAsPlaintext(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	s, _ := startTiny(t, func(o *Options) { o.TLS = tlsOption(t, ca, false) })
	plain := dial(t, s)
	secure, err := dialTLS(t, s, ca)
	if err != nil {
		t.Fatal(err)
	}
	req := request(codeBig, 42, "n", "5000")
	plain.Send(req)
	secure.Send(req)
	a, b := recvRaw(t, plain), recvRaw(t, secure)
	if !bytes.Equal(a, b) || len(a) < 5000 {
		t.Fatalf("answer over TLS differs:\nplain %.80q\ntls   %.80q", a, b)
	}
}

func recvRaw(t *testing.T, w *remotingtest.Wire) []byte {
	t.Helper()
	b, err := w.RecvRaw()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
