// Tests of nsadmin against NameServers that only speak TLS.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
)

// testPKI is a CA made in the test and files it signed, in a temp dir.
type testPKI struct {
	dir                            string
	ca, serverCert, serverKey      string
	clientCert, clientKey, otherCA string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	p := testPKI{dir: dir}
	write := func(name string, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	newCA := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		key := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return cert, key, der
	}
	caCert, caKey, caDER := newCA("nsadmin-test-ca")
	_, _, otherDER := newCA("some-other-ca")
	p.ca = write("ca.pem", "CERTIFICATE", caDER)
	p.otherCA = write("other-ca.pem", "CERTIFICATE", otherDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, certName, keyName string) (string, string) {
		key := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "rocketns-test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(certName, "CERTIFICATE", der), write(keyName, "PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = leaf(2, x509.ExtKeyUsageServerAuth, "server.pem", "server.key")
	p.clientCert, p.clientKey = leaf(3, x509.ExtKeyUsageClientAuth, "client.pem", "client.key")
	return p
}

// startEnforcing runs a NameServer that closes plaintext connections.
func startEnforcing(t *testing.T, p testPKI, clientAuth bool) string {
	t.Helper()
	return startNSWith(t, func(cfg *config.Config, _ string) {
		cfg.TLSServerMode = "enforcing"
		cfg.TLSServerCertPath, cfg.TLSServerKeyPath = p.serverCert, p.serverKey
		if clientAuth {
			cfg.TLSServerNeedClientAuth = "require"
			cfg.TLSServerAuthClient = true
			cfg.TLSServerTrustCertPath = p.ca
		}
	})
}

func TestTLSEnforcingServer(t *testing.T) {
	p := newTestPKI(t)
	ns := startEnforcing(t, p, false)

	// Plaintext is closed by the server.
	fails(t, 1, []string{"no NameServer reachable: " + ns, "add -tls"}, "clusterList", "-n", ns)
	// Verified against the CA: reads, writes and diff.
	ok(t, "updateKvConfig", "-n", ns, "-tls", "-tlsCA", p.ca, "-s", "NS", "-k", "K", "-v", "over tls")
	if got := ok(t, "getKvConfig", "-n", ns, "-tls", "-tlsCA", p.ca, "-s", "NS", "-k", "K"); !strings.Contains(got, "over tls") {
		t.Errorf("getKvConfig over TLS:\n%s", got)
	}
	ns2 := startEnforcing(t, p, false)
	ok(t, "updateKvConfig", "-n", ns2, "-tls", "-tlsCA", p.ca, "-s", "NS", "-k", "K", "-v", "over tls")
	ok(t, "diff", "-n", ns+";"+ns2, "-tls", "-tlsCA", p.ca)
	// A certificate nobody vouched for is refused...
	fails(t, 1, []string{"certificate"}, "clusterList", "-n", ns, "-tls", "-tlsCA", p.otherCA)
	fails(t, 1, []string{"certificate"}, "clusterList", "-n", ns, "-tls")
	// ...unless verification is switched off.
	ok(t, "clusterList", "-n", ns, "-tls", "-tlsInsecure")
}

func TestTLSClientCertificate(t *testing.T) {
	p := newTestPKI(t)
	ns := startEnforcing(t, p, true)
	fails(t, 1, []string{"no NameServer reachable: " + ns}, "clusterList", "-n", ns, "-tls", "-tlsCA", p.ca)
	ok(t, "clusterList", "-n", ns, "-tls", "-tlsCA", p.ca, "-tlsCert", p.clientCert, "-tlsKey", p.clientKey)
}

func TestTLSFromEnvironment(t *testing.T) {
	p := newTestPKI(t)
	ns := startEnforcing(t, p, true)
	env := map[string]string{
		"NAMESRV_ADDR":      ns,
		"ROCKETMQ_TLS":      "true",
		"ROCKETMQ_TLS_CA":   p.ca,
		"ROCKETMQ_TLS_CERT": p.clientCert,
		"ROCKETMQ_TLS_KEY":  p.clientKey,
	}
	runWith := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runEnv(args, &stdout, &stderr, func(k string) string { return env[k] })
		return code, stderr.String()
	}
	if code, stderr := runWith("clusterList"); code != 0 {
		t.Fatalf("clusterList with TLS from the environment: exit %d, %s", code, stderr)
	}
	// The flag beats the variable.
	if code, _ := runWith("clusterList", "-tls=false"); code != 1 {
		t.Errorf("clusterList -tls=false against an enforcing server: exit %d, want 1", code)
	}
	env["ROCKETMQ_TLS_INSECURE"] = "true"
	if code, stderr := runWith("clusterList"); code != 2 || !strings.Contains(stderr, "-tlsInsecure") {
		t.Errorf("CA and insecure both from the environment: exit %d, %s", code, stderr)
	}
	if code, stderr := runWith("clusterList", "-tlsCA", p.ca); code != 0 {
		t.Errorf("-tlsCA over ROCKETMQ_TLS_INSECURE: exit %d, %s", code, stderr)
	}
	env["ROCKETMQ_TLS"] = "maybe"
	if code, stderr := runWith("clusterList"); code != 2 || !strings.Contains(stderr, "ROCKETMQ_TLS") {
		t.Errorf("ROCKETMQ_TLS=maybe: exit %d, %s", code, stderr)
	}
}

func TestTLSUsageErrors(t *testing.T) {
	p := newTestPKI(t)
	dead := deadAddr(t)
	fails(t, 2, []string{"-tlsCA needs -tls"}, "clusterList", "-n", dead, "-tlsCA", p.ca)
	fails(t, 2, []string{"-tlsInsecure needs -tls"}, "clusterList", "-n", dead, "-tlsInsecure")
	fails(t, 2, []string{"-tlsInsecure skips the check -tlsCA is for"}, "clusterList", "-n", dead, "-tls", "-tlsInsecure", "-tlsCA", p.ca)
	fails(t, 2, []string{"-tlsCert and -tlsKey"}, "clusterList", "-n", dead, "-tls", "-tlsCert", p.clientCert)
	fails(t, 2, []string{"bad -tlsCA"}, "clusterList", "-n", dead, "-tls", "-tlsCA", filepath.Join(p.dir, "missing.pem"))
	fails(t, 2, []string{"no PEM certificate"}, "clusterList", "-n", dead, "-tls", "-tlsCA", p.clientKey)
	fails(t, 2, []string{"bad -tlsCert/-tlsKey"}, "clusterList", "-n", dead, "-tls", "-tlsCert", p.clientCert, "-tlsKey", p.serverKey)
}
