// certs.go holds the material, its loading from files or test mode's
// generation, and its reload.

package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/core/config"
)

// PollInterval is how often Poll should run: Java's FileWatchService
// checks the certificate files that often.
const PollInterval = 500 * time.Millisecond

// Material is a listener's TLS material. Handshakes read the current
// tls.Config through GetConfigForClient, so a reload affects only new
// handshakes.
type Material struct {
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

// Load builds the material cfg's tls.* settings describe; it returns nil
// (and no error) when TLS is disabled. The settings are read again by
// Poll, so a changed tls.config.file applies at the next reload; the mode
// stays the one read here.
func Load(cfg *config.Config, log *slog.Logger) (*Material, error) {
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
	if log == nil {
		log = slog.Default()
	}
	t := &Material{mode: st.Mode, cfg: cfg, log: log, settings: st, sums: sums}
	t.current.Store(tc)
	t.base = &tls.Config{
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return t.current.Load(), nil },
	}
	return t, nil
}

// Config is the tls.Config to serve handshakes with; it hands each one the
// material current at that moment.
func (t *Material) Config() *tls.Config { return t.base }

// Certificate is the current certificate, for a connection this process
// opens with it (mutual TLS between controller peers).
func (t *Material) Certificate() (*tls.Certificate, error) {
	tc := t.current.Load()
	if len(tc.Certificates) == 0 {
		return nil, errors.New("tls: no certificate loaded")
	}
	return &tc.Certificates[0], nil
}

// TrustPool is the current trust file's pool (nil without one): the CAs a
// peer's certificate must chain to.
func (t *Material) TrustPool() *x509.CertPool { return t.current.Load().ClientCAs }

// Mode is the TLS mode (permissive or enforcing).
func (t *Material) Mode() config.TLSMode { return t.mode }

// Settings are the settings the current material was built from.
func (t *Material) Settings() config.TLSSettings {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.settings
}

// Watches reports whether there are files to reload from (not in test
// mode, whose certificate lives only in memory).
func (t *Material) Watches() bool { return !t.settings.TestMode }

// Poll reloads the material when the certificate, key or trust file
// changed. Unlike Java, which waits until both the certificate and the key
// changed, any change triggers a load; a pair that does not match yet (the
// key is written after the certificate) fails to load, is logged once and
// leaves the current material in place until the next change. A renewal
// that keeps the key is thus picked up, where Java would never reload it.
func (t *Material) Poll() {
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
