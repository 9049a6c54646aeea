// tls_test.go drives the TLS settings over real loopback connections:
// which client each mode serves, client certificates, brokers over TLS,
// identical answers on both transports, and a reload reaching the
// listener.

package server

import (
	"bytes"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/tlstest"
)

func tlsConfig(t *testing.T, mode string, f tlstest.Files) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.TLSServerMode = mode
	if mode != "disabled" {
		cfg.TLSServerCertPath, cfg.TLSServerKeyPath = f.Cert, f.Key
	}
	return cfg
}

func dialTLSWire(t *testing.T, addr string, cfg *tls.Config) (*remotingtest.Wire, error) {
	t.Helper()
	d := &net.Dialer{Timeout: remotingtest.Hang}
	nc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { nc.Close() })
	return remotingtest.Over(t, nc), nil
}

// served reports whether w gets an answer to a request; a closed
// connection or a failed handshake is not served.
func served(w *remotingtest.Wire, opaque int32) bool {
	w.Send(request(9999, opaque))
	resp, err := w.Recv()
	return err == nil && resp.Opaque == opaque && resp.Code == codec.RequestCodeNotSupported
}

// The table of Java's modes (spec 6.1): which client each mode serves.
func TestTLSModesServeOrClose(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	files := ca.Files(t, 2)
	f := func(mode string, useTLS, want bool) {
		t.Helper()
		s, logs := startHooked(t, tlsConfig(t, mode, files), nil)
		var got bool
		if useTLS {
			w, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool()})
			got = err == nil && served(w, 5)
		} else {
			got = served(dialWire(t, s.Addr()), 5)
		}
		if got != want {
			t.Errorf("mode %s, tls client %v: served %v, want %v\nlogs:\n%s", mode, useTLS, got, want, logs)
		}
	}
	f("disabled", false, true)
	f("disabled", true, false)
	f("permissive", false, true)
	f("permissive", true, true)
	f("enforcing", false, false)
	f("enforcing", true, true)
}

// Without tls.server.mode, rocketns stays plaintext-only unless a
// certificate (or test mode) is configured.
func TestTLSDefaultMode(t *testing.T) {
	s, _ := startHooked(t, testConfig(t), nil)
	if s.tls != nil {
		t.Fatalf("no certificate configured, yet TLS mode %v", s.tls.Mode())
	}
	cfg := testConfig(t)
	cfg.TLSTestModeEnable = true
	s, _ = startHooked(t, cfg, nil)
	if s.tls == nil || s.tls.Mode() != config.TLSPermissive {
		t.Fatal("test mode did not make the server permissive")
	}
	// The self-signed certificate, like Java's test mode.
	w, err := dialTLSWire(t, s.Addr(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !served(w, 1) {
		t.Fatal("test mode TLS client not served")
	}
	if !served(dialWire(t, s.Addr()), 2) {
		t.Fatal("test mode plaintext client not served")
	}
}

// startMutualTLS starts an enforcing server whose certificate ca signed and
// that requires client certificates trusted by its trust file.
func startMutualTLS(t *testing.T, ca *tlstest.CA) (*Server, tlstest.Files) {
	t.Helper()
	files := ca.Files(t, 2)
	cfg := tlsConfig(t, "enforcing", files)
	cfg.TLSServerNeedClientAuth = "require"
	cfg.TLSServerAuthClient = true
	cfg.TLSServerTrustCertPath = files.Trust
	s, _ := startHooked(t, cfg, nil)
	return s, files
}

func TestTLSClientCertificates(t *testing.T) {
	ca, other := tlstest.NewCA(t, "ca"), tlstest.NewCA(t, "other")
	s, _ := startMutualTLS(t, ca)
	f := func(name string, certs []tls.Certificate, want bool) {
		t.Helper()
		w, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool(), Certificates: certs})
		// With TLS 1.3 the refusal reaches the client at its first read.
		if got := err == nil && served(w, 3); got != want {
			t.Errorf("%s: served %v, want %v (dial error %v)", name, got, want, err)
		}
	}
	f("trusted client certificate", []tls.Certificate{ca.Pair(t, 99, true)}, true)
	f("no client certificate", nil, false)
	f("certificate from another CA", []tls.Certificate{other.Pair(t, 99, true)}, false)
}

func TestTLSBrokerUnregisteredWhenItsConnectionCloses(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	closed := make(chan route.ConnID, 16)
	s, _ := startHooked(t, tlsConfig(t, "permissive", ca.Files(t, 2)), func(s *Server) {
		s.hooks.connClosed = func(id route.ConnID) { closed <- id }
	})
	w, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	if resp := w.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")); resp.Code != codec.Success {
		t.Fatalf("register over TLS: %d %s", resp.Code, resp.Remark)
	}
	if _, ok := s.Routes().Route("T1"); !ok {
		t.Fatal("no route after registering over TLS")
	}
	w.NC.Close()
	select {
	case <-closed:
	case <-time.After(remotingtest.Hang):
		t.Fatal("server did not notice the TLS connection close")
	}
	if r, ok := s.Routes().Route("T1"); ok {
		t.Fatalf("route of a broker whose TLS connection closed still served: %+v", r)
	}
}

func TestTLSRouteAnswerIsTheSameAsPlaintext(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	s, _ := startHooked(t, tlsConfig(t, "permissive", ca.Files(t, 2)), nil)
	plain := dialWire(t, s.Addr())
	if resp := plain.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")); resp.Code != codec.Success {
		t.Fatalf("register: %d %s", resp.Code, resp.Remark)
	}
	secure, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []int32{317, 479} {
		req := request(codec.GetRouteInfoByTopic, 42, "topic", "T1")
		req.Version = version
		plain.Send(req)
		secure.Send(req)
		a, b := recvRaw(t, plain), recvRaw(t, secure)
		if !bytes.Equal(a, b) {
			t.Fatalf("version %d: route over TLS differs:\nplain %q\ntls   %q", version, a, b)
		}
		if len(a) < 200 {
			t.Fatalf("version %d: %q is not a route", version, a)
		}
	}
}

// servedSerial is the serial number of the certificate a new handshake
// gets.
func servedSerial(t *testing.T, s *Server, ca *tlstest.CA) int64 {
	t.Helper()
	w, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.NC.Close()
	if !served(w, 9) {
		t.Fatal("TLS client not served")
	}
	return w.NC.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// A reload reaches the listener: the next handshake gets the new
// certificate (core/certs tests the reload rules themselves).
func TestTLSCertificateReload(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	files := ca.Files(t, 100)
	s, _ := startHooked(t, tlsConfig(t, "permissive", files), nil)
	if got := servedSerial(t, s, ca); got != 100 {
		t.Fatalf("serial %d, want 100", got)
	}
	cert, key, _ := ca.Issue(t, 200, false, nil)
	tlstest.WriteAtomic(t, files.Cert, cert)
	tlstest.WriteAtomic(t, files.Key, key)
	s.tls.Poll()
	if got := servedSerial(t, s, ca); got != 200 {
		t.Fatalf("after rotating certificate and key: serial %d, want 200", got)
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
