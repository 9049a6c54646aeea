// Request signing with RocketMQ ACL credentials, as the official clients do
// when given an access key and secret key, or in rocketns's strict scheme.

package client

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
)

// Credentials are an ACL account's keys.
type Credentials struct {
	AccessKey string
	SecretKey string
	// Strict signs in rocketns's strict scheme (auth.SignStrict): the
	// signature covers the request code, the time and a fresh nonce, so a
	// captured request cannot be replayed as another code, later than the
	// server's window, or twice. Only rocketns servers verify it; a Java
	// NameServer or broker refuses it.
	Strict bool
}

// SetCredentials makes every later request carry AccessKey and a Signature
// over its ext fields and body, the way Java's AclClientRPCHook and the Go
// client's ACL interceptor sign (or in the strict scheme, with
// Credentials.Strict): a NameServer or broker with authorization on then
// knows who asks. Empty credentials switch signing off. Safe to call while
// requests are in flight; each request is signed with the credentials
// current when it is written.
func (c *Client) SetCredentials(cr Credentials) {
	if cr.AccessKey == "" {
		c.creds.Store(nil)
		return
	}
	c.creds.Store(&cr)
}

// sign adds the signing fields to req when credentials are set. It runs as
// the frame is written, after every field is final.
func (c *Client) sign(req *codec.Command) {
	if cr := c.creds.Load(); cr != nil {
		cr.Sign(req)
	}
}

// Sign adds cr's signing fields to req, whose fields and body must be
// final, as a Client with cr does to each request it writes: for a
// caller that writes its own frames. It replaces the fields of an earlier
// signing so a request can be sent again; a request signed again in the
// strict scheme gets a new time and nonce.
func (cr *Credentials) Sign(req *codec.Command) {
	// A field of the other scheme left from an earlier signing would be
	// signed over, or make the server read the request as strict.
	req.Ext = slices.DeleteFunc(req.Ext, func(f codec.Field) bool {
		switch f.Key {
		case auth.FieldSignScheme, auth.FieldSignTime, auth.FieldSignNonce:
			return true
		}
		return false
	})
	if cr.Strict {
		auth.SignStrict(req, cr.AccessKey, cr.SecretKey, time.Now(), nonce())
		return
	}
	req.SetExt(auth.FieldAccessKey, cr.AccessKey)
	req.SetExt(auth.FieldSignature, auth.Sign(cr.SecretKey, req.Ext, req.Body))
}

// nonce returns 16 random bytes in hex: unique per request with
// overwhelming probability, and unguessable.
func nonce() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
