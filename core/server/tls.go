// tls.go holds TLS: the first-byte detection of Java's modes, the hand-off
// of a TLS connection from netpoll to crypto/tls, the goroutine that serves
// it with the same handlers, and the certificate material with its reload.
//
// netpoll has no TLS. Plaintext stays on netpoll; a connection whose first
// byte is a TLS handshake record is detached from netpoll (Detach leaves the
// socket open), its descriptor is turned into a net.Conn, and the bytes
// netpoll already read are put back in front of it. The alternative, owning
// the listener and peeking before netpoll sees a connection, would put a
// goroutine and a blocking read in front of every plaintext accept; this way
// plaintext pays one byte comparison per connection.
package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/route"
)

const (
	// tlsHandshakeRecord is the first byte of every TLS connection. A
	// plaintext frame cannot start with it: its 4-byte length would be
	// at least 0x16000000, far above any frame limit.
	tlsHandshakeRecord = 0x16
	// tlsRecordHeader is the record type, version and length.
	tlsRecordHeader = 5
	// tlsPollInterval is how often certificate files are checked, as
	// Java's FileWatchService does.
	tlsPollInterval = 500 * time.Millisecond
	// tlsHandshakeTimeout bounds a handshake, so a peer that opens a TLS
	// connection and stalls is closed before the idle timeout.
	tlsHandshakeTimeout = 10 * time.Second
)

// sniff looks at a netpoll connection's first byte and applies the TLS
// mode. It reports whether the connection stays on netpoll as plaintext.
func (s *Server) sniff(c *conn, r netpoll.Reader) bool {
	b, err := r.Peek(1)
	if err != nil {
		c.close()
		return false
	}
	hello := b[0] == tlsHandshakeRecord
	switch {
	case hello && s.tls == nil:
		s.log.Warn("closing connection: TLS handshake but TLS is disabled", "peer", c.peer, "setting", config.KeyTLSServerMode)
		c.close()
		return false
	case !hello && s.tls != nil && s.tls.mode == config.TLSEnforcing:
		s.log.Warn("closing connection: plaintext but TLS is enforced", "peer", c.peer, "setting", config.KeyTLSServerMode)
		c.close()
		return false
	case hello:
		s.beginHandoff(c, r)
		return false
	}
	return true
}

// beginHandoff takes a TLS connection off netpoll. It waits for the whole
// first record (the ClientHello): the client sends nothing more until the
// server answers, so nothing can arrive between copying netpoll's buffer
// and the detach, which happens once onRequest returns. The close callback
// (onClose) then continues the connection in continueTLS.
func (s *Server) beginHandoff(c *conn, r netpoll.Reader) {
	hdr, err := r.Peek(tlsRecordHeader)
	if err == nil {
		_, err = r.Peek(tlsRecordHeader + int(binary.BigEndian.Uint16(hdr[3:])))
	}
	if err != nil {
		s.log.Debug("closing connection: incomplete TLS hello", "peer", c.peer, "err", err)
		c.close()
		return
	}
	n := r.Len()
	buffered, err := r.Next(n)
	if err != nil {
		c.close()
		return
	}
	c.handoff = bytes.Clone(buffered)
	r.Release()
	if err := c.nc.(interface{ Detach() error }).Detach(); err != nil {
		s.log.Warn("closing connection: cannot take TLS connection off netpoll", "peer", c.peer, "err", err)
		c.handoff = nil
		c.close()
	}
}

// continueTLS runs in netpoll's close callback of a detached connection,
// after netpoll has removed the socket from its poller, so the descriptor is
// ours: it becomes a net.Conn (a duplicate) and the original is closed.
func (s *Server) continueTLS(c *conn) {
	fdc, ok := c.nc.(interface{ Fd() int })
	if !ok {
		s.log.Error("tls hand-off: connection has no descriptor", "peer", c.peer)
		return
	}
	f := os.NewFile(uintptr(fdc.Fd()), "tls")
	raw, err := net.FileConn(f)
	f.Close()
	if err != nil {
		s.log.Warn("closing connection: tls hand-off failed", "peer", c.peer, "err", err)
		return
	}
	s.connsMu.Lock()
	if s.closing.Load() {
		s.connsMu.Unlock()
		raw.Close()
		return
	}
	// Under connsMu with closing checked, so Shutdown, which snapshots
	// the connections under it after setting closing, waits for this one.
	s.tlsConns.Add(1)
	s.connsMu.Unlock()
	go s.serveTLS(raw, c.handoff)
}

// tlsTransport is the TLS side of a conn: responses are queued in a
// LinkBuffer exactly as on netpoll and written to the TLS connection on
// flush.
type tlsTransport struct {
	raw net.Conn
	tc  *tls.Conn
	out *netpoll.LinkBuffer
}

func (t *tlsTransport) flush(timeout time.Duration) error {
	t.out.Flush()
	n := t.out.Len()
	if n == 0 {
		return nil
	}
	b, err := t.out.Next(n)
	if err != nil {
		return fmt.Errorf("tls flush: %w", err)
	}
	if timeout > 0 {
		t.raw.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err = t.tc.Write(b)
	t.out.Release()
	return err
}

// serveTLS serves one TLS connection on its own goroutine with the same
// request loop as netpoll's: the reader fills only when a frame needs more
// bytes, so input is bounded by one frame, and output by the same flush
// rules.
func (s *Server) serveTLS(raw net.Conn, pre []byte) {
	defer s.tlsConns.Done()
	tc := tls.Server(&prefixConn{Conn: raw, pre: pre}, s.tls.base)
	out := netpoll.NewLinkBuffer()
	c := &conn{
		id:      route.ConnID(s.nextConn.Add(1)),
		out:     out,
		closer:  raw, // not tc: its Close may block sending close_notify
		peer:    raw.RemoteAddr().String(),
		pool:    &s.bufPool,
		sniffed: true,
		tls:     &tlsTransport{raw: raw, tc: tc, out: out},
	}
	c.lastActive.Store(s.now.Load())
	s.connsMu.Lock()
	if s.closing.Load() {
		// Shutdown may have taken its snapshot before this conn existed.
		s.connsMu.Unlock()
		raw.Close()
		return
	}
	s.conns[c.id] = c
	s.connsMu.Unlock()
	defer func() {
		raw.Close()
		out.Close()
		c.releaseHeld()
		s.onClose(c)
	}()
	raw.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		s.metrics.tlsHandshake(false)
		s.log.Info("closing connection: TLS handshake failed", "peer", c.peer, "err", err)
		return
	}
	s.metrics.tlsHandshake(true)
	raw.SetDeadline(time.Time{})
	r := netpoll.NewReader(tc)
	defer r.Release()
	for {
		// Blocks for the next frame; the idle check closes the socket
		// of a peer that sends nothing.
		if _, err := r.Peek(1); err != nil {
			s.log.Debug("tls connection ended", "peer", c.peer, "err", err)
			return
		}
		c.lastActive.Store(s.now.Load())
		if !s.serveBuffered(c, r) {
			return
		}
		c.lastActive.Store(s.now.Load())
	}
}

// prefixConn reads pre before the connection: the bytes netpoll read before
// the hand-off.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// tlsServer holds the TLS material. Handshakes read the current tls.Config
// through GetConfigForClient, so a reload affects only new handshakes.
type tlsServer struct {
	mode config.TLSMode
	cfg  *config.Config
	log  *slog.Logger
	base *tls.Config

	current atomic.Pointer[tls.Config]

	mu       sync.Mutex // serialises poll
	settings config.TLSSettings
	sums     materialSums // of the files current was built from
	failed   materialSums // last sums that did not load, to log once
	failedOK bool
}

// materialSums are content hashes of the certificate, key and trust files.
type materialSums struct {
	cert, key, trust [sha256.Size]byte
}

// newTLSServer returns nil when TLS is disabled.
func newTLSServer(cfg *config.Config, log *slog.Logger) (*tlsServer, error) {
	st, err := cfg.TLS()
	if err != nil {
		return nil, err
	}
	if st.Mode == config.TLSDisabled {
		return nil, nil
	}
	tc, sums, err := buildTLS(st)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	t := &tlsServer{mode: st.Mode, cfg: cfg, log: log, settings: st, sums: sums}
	t.current.Store(tc)
	t.base = &tls.Config{
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return t.current.Load(), nil },
	}
	return t, nil
}

// watches reports whether there are files to reload from.
func (t *tlsServer) watches() bool { return !t.settings.TestMode }

// poll reloads the material when the certificate, key or trust file
// changed. Unlike Java, which waits until both the certificate and the key
// changed, any change triggers a load; a pair that does not match yet (the
// key is written after the certificate) fails to load, is logged once and
// leaves the current material in place until the next change. A renewal
// that keeps the key is thus picked up, where Java would never reload it.
func (t *tlsServer) poll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := t.cfg.TLS()
	if err != nil {
		st = t.settings // tls.config.file unreadable or bad: keep what runs
	}
	st.Mode = t.mode
	sums := t.sums
	readSum(st.CertPath, &sums.cert)
	readSum(st.KeyPath, &sums.key)
	readSum(st.TrustCertPath, &sums.trust)
	if sums == t.sums && st == t.settings {
		return
	}
	if t.failedOK && sums == t.failed {
		return
	}
	tc, got, err := buildTLS(st)
	if err != nil {
		t.failed, t.failedOK = sums, true
		t.log.Warn("tls material changed but does not load; still serving the previous certificate",
			"cert", st.CertPath, "key", st.KeyPath, "trust", st.TrustCertPath, "err", err)
		return
	}
	t.current.Store(tc)
	t.settings, t.sums, t.failedOK = st, got, false
	attrs := []any{"cert", st.CertPath, "trust", st.TrustCertPath}
	if leaf := tc.Certificates[0].Leaf; leaf != nil {
		attrs = append(attrs, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
	}
	t.log.Info("tls material reloaded; new handshakes use it", attrs...)
}

// readSum replaces *sum with the hash of the file at path. An unreadable
// file keeps its previous hash, as in Java: a file being replaced is not a
// change until it is back.
func readSum(path string, sum *[sha256.Size]byte) {
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	*sum = sha256.Sum256(b)
}

// buildTLS makes the server tls.Config for st, and the hashes of the file
// contents it was made from.
func buildTLS(st config.TLSSettings) (*tls.Config, materialSums, error) {
	var sums materialSums
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if st.TestMode {
		cert, err := selfSigned()
		if err != nil {
			return nil, sums, err
		}
		tc.Certificates = []tls.Certificate{cert}
		// Java's test mode asks for a client certificate and trusts any.
		tc.ClientAuth = tls.RequestClientCert
		return tc, sums, nil
	}
	certPEM, err := os.ReadFile(st.CertPath)
	if err != nil {
		return nil, sums, fmt.Errorf("read %s: %w", config.KeyTLSServerCertPath, err)
	}
	keyPEM, err := os.ReadFile(st.KeyPath)
	if err != nil {
		return nil, sums, fmt.Errorf("read %s: %w", config.KeyTLSServerKeyPath, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, sums, fmt.Errorf("%s %s with %s %s: %w", config.KeyTLSServerCertPath, st.CertPath, config.KeyTLSServerKeyPath, st.KeyPath, err)
	}
	sums.cert, sums.key = sha256.Sum256(certPEM), sha256.Sum256(keyPEM)
	tc.Certificates = []tls.Certificate{cert}
	if st.TrustCertPath != "" {
		trustPEM, err := os.ReadFile(st.TrustCertPath)
		if err != nil {
			return nil, sums, fmt.Errorf("read %s: %w", config.KeyTLSServerTrustCertPath, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(trustPEM) {
			return nil, sums, fmt.Errorf("%s %s: no PEM certificate in it", config.KeyTLSServerTrustCertPath, st.TrustCertPath)
		}
		sums.trust = sha256.Sum256(trustPEM)
		tc.ClientCAs = pool
	}
	tc.ClientAuth = clientAuth(st)
	return tc, sums, nil
}

// clientAuth maps Java's need.client.auth and authClient: without
// authClient a client certificate is asked for but trusted blindly.
func clientAuth(st config.TLSSettings) tls.ClientAuthType {
	switch st.NeedClientAuth {
	case config.ClientAuthOptional:
		if st.AuthClient {
			return tls.VerifyClientCertIfGiven
		}
		return tls.RequestClientCert
	case config.ClientAuthRequire:
		if st.AuthClient {
			return tls.RequireAndVerifyClientCert
		}
		return tls.RequireAnyClientCert
	}
	return tls.NoClientCert
}

// selfSigned makes test mode's certificate, as Java's SelfSignedCertificate
// does at every start.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("test mode key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("test mode serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rocketns test mode"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("test mode certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, errors.Join(errors.New("test mode certificate"), err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
