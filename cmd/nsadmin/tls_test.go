// Tests of nsadmin against NameServers that only speak TLS.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/tlstest"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
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
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca := tlstest.NewCA(t, "nsadmin-test-ca")
	p.ca = write("ca.pem", ca.PEM)
	p.otherCA = write("other-ca.pem", tlstest.NewCA(t, "some-other-ca").PEM)
	leaf := func(serial int64, client bool, certName, keyName string) (string, string) {
		c, k, _ := ca.Issue(t, serial, client, nil)
		return write(certName, c), write(keyName, k)
	}
	p.serverCert, p.serverKey = leaf(2, false, "server.pem", "server.key")
	p.clientCert, p.clientKey = leaf(3, true, "client.pem", "client.key")
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
		code := runPatient(args, &stdout, &stderr, func(k string) string { return env[k] })
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
	dead := remotingtest.FreeAddrs(t, 1)[0]
	fails(t, 2, []string{"-tlsCA needs -tls"}, "clusterList", "-n", dead, "-tlsCA", p.ca)
	fails(t, 2, []string{"-tlsInsecure needs -tls"}, "clusterList", "-n", dead, "-tlsInsecure")
	fails(t, 2, []string{"-tlsInsecure skips the check -tlsCA is for"}, "clusterList", "-n", dead, "-tls", "-tlsInsecure", "-tlsCA", p.ca)
	fails(t, 2, []string{"-tlsCert and -tlsKey"}, "clusterList", "-n", dead, "-tls", "-tlsCert", p.clientCert)
	fails(t, 2, []string{"bad -tlsCA"}, "clusterList", "-n", dead, "-tls", "-tlsCA", filepath.Join(p.dir, "missing.pem"))
	fails(t, 2, []string{"no PEM certificate"}, "clusterList", "-n", dead, "-tls", "-tlsCA", p.clientKey)
	fails(t, 2, []string{"bad -tlsCert/-tlsKey"}, "clusterList", "-n", dead, "-tls", "-tlsCert", p.clientCert, "-tlsKey", p.serverKey)
}
