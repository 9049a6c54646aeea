// Request signing with RocketMQ ACL credentials, as the official clients do
// when given an access key and secret key.

package client

import (
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
)

// Credentials are an ACL account's keys.
type Credentials struct {
	AccessKey string
	SecretKey string
}

// SetCredentials makes every later request carry AccessKey and a Signature
// over its ext fields and body, the way Java's AclClientRPCHook and the Go
// client's ACL interceptor sign: a NameServer or broker with authorization
// on then knows who asks. Empty credentials switch signing off. Safe to call
// while requests are in flight; each request is signed with the credentials
// current when it is written.
func (c *Client) SetCredentials(cr Credentials) {
	if cr.AccessKey == "" {
		c.creds.Store(nil)
		return
	}
	c.creds.Store(&cr)
}

// sign adds AccessKey and Signature to req when credentials are set. It runs
// as the frame is written, after every field is final, and replaces the
// fields of an earlier signing so a request can be sent again.
func (c *Client) sign(req *codec.Command) {
	cr := c.creds.Load()
	if cr == nil {
		return
	}
	req.SetExt(auth.FieldAccessKey, cr.AccessKey)
	req.SetExt(auth.FieldSignature, auth.Sign(cr.SecretKey, req.Ext, req.Body))
}
