// Tests of request signing: what reaches the wire verifies, for calls,
// oneway requests, bodies and binary headers.

package client

import (
	"context"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/auth"
)

func TestSetCredentialsSignsEveryRequest(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	ctx := context.Background()

	// Unsigned until credentials are set.
	if err := c.PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; hasExt(r, auth.FieldAccessKey) || hasExt(r, auth.FieldSignature) {
		t.Fatalf("unsigned request carries ACL fields: %+v", r.Ext)
	}

	c.SetCredentials(Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"})
	check := func(what string) *codec.Command {
		t.Helper()
		r := <-got
		ak, _ := r.ExtValue(auth.FieldAccessKey)
		sig, _ := r.ExtValue(auth.FieldSignature)
		if ak != "admin-key" || !auth.Verify("admin-secret", r.Ext, r.Body, sig) {
			t.Fatalf("%s: AccessKey %q, signature %q does not verify over %+v and %q", what, ak, sig, r.Ext, r.Body)
		}
		return r
	}
	if err := c.PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	check("put kv")
	if err := c.UpdateNamesrvConfig(ctx, []properties.Property{{Key: "orderMessageEnable", Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	if r := check("config update"); len(r.Body) == 0 {
		t.Fatal("config update went without a body")
	}
	req := &codec.Command{Code: 322}
	req.SetExt("brokerName", "b")
	if err := c.InvokeOneway(req); err != nil {
		t.Fatal(err)
	}
	check("oneway")
	// Sending the same Command again re-signs it: one AccessKey, one
	// Signature, still valid.
	if _, err := c.Invoke(ctx, req); err != nil {
		t.Fatal(err)
	}
	if r := check("resent"); len(r.Ext) != 3 {
		t.Fatalf("resent request has ext %+v, want brokerName, AccessKey, Signature", r.Ext)
	}
	bin := &codec.Command{Code: 101, SerializeType: codec.SerializeRocketMQ}
	bin.SetExt("namespace", "ns")
	bin.SetExt("key", "k")
	if _, err := c.Invoke(ctx, bin); err != nil {
		t.Fatal(err)
	}
	check("binary header")

	// A wrong secret signs, but not validly.
	c.SetCredentials(Credentials{AccessKey: "admin-key", SecretKey: "not-the-secret"})
	if err := c.DeleteKV(ctx, "ns", "k"); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if sig, _ := r.ExtValue(auth.FieldSignature); auth.Verify("admin-secret", r.Ext, r.Body, sig) {
		t.Fatal("a signature made with the wrong secret verified")
	}

	c.SetCredentials(Credentials{})
	if err := c.DeleteKV(ctx, "ns", "k"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; hasExt(r, auth.FieldSignature) {
		t.Fatal("still signing after credentials were cleared")
	}
}

func hasExt(c *codec.Command, key string) bool {
	_, ok := c.ExtValue(key)
	return ok
}

// With Credentials.Strict every request carries the strict scheme's fields,
// a new nonce each time, and verifies under a policy that requires it.
func TestStrictCredentials(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	ctx := context.Background()
	p, err := auth.New(auth.Options{Signatures: true, Strict: true,
		Accounts: []auth.Account{{AccessKey: "admin-key", SecretKey: "admin-secret", Role: auth.RoleAdmin}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetCredentials(Credentials{AccessKey: "admin-key", SecretKey: "admin-secret", Strict: true})
	req := &codec.Command{Code: codec.AddWritePermOfBroker}
	req.SetExt("brokerName", "broker-a")
	nonces := map[string]bool{}
	for i := 0; i < 2; i++ {
		// The same Command twice: re-signed with a new nonce, so both pass.
		if _, err := c.Invoke(ctx, req); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if err := p.Check(auth.ClassAdmin, r, "127.0.0.1:1"); err != nil {
			t.Fatalf("send %d: %v (ext %+v)", i, err, r.Ext)
		}
		n, _ := r.ExtValue(auth.FieldSignNonce)
		nonces[n] = true
		if len(r.Ext) != 6 {
			t.Fatalf("ext %+v: want brokerName and five signing fields", r.Ext)
		}
		// As another code it does not verify.
		r.Code = codec.WipeWritePermOfBroker
		if err := p.Check(auth.ClassAdmin, r, "127.0.0.1:1"); err == nil {
			t.Fatal("a strict 327 verified as a 205")
		}
	}
	if len(nonces) != 2 {
		t.Fatalf("nonces %v: want two different", nonces)
	}
	// Back to the compat scheme: the strict fields go.
	c.SetCredentials(Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"})
	if _, err := c.Invoke(ctx, req); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if hasExt(r, auth.FieldSignScheme) || hasExt(r, auth.FieldSignNonce) || hasExt(r, auth.FieldSignTime) {
		t.Fatalf("compat request keeps strict fields: %+v", r.Ext)
	}
	sig, _ := r.ExtValue(auth.FieldSignature)
	if !auth.Verify("admin-secret", r.Ext, r.Body, sig) {
		t.Fatal("compat signature does not verify")
	}
}
