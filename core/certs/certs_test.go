// certs_test.go checks loading and reloading the material, with
// handshakes in memory: which certificate a new handshake gets after each
// kind of rotation, trust changes, tls.config.file, test mode, and the
// settings that stop a start.

package certs

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/tlstest"
)

func settings(mode string, f tlstest.Files) *config.Config {
	cfg := config.Default()
	cfg.TLSServerMode = mode
	cfg.TLSServerCertPath, cfg.TLSServerKeyPath = f.Cert, f.Key
	return cfg
}

// load builds the material of cfg; Load and Poll log on the caller's
// goroutine, so a plain buffer collects their lines.
func load(t *testing.T, cfg *config.Config) (*Material, *strings.Builder) {
	t.Helper()
	logs := &strings.Builder{}
	m, err := Load(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Fatal("no material for an enabled mode")
	}
	return m, logs
}

// handshake runs a TLS handshake against m in memory and returns the
// client's view of it: the server writes one byte once its handshake is
// done, which the client's read needs to get past what TLS 1.3 sends after
// the server's Finished (tickets, or the alert for a refused client
// certificate).
func handshake(t *testing.T, m *Material, client *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	cc, sc := net.Pipe()
	defer cc.Close()
	serverErr := make(chan error, 1)
	go func() {
		defer sc.Close()
		ts := tls.Server(sc, m.Config())
		err := ts.Handshake()
		if err == nil {
			_, err = ts.Write([]byte{1})
		}
		serverErr <- err
	}()
	tc := tls.Client(cc, client)
	err := tc.Handshake()
	if err == nil {
		_, err = io.ReadFull(tc, make([]byte, 1))
	}
	cc.Close()
	if serr := <-serverErr; err == nil {
		err = serr
	}
	if err != nil {
		return tls.ConnectionState{}, err
	}
	return tc.ConnectionState(), nil
}

func servedSerial(t *testing.T, m *Material, ca *tlstest.CA) int64 {
	t.Helper()
	st, err := handshake(t, m, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return st.PeerCertificates[0].SerialNumber.Int64()
}

func TestCertificateReload(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "ca")
	f := ca.Files(t, 100)
	m, logs := load(t, settings("permissive", f))
	if got := servedSerial(t, m, ca); got != 100 {
		t.Fatalf("serial %d, want 100", got)
	}
	if !m.Watches() || m.Mode() != config.TLSPermissive {
		t.Fatalf("watches %v mode %v", m.Watches(), m.Mode())
	}
	m.Poll()
	if strings.Contains(logs.String(), "reloaded") {
		t.Fatalf("reloaded unchanged files:\n%s", logs)
	}

	// Half a rotation: the new certificate does not match the old key.
	// It does not load, and the old certificate keeps being served.
	cert2, key2, k2 := ca.Issue(t, 200, false, nil)
	tlstest.WriteAtomic(t, f.Cert, cert2)
	m.Poll()
	if got := servedSerial(t, m, ca); got != 100 {
		t.Fatalf("after a certificate without its key: serial %d, want 100", got)
	}
	if !strings.Contains(logs.String(), "does not load") {
		t.Fatalf("no log line for material that does not load:\n%s", logs)
	}
	m.Poll()
	if n := strings.Count(logs.String(), "does not load"); n != 1 {
		t.Fatalf("the same bad material logged %d times", n)
	}

	tlstest.WriteAtomic(t, f.Key, key2)
	m.Poll()
	if got := servedSerial(t, m, ca); got != 200 {
		t.Fatalf("after rotating certificate and key: serial %d, want 200", got)
	}

	// A renewal that keeps the key (which Java never picks up).
	cert3, _, _ := ca.Issue(t, 300, false, k2)
	tlstest.WriteAtomic(t, f.Cert, cert3)
	m.Poll()
	if got := servedSerial(t, m, ca); got != 300 {
		t.Fatalf("after renewing with the same key: serial %d, want 300", got)
	}
	// A file being replaced (missing for a moment) is not a change.
	os.Remove(f.Cert)
	m.Poll()
	if got := servedSerial(t, m, ca); got != 300 {
		t.Fatalf("with the certificate file missing: serial %d, want 300", got)
	}
}

// A changed trust file applies to the next handshake: a client trusted only
// by the new file gets in after the reload.
func TestTrustReload(t *testing.T) {
	t.Parallel()
	ca, next := tlstest.NewCA(t, "ca"), tlstest.NewCA(t, "next")
	f := ca.Files(t, 2)
	cfg := settings("enforcing", f)
	cfg.TLSServerNeedClientAuth = "require"
	cfg.TLSServerAuthClient = true
	cfg.TLSServerTrustCertPath = f.Trust
	m, _ := load(t, cfg)
	client := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{next.Pair(t, 99, true)}}
	if _, err := handshake(t, m, client); err == nil {
		t.Fatal("client of an untrusted CA accepted")
	}
	tlstest.WriteAtomic(t, f.Trust, next.PEM)
	m.Poll()
	if _, err := handshake(t, m, client); err != nil {
		t.Fatalf("client of the newly trusted CA refused: %v", err)
	}
	if _, err := handshake(t, m, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}); err == nil {
		t.Fatal("client without a certificate accepted under need.client.auth=require")
	}
}

// tls.config.file overrides the certificate paths, as in Java, but not the
// mode.
func TestConfigFile(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "ca")
	f := ca.Files(t, 7)
	props := filepath.Join(f.Dir, "tls.properties")
	text := "tls.server.certPath=" + f.Cert + "\ntls.server.keyPath=" + f.Key + "\ntls.server.mode=disabled\n"
	tlstest.WriteAtomic(t, props, []byte(text))
	cfg := config.Default()
	cfg.TLSServerMode = "enforcing"
	cfg.TLSConfigFile = props
	m, _ := load(t, cfg)
	if m.Mode() != config.TLSEnforcing {
		t.Fatal("tls.config.file must not change the mode")
	}
	if got := servedSerial(t, m, ca); got != 7 {
		t.Fatalf("serial %d, want 7 from the file's certificate", got)
	}
}

// Test mode serves a certificate made at start, as Java's
// SelfSignedCertificate, and has nothing to watch.
func TestTestMode(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.TLSTestModeEnable = true
	m, _ := load(t, cfg)
	if m.Mode() != config.TLSPermissive || m.Watches() {
		t.Fatalf("test mode: mode %v, watches %v", m.Mode(), m.Watches())
	}
	st, err := handshake(t, m, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if cn := st.PeerCertificates[0].Subject.CommonName; cn != "rocketns test mode" {
		t.Fatalf("served %q", cn)
	}
}

func TestDisabledHasNoMaterial(t *testing.T) {
	t.Parallel()
	if m, err := Load(config.Default(), nil); m != nil || err != nil {
		t.Fatalf("Load with TLS off: %v, %v", m, err)
	}
}

func TestBadMaterialStopsLoad(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "ca")
	f := ca.Files(t, 2)
	check := func(mutate func(*config.Config), want string) {
		t.Helper()
		cfg := settings("permissive", f)
		mutate(cfg)
		_, err := Load(cfg, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load: %v, want an error containing %q", err, want)
		}
	}
	check(func(c *config.Config) { c.TLSServerKeyPath = c.TLSServerCertPath }, "tls.server.certPath")
	check(func(c *config.Config) { c.TLSServerCertPath = filepath.Join(f.Dir, "missing.pem") }, "missing.pem")
	check(func(c *config.Config) { c.TLSServerCertPath = "" }, "needs tls.server.certPath")
	check(func(c *config.Config) { c.TLSServerTrustCertPath = c.TLSServerKeyPath }, "no PEM certificate")
}
