// Tests of DialTLS against a TLS fake server.

package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/tlstest"
)

// serverPair is a server certificate for 127.0.0.1 and a pool that
// trusts it.
func serverPair(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	ca := tlstest.NewCA(t, "client-test-ca")
	return ca.Pair(t, 2, false), ca.Pool()
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
	cert, pool := serverPair(t)
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
	cert, _ := serverPair(t)
	s := serveTLS(t, cert, func(c *tls.Conn) { c.Handshake() })
	_, err := DialTLS(context.Background(), s.addr(), &tls.Config{RootCAs: x509.NewCertPool()})
	if err == nil || !strings.Contains(err.Error(), "dial tls") {
		t.Fatalf("DialTLS to an untrusted server: %v, want a dial error", err)
	}
}
