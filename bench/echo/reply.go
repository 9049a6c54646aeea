// reply.go holds the one thing both servers do with a request: find its
// opaque and write the canned reply that echoes it.

package echo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxFrame bounds a request frame, its length prefix included (Java's
// default frameMaxLength).
const MaxFrame = 16 << 20

// The reply header is what the NameServer writes for a route answer to a
// JSON request, with the request's opaque digits copied in between.
const (
	replyHead = `{"code":0,"flag":1,"language":"JAVA","opaque":`
	replyTail = `,"serializeTypeCurrentRPC":"JSON","version":479}`
)

var opaqueKey = []byte(`"opaque":`)

// errNotJSON: the servers answer JSON headers only, which is what the load
// generator sends.
var errNotJSON = errors.New("echo: request header is not JSON")

// frameLen reads the length prefix and checks it against MaxFrame.
func frameLen(prefix []byte) (int, error) {
	l := binary.BigEndian.Uint32(prefix)
	if l < 4 || uint64(l)+4 > MaxFrame {
		return 0, fmt.Errorf("echo: frame length %d out of range", l)
	}
	return int(l), nil
}

// opaqueDigits returns the opaque's digits (with a leading '-', if any) in
// frame, the bytes after the length prefix. The extFields come before the
// opaque in every header Java's fastjson or this project writes, so the
// last "opaque": is the field's.
func opaqueDigits(frame []byte) ([]byte, error) {
	if len(frame) < 4 {
		return nil, errors.New("echo: frame too short")
	}
	word := binary.BigEndian.Uint32(frame)
	if word>>24 != 0 {
		return nil, errNotJSON
	}
	h := int(word & (1<<24 - 1))
	if h > len(frame)-4 {
		return nil, errors.New("echo: header length beyond the frame")
	}
	hdr := frame[4 : 4+h]
	i := bytes.LastIndex(hdr, opaqueKey)
	if i < 0 {
		return nil, errors.New("echo: no opaque in header")
	}
	d := hdr[i+len(opaqueKey):]
	n := 0
	if n < len(d) && d[n] == '-' {
		n++
	}
	for n < len(d) && d[n] >= '0' && d[n] <= '9' {
		n++
	}
	if n == 0 || n > 11 {
		return nil, errors.New("echo: bad opaque")
	}
	return d[:n], nil
}

// replyLen is the whole reply frame's length for an opaque of n digits.
func replyLen(n, body int) int { return 8 + len(replyHead) + n + len(replyTail) + body }

// putReply writes the reply frame into p, which is replyLen bytes long.
func putReply(p, opaque, body []byte) {
	h := len(replyHead) + len(opaque) + len(replyTail)
	binary.BigEndian.PutUint32(p, uint32(4+h+len(body)))
	binary.BigEndian.PutUint32(p[4:], uint32(h))
	n := 8 + copy(p[8:], replyHead)
	n += copy(p[n:], opaque)
	n += copy(p[n:], replyTail)
	copy(p[n:], body)
}
