// tls.go dials a NameServer over TLS (a rocketns or Java server in
// permissive or enforcing mode).

package client

import (
	"context"
	"crypto/tls"
	"fmt"
)

// DialTLS is Dial over TLS: ctx bounds the connect and the handshake. cfg
// needs RootCAs (or InsecureSkipVerify for a test-mode server) and, when the
// server requires one, a client Certificates entry; a nil cfg is the
// default tls.Config.
func DialTLS(ctx context.Context, addr string, cfg *tls.Config) (*Client, error) {
	d := tls.Dialer{Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial tls %s: %w", addr, err)
	}
	return newClient(addr, conn), nil
}
