// peer_test.go checks the material handed to raft's mutual TLS: the
// current certificate and trust pool, following a reload.

package certs

import (
	"crypto/x509"
	"testing"

	"github.com/rocketns/rocketns/core/tlstest"
)

func TestPeerCertificateAndTrustPool(t *testing.T) {
	ca := tlstest.NewCA(t, "peers")
	f := ca.Files(t, 1)
	cfg := settings("permissive", f)
	cfg.TLSServerTrustCertPath = f.Trust
	m, _ := load(t, cfg)
	leafOf := func() *x509.Certificate {
		c, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	if leafOf().SerialNumber.Int64() != 1 {
		t.Fatal("not the configured certificate")
	}
	if _, err := leafOf().Verify(x509.VerifyOptions{Roots: m.TrustPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Fatalf("the trust pool does not verify the certificate: %v", err)
	}
	// A renewal is what the next connection presents.
	c, k, _ := ca.Issue(t, 2, false, nil)
	tlstest.WriteAtomic(t, f.Cert, c)
	tlstest.WriteAtomic(t, f.Key, k)
	m.Poll()
	if leafOf().SerialNumber.Int64() != 2 {
		t.Fatal("the renewed certificate is not presented")
	}
	// Without a trust file there is no pool.
	m2, _ := load(t, settings("permissive", ca.Files(t, 3)))
	if m2.TrustPool() != nil {
		t.Fatal("a pool without a trust file")
	}
}
