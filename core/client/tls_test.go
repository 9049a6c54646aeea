// Tests of DialTLS against a TLS fake server.
package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// selfSignedPair is a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSignedPair(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// serveTLS starts a fake server that wraps its first connection in TLS with
// cert and hands it to serve; the connection is closed when serve returns.
func serveTLS(t *testing.T, cert tls.Certificate, serve func(*tls.Conn)) *fakeServer {
	t.Helper()
	s := startFake(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw, ok := <-s.conns
		if !ok {
			return
		}
		c := tls.Server(raw, &tls.Config{Certificates: []tls.Certificate{cert}})
		defer c.Close()
		serve(c)
	}()
	t.Cleanup(func() { <-done })
	return s
}

func TestDialTLS(t *testing.T) {
	cert, pool := selfSignedPair(t)
	s := serveTLS(t, cert, func(c *tls.Conn) {
		for {
			req, err := readCommand(c)
			if err != nil {
				return
			}
			if err := writeCommand(c, reply(req, codec.Success, "over tls")); err != nil {
				return
			}
		}
	})

	c, err := DialTLS(context.Background(), s.addr(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("DialTLS: %v", err)
	}
	defer c.Close()
	resp, err := c.Invoke(context.Background(), &codec.Command{Code: codec.GetBrokerClusterInfo})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if resp.Remark != "over tls" {
		t.Fatalf("remark %q", resp.Remark)
	}
}

func TestDialTLSUntrustedServer(t *testing.T) {
	cert, _ := selfSignedPair(t)
	s := serveTLS(t, cert, func(c *tls.Conn) { c.Handshake() })
	_, err := DialTLS(context.Background(), s.addr(), &tls.Config{RootCAs: x509.NewCertPool()})
	if err == nil || !strings.Contains(err.Error(), "dial tls") {
		t.Fatalf("DialTLS to an untrusted server: %v, want a dial error", err)
	}
}
