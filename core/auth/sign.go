// The RocketMQ ACL request signature, as the official clients compute it and
// the Java broker checks it.

package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// Ext field names of the ACL scheme.
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
	// fieldUniqueKeyQuery is left out of the signed content by the Java
	// broker (MixAll.UNIQUE_MSG_QUERY_FLAG); kept out here for the same
	// answer on the same request.
	fieldUniqueKeyQuery = "_UNIQUE_KEY_QUERY"
)

// signatureLen is the length of base64(HMAC-SHA1): 20 bytes -> 28 chars.
const signatureLen = 28

// appendContent appends the signed content of a request: the values of every
// ext field except Signature, ordered by key, then the body. This is what the
// Java broker verifies (PlainAccessResource.parse + AclUtils.
// combineRequestContent) and what the Java and Go clients sign: their content
// is AccessKey, SecurityToken when set, and the header fields, which are
// exactly the ext fields on the wire minus Signature. (The Go client leaves
// SecurityToken out of its content; a Java broker then refuses it too.)
//
// ok is false when a key appears twice. The decoder keeps one value per key
// as Java's map does, so only a Command built by hand can get here, and which
// of its values a handler would read is not something to sign for.
func appendContent(dst []byte, ext []codec.Field, body []byte) (_ []byte, ok bool) {
	var small [16]int
	idx := small[:0]
	for i := range ext {
		if k := ext[i].Key; k != FieldSignature && k != fieldUniqueKeyQuery {
			idx = append(idx, i)
		}
	}
	// Keys are ASCII identifiers, so byte order is Java's String order.
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(ext[a].Key, ext[b].Key) })
	for n, i := range idx {
		if n > 0 && ext[idx[n-1]].Key == ext[i].Key {
			return dst, false
		}
		dst = append(dst, ext[i].Value...)
	}
	return append(dst, body...), true
}

// Sign returns the Signature a client holding secretKey sends with a request
// carrying ext and body. ext must already hold AccessKey (and SecurityToken,
// if any); a Signature field in it is ignored, so a request can be re-signed.
// A repeated key is signed as it stands, and Verify will refuse it.
func Sign(secretKey string, ext []codec.Field, body []byte) string {
	content, _ := appendContent(nil, ext, body)
	var sum [signatureLen]byte
	return string(sign(sum[:0], []byte(secretKey), content))
}

// sign appends base64(HMAC-SHA1(key, content)) to dst.
func sign(dst, key, content []byte) []byte {
	mac := hmac.New(sha1.New, key)
	mac.Write(content)
	var raw [sha1.Size]byte
	return base64.StdEncoding.AppendEncode(dst, mac.Sum(raw[:0]))
}

// Verify reports whether sig is the signature of ext and body under
// secretKey. The comparison takes the same time wherever the first
// difference is, so a peer cannot find a valid signature byte by byte.
func Verify(secretKey string, ext []codec.Field, body []byte, sig string) bool {
	return verify([]byte(secretKey), ext, body, sig)
}

func verify(key []byte, ext []codec.Field, body []byte, sig string) bool {
	content, ok := appendContent(nil, ext, body)
	if !ok {
		return false
	}
	var sum [signatureLen]byte
	want := sign(sum[:0], key, content)
	return subtle.ConstantTimeCompare(want, []byte(sig)) == 1
}

// The strict scheme, rocketns's own, for clients that can send it (core/client
// and nsadmin): the signature also covers the request code, a timestamp and
// a nonce, and each field's key and length, so a captured request cannot be
// replayed as another code, after its time window, or twice within it, and
// its characters cannot be moved between adjacent values.
const (
	// FieldSignScheme marks a strict signature; its value is StrictScheme.
	FieldSignScheme = "SignScheme"
	// FieldSignTime is the signing time, unix milliseconds in decimal.
	FieldSignTime = "SignTime"
	// FieldSignNonce is a value the client makes unique per request
	// (random, at most maxNonceLen bytes).
	FieldSignNonce = "SignNonce"
	// StrictScheme names the strict content layout and HMAC-SHA256.
	StrictScheme = "rocketns-v1"
)

// maxNonceLen bounds a nonce: the replay cache keeps each one for the time
// window.
const maxNonceLen = 64

// appendStrictContent appends the strict scheme's signed content: the scheme
// name, the code, every ext field but Signature sorted by key as
// len(key):key len(value):value, then len(body):body. Lengths make the
// layout unambiguous. ok is false on a repeated key, as for appendContent.
func appendStrictContent(dst []byte, code int32, ext []codec.Field, body []byte) (_ []byte, ok bool) {
	var small [16]int
	idx := small[:0]
	for i := range ext {
		if ext[i].Key != FieldSignature {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(ext[a].Key, ext[b].Key) })
	dst = append(dst, StrictScheme...)
	dst = append(dst, '\n')
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, '\n')
	for n, i := range idx {
		if n > 0 && ext[idx[n-1]].Key == ext[i].Key {
			return dst, false
		}
		dst = appendLenValue(dst, ext[i].Key)
		dst = appendLenValue(dst, ext[i].Value)
	}
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, ':')
	return append(dst, body...), true
}

func appendLenValue(dst []byte, s string) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}

// strictSigLen is the length of base64(HMAC-SHA256): 32 bytes -> 44 chars.
const strictSigLen = 44

func signStrict(dst, key, content []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(content)
	var raw [sha256.Size]byte
	return base64.StdEncoding.AppendEncode(dst, mac.Sum(raw[:0]))
}

// SignStrict signs req in the strict scheme as accessKey/secretKey at now,
// with nonce: it sets AccessKey, SignScheme, SignTime, SignNonce and
// Signature, replacing those of an earlier signing. Call it once every
// other field and the body are final.
func SignStrict(req *codec.Command, accessKey, secretKey string, now time.Time, nonce string) {
	req.SetExt(FieldAccessKey, accessKey)
	req.SetExt(FieldSignScheme, StrictScheme)
	req.SetExt(FieldSignTime, strconv.FormatInt(now.UnixMilli(), 10))
	req.SetExt(FieldSignNonce, nonce)
	content, _ := appendStrictContent(nil, req.Code, req.Ext, req.Body)
	var sum [strictSigLen]byte
	req.SetExt(FieldSignature, string(signStrict(sum[:0], []byte(secretKey), content)))
}

// verifyStrict reports whether sig is req's strict signature under key.
func verifyStrict(key []byte, req *codec.Command, sig string) bool {
	content, ok := appendStrictContent(nil, req.Code, req.Ext, req.Body)
	if !ok {
		return false
	}
	var sum [strictSigLen]byte
	want := signStrict(sum[:0], key, content)
	return subtle.ConstantTimeCompare(want, []byte(sig)) == 1
}
