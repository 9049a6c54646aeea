// Signature tests: the content rules against an independent HMAC, and the
// signatures a real Java mqadmin and 5.x broker sent.

package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/codectest"
)

func fields(kv ...string) []codec.Field {
	var out []codec.Field
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, codec.Field{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func hmacB64(key, content string) string {
	m := hmac.New(sha1.New, []byte(key))
	m.Write([]byte(content))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestSignContent(t *testing.T) {
	t.Parallel()
	f := func(ext []codec.Field, body, wantContent string) {
		t.Helper()
		want := hmacB64("secret-key", wantContent)
		if got := Sign("secret-key", ext, []byte(body)); got != want {
			t.Fatalf("Sign(%v, %q) = %s, want HMAC of %q = %s", ext, body, got, wantContent, want)
		}
		if !Verify("secret-key", ext, []byte(body), want) {
			t.Fatalf("Verify refused its own signature for %v", ext)
		}
	}
	// Values ordered by key (byte order: upper case before lower case),
	// then the body.
	f(fields("topic", "T", "AccessKey", "ak", "brokerName", "b"), "", "akbT")
	f(fields("b", "2", "a", "1"), "BODY", "12BODY")
	// Signature and _UNIQUE_KEY_QUERY are not signed; SecurityToken is.
	f(fields("Signature", "old", "AccessKey", "ak", "x", "1"), "", "ak1")
	f(fields("_UNIQUE_KEY_QUERY", "true", "AccessKey", "ak"), "", "ak")
	f(fields("SecurityToken", "tok", "AccessKey", "ak"), "", "aktok")
	// Empty values and an empty header still sign.
	f(fields("a", "", "b", "x"), "", "x")
	f(nil, "b", "b")
	// More fields than the stack array holds.
	var many []codec.Field
	want := ""
	for c := 'a'; c <= 'z'; c++ {
		many = append(many, codec.Field{Key: string(c), Value: string(c - 32)})
		want += string(c - 32)
	}
	for i, j := 0, len(many)-1; i < j; i, j = i+1, j-1 {
		many[i], many[j] = many[j], many[i]
	}
	f(many, "", want)
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	ext := fields("AccessKey", "ak", "topic", "T")
	sig := Sign("secret-key", ext, []byte("body"))
	f := func(name, key string, ext []codec.Field, body, sig string) {
		t.Helper()
		if Verify(key, ext, []byte(body), sig) {
			t.Fatalf("%s: Verify accepted", name)
		}
	}
	f("wrong key", "secret-kez", ext, "body", sig)
	f("body changed", "secret-key", ext, "bodY", sig)
	f("no body", "secret-key", ext, "", sig)
	f("value changed", "secret-key", fields("AccessKey", "ak", "topic", "U"), "body", sig)
	f("field added", "secret-key", fields("AccessKey", "ak", "topic", "T", "z", "1"), "body", sig)
	f("truncated", "secret-key", ext, "body", sig[:27])
	f("empty", "secret-key", ext, "body", "")
	f("repeated key", "secret-key", fields("AccessKey", "ak", "topic", "T", "topic", "T"), "body",
		hmacB64("secret-key", "akTTbody"))
}

// The scheme signs values without their keys or lengths, so a request whose
// characters move between adjacent values, or that gains an empty field,
// keeps its signature; nothing in it stops a replay either. These are
// properties of RocketMQ's ACL signature, kept for compatibility; the README
// says to keep signed traffic off networks where it can be captured.
func TestSignatureSchemeLimits(t *testing.T) {
	t.Parallel()
	body := []byte("")
	sig := Sign("secret-key", fields("AccessKey", "ak", "key", "k1", "namespace", "ns"), body)
	for _, ext := range [][]codec.Field{
		fields("AccessKey", "ak", "key", "k1n", "namespace", "s"),
		fields("AccessKey", "ak", "key", "k1", "namespace", "ns", "zz", ""),
	} {
		if !Verify("secret-key", ext, body, sig) {
			t.Fatalf("Verify refused %v; the scheme (and Java) accept it", ext)
		}
	}
}

// The recorded Java mqadmin (and the 5.x broker's own route queries) signed
// with mqadmin's default account rocketmq2 / 12345678. Every signature must
// verify, except the one request whose body the recording rewrote (a file
// path made neutral) after it was signed.
func TestVerifyRecordedJavaSignatures(t *testing.T) {
	t.Parallel()
	const rewritten = "mqadmin-updateNamesrvConfig-blacklisted-kvConfigPath.jsonl"
	files, err := codectest.Files()
	if err != nil {
		t.Fatal(err)
	}
	verified, refused := 0, 0
	codes := map[int32]bool{}
	for _, path := range files {
		frames, err := codectest.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			if fr.Dir != "req" {
				continue
			}
			var c codec.Command
			if err := codec.Decode(fr.Raw()[4:], &c); err != nil {
				t.Fatalf("%s seq %d: %v", fr.File, fr.Seq, err)
			}
			sig, ok := c.ExtValue(FieldSignature)
			if !ok {
				continue
			}
			if ak, _ := c.ExtValue(FieldAccessKey); ak != "rocketmq2" {
				t.Fatalf("%s seq %d: AccessKey %q", fr.File, fr.Seq, ak)
			}
			good := Verify("12345678", c.Ext, c.Body, sig)
			if Verify("12345679", c.Ext, c.Body, sig) {
				t.Fatalf("%s seq %d: verified with a wrong secret", fr.File, fr.Seq)
			}
			if filepath.Base(path) == rewritten && c.Code == 318 {
				if good {
					t.Fatalf("%s: the rewritten request verified", fr.File)
				}
				refused++
				continue
			}
			if !good {
				t.Fatalf("%s seq %d code %d: recorded signature %s does not verify", fr.File, fr.Seq, c.Code, sig)
			}
			// Re-signing gives back the recorded bytes.
			if got := Sign("12345678", c.Ext, c.Body); got != sig {
				t.Fatalf("%s seq %d: Sign = %s, recorded %s", fr.File, fr.Seq, got, sig)
			}
			verified++
			codes[c.Code] = true
		}
	}
	if verified < 40 || refused != 1 {
		t.Fatalf("verified %d, refused %d: want at least 40 and exactly 1", verified, refused)
	}
	for _, code := range []int32{100, 101, 102, 105, 106, 205, 206, 318, 319, 327} {
		if !codes[code] {
			t.Errorf("no verified recorded signature for code %d", code)
		}
	}
}

// forEachSignedRecordedRequest calls fn with every recorded request that
// carries a signature which still verifies (see above).
func forEachSignedRecordedRequest(t *testing.T, fn func(c *codec.Command)) {
	t.Helper()
	files, err := codectest.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		frames, err := codectest.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			if fr.Dir != "req" {
				continue
			}
			c := new(codec.Command)
			if err := codec.Decode(fr.Raw()[4:], c); err != nil {
				t.Fatal(err)
			}
			sig, ok := c.ExtValue(FieldSignature)
			if ok && Verify("12345678", c.Ext, c.Body, sig) {
				fn(c)
			}
		}
	}
}
