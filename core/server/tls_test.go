// tls_test.go drives the TLS modes over real loopback connections: which
// client each mode serves, client certificates, brokers over TLS, identical
// answers on both transports, and certificate reload.
package server

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/tlstest"
)

// newTestCA, with the issuing helpers of tlstest.CA, makes the CAs and
// certificates these tests rotate and trust.
func newTestCA(t *testing.T, name string) *tlstest.CA { return tlstest.NewCA(t, name) }

// writeAtomic replaces path's content in one rename, as a certificate
// rotation tool does.
func writeAtomic(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// tlsFiles is a server certificate, key and trust file in a temp dir.
type tlsFiles struct {
	dir, cert, key, trust string
}

func newTLSFiles(t *testing.T, ca *tlstest.CA, serial int64) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	f := tlsFiles{dir: dir, cert: filepath.Join(dir, "server.pem"), key: filepath.Join(dir, "server.key"), trust: filepath.Join(dir, "ca.pem")}
	c, k, _ := ca.Issue(t, serial, false, nil)
	writeAtomic(t, f.cert, c)
	writeAtomic(t, f.key, k)
	writeAtomic(t, f.trust, ca.PEM)
	return f
}

func tlsConfig(t *testing.T, mode string, f tlsFiles) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.TLSServerMode = mode
	if mode != "disabled" {
		cfg.TLSServerCertPath, cfg.TLSServerKeyPath = f.cert, f.key
	}
	return cfg
}

func dialTLSWire(t *testing.T, addr string, cfg *tls.Config) (*remotingtest.Wire, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 2 * time.Second}
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
	ca := newTestCA(t, "ca")
	files := newTLSFiles(t, ca, 2)
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
		t.Fatalf("no certificate configured, yet TLS mode %v", s.tls.mode)
	}
	cfg := testConfig(t)
	cfg.TLSTestModeEnable = true
	s, _ = startHooked(t, cfg, nil)
	if s.tls == nil || s.tls.mode != config.TLSPermissive {
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
func startMutualTLS(t *testing.T, ca *tlstest.CA) (*Server, tlsFiles) {
	t.Helper()
	files := newTLSFiles(t, ca, 2)
	cfg := tlsConfig(t, "enforcing", files)
	cfg.TLSServerNeedClientAuth = "require"
	cfg.TLSServerAuthClient = true
	cfg.TLSServerTrustCertPath = files.trust
	s, _ := startHooked(t, cfg, nil)
	return s, files
}

func TestTLSClientCertificates(t *testing.T) {
	ca, other := newTestCA(t, "ca"), newTestCA(t, "other")
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
	ca := newTestCA(t, "ca")
	closed := make(chan route.ConnID, 16)
	s, _ := startHooked(t, tlsConfig(t, "permissive", newTLSFiles(t, ca, 2)), func(s *Server) {
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
	case <-time.After(10 * time.Second):
		t.Fatal("server did not notice the TLS connection close")
	}
	if r, ok := s.Routes().Route("T1"); ok {
		t.Fatalf("route of a broker whose TLS connection closed still served: %+v", r)
	}
}

// readFrame reads one raw frame, prefix included.
func readFrame(t *testing.T, nc net.Conn) []byte {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var prefix [4]byte
	if _, err := io.ReadFull(nc, prefix[:]); err != nil {
		t.Fatalf("read: %v", err)
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(prefix[:]))
	copy(frame, prefix[:])
	if _, err := io.ReadFull(nc, frame[4:]); err != nil {
		t.Fatalf("read: %v", err)
	}
	return frame
}

func TestTLSRouteAnswerIsTheSameAsPlaintext(t *testing.T) {
	ca := newTestCA(t, "ca")
	s, _ := startHooked(t, tlsConfig(t, "permissive", newTLSFiles(t, ca, 2)), nil)
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
		a, b := readFrame(t, plain.NC), readFrame(t, secure.NC)
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

func TestTLSCertificateReload(t *testing.T) {
	ca := newTestCA(t, "ca")
	files := newTLSFiles(t, ca, 100)
	s, logs := startHooked(t, tlsConfig(t, "permissive", files), nil)
	if got := servedSerial(t, s, ca); got != 100 {
		t.Fatalf("serial %d, want 100", got)
	}
	existing, err := dialTLSWire(t, s.Addr(), &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	if !served(existing, 1) {
		t.Fatal("existing connection not served")
	}

	// Half a rotation: the new certificate does not match the old key.
	// It does not load, and the old certificate keeps being served.
	cert2, key2, k2 := ca.Issue(t, 200, false, nil)
	writeAtomic(t, files.cert, cert2)
	s.tls.poll()
	if got := servedSerial(t, s, ca); got != 100 {
		t.Fatalf("after a certificate without its key: serial %d, want 100", got)
	}
	if !bytes.Contains([]byte(logs.String()), []byte("does not load")) {
		t.Fatalf("no log line for material that does not load:\n%s", logs)
	}

	writeAtomic(t, files.key, key2)
	s.tls.poll()
	if got := servedSerial(t, s, ca); got != 200 {
		t.Fatalf("after rotating certificate and key: serial %d, want 200", got)
	}

	// A renewal that keeps the key (which Java never picks up).
	cert3, _, _ := ca.Issue(t, 300, false, k2)
	writeAtomic(t, files.cert, cert3)
	s.tls.poll()
	if got := servedSerial(t, s, ca); got != 300 {
		t.Fatalf("after renewing with the same key: serial %d, want 300", got)
	}

	if !served(existing, 2) {
		t.Fatal("connection made before the reloads stopped working")
	}
	if got := existing.NC.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.Int64(); got != 100 {
		t.Fatalf("existing connection's certificate changed to %d", got)
	}
}

// A changed trust file applies to the next handshake: a client trusted only
// by the new file gets in after the reload.
func TestTLSTrustReload(t *testing.T) {
	ca, next := newTestCA(t, "ca"), newTestCA(t, "next")
	s, files := startMutualTLS(t, ca)
	clientCfg := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{next.Pair(t, 99, true)}}
	if w, err := dialTLSWire(t, s.Addr(), clientCfg); err == nil && served(w, 1) {
		t.Fatal("client of an untrusted CA served")
	}
	writeAtomic(t, files.trust, next.PEM)
	s.tls.poll()
	w, err := dialTLSWire(t, s.Addr(), clientCfg)
	if err != nil || !served(w, 2) {
		t.Fatalf("client of the newly trusted CA not served (dial error %v)", err)
	}
}

// tls.config.file overrides the certificate paths, as in Java.
func TestTLSConfigFile(t *testing.T) {
	ca := newTestCA(t, "ca")
	files := newTLSFiles(t, ca, 7)
	props := filepath.Join(files.dir, "tls.properties")
	text := "tls.server.certPath=" + files.cert + "\ntls.server.keyPath=" + files.key + "\ntls.server.mode=disabled\n"
	writeAtomic(t, props, []byte(text))
	cfg := testConfig(t)
	cfg.TLSServerMode = "enforcing"
	cfg.TLSConfigFile = props
	s, _ := startHooked(t, cfg, nil)
	if s.tls == nil || s.tls.mode != config.TLSEnforcing {
		t.Fatal("tls.config.file must not change the mode")
	}
	if got := servedSerial(t, s, ca); got != 7 {
		t.Fatalf("serial %d, want 7 from the file's certificate", got)
	}
}

func TestTLSBadMaterialStopsStart(t *testing.T) {
	ca := newTestCA(t, "ca")
	files := newTLSFiles(t, ca, 2)
	f := func(mutate func(*config.Config), want string) {
		t.Helper()
		cfg := tlsConfig(t, "permissive", files)
		mutate(cfg)
		_, err := New(cfg, nil)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("New: %v, want an error containing %q", err, want)
		}
	}
	f(func(c *config.Config) { c.TLSServerKeyPath = c.TLSServerCertPath }, "tls.server.certPath")
	f(func(c *config.Config) { c.TLSServerCertPath = filepath.Join(files.dir, "missing.pem") }, "missing.pem")
	f(func(c *config.Config) { c.TLSServerCertPath = "" }, "needs tls.server.certPath")
	f(func(c *config.Config) { c.TLSServerTrustCertPath = c.TLSServerKeyPath }, "no PEM certificate")
}
