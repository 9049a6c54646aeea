// Frame and header encoding into caller-owned buffers.

package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/rocketns/rocketns/codec/jsontext"
)

// AppendHeader appends c's header in c.SerializeType: the ROCKETMQ binary
// layout for SerializeRocketMQ, JSON for anything else (the type byte
// written by AppendFramePrefix agrees).
//
// The JSON form is byte for byte what Java's fastjson writes: keys in
// alphabetical order, extFields only when c.HasExt (entries in c.Ext order,
// since Java's is hash order and a reply's fields are few), remark only when
// not empty, language by name, strings quoted as jsontext.AppendString
// quotes them (the same writer as legacy bodies). A language byte outside the enum is left out,
// which is what fastjson does with Java's null LanguageCode; readers then
// default to JAVA.
func AppendHeader(dst []byte, c *Command) []byte {
	if c.SerializeType == SerializeRocketMQ {
		return appendBinaryHeader(dst, c)
	}
	return appendJSONHeader(dst, c)
}

// AppendFramePrefix appends everything of c's frame but the body: the length
// prefix (counting a body of bodyLen bytes), the header-length word and the
// header. A cached or separately built body can then be written right after
// it without being copied into the same buffer.
//
// It cannot report a command that does not fit a frame (see
// EncodeFramePrefix); such a frame is written with its lengths truncated,
// which the peer cannot parse. Use it only for commands built from bounded
// fields, and EncodeFramePrefix wherever a header carries text a peer sent.
func AppendFramePrefix(dst []byte, c *Command, bodyLen int) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = AppendHeader(dst, c)
	putFrameWords(dst[start:], c, len(dst)-start-8, bodyLen)
	return dst
}

// EncodeFramePrefix is AppendFramePrefix that refuses, with an
// *EncodeError and dst unchanged, a command whose header does not fit the
// 24-bit header-length field (the high byte of that word is the serialize
// type) or whose frame does not fit the 32-bit length prefix. Java masks
// such a length and sends a corrupt frame. A header too long to fit is
// measured before anything is written, so refusing it costs no buffer.
func EncodeFramePrefix(dst []byte, c *Command, bodyLen int) ([]byte, error) {
	if headerBound(c) > maxHeaderLen {
		if n := headerLen(c); n > maxHeaderLen {
			return dst, &EncodeError{HeaderLen: n, BodyLen: bodyLen}
		}
	}
	orig := dst
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = AppendHeader(dst, c)
	h := len(dst) - start - 8
	if bodyLen < 0 || uint64(4+h)+uint64(bodyLen) > math.MaxUint32 {
		return orig, &EncodeError{HeaderLen: h, BodyLen: bodyLen}
	}
	putFrameWords(dst[start:], c, h, bodyLen)
	return dst, nil
}

// EncodeFrame is AppendFrame that refuses what EncodeFramePrefix refuses.
func EncodeFrame(dst []byte, c *Command) ([]byte, error) {
	dst, err := EncodeFramePrefix(dst, c, len(c.Body))
	if err != nil {
		return dst, err
	}
	return append(dst, c.Body...), nil
}

// AppendFrame appends c's whole frame, body included. Like
// AppendFramePrefix it cannot refuse a command too large to frame; see
// EncodeFrame.
func AppendFrame(dst []byte, c *Command) []byte {
	dst = AppendFramePrefix(dst, c, len(c.Body))
	return append(dst, c.Body...)
}

// putFrameWords fills the length prefix and the header-length word at the
// start of frame, for a header of h bytes.
func putFrameWords(frame []byte, c *Command, h, bodyLen int) {
	typ := SerializeJSON
	if c.SerializeType == SerializeRocketMQ {
		typ = SerializeRocketMQ
	}
	binary.BigEndian.PutUint32(frame, uint32(4+h+bodyLen))
	binary.BigEndian.PutUint32(frame[4:], uint32(typ)<<24|uint32(h)&maxHeaderLen)
}

// headerBound is at least the length AppendHeader writes for c, in time
// proportional to the number of fields: each string byte is counted as the
// longest escape it can become.
func headerBound(c *Command) int {
	const fixed = 256 // every number, name and punctuation of either form
	n := fixed + len(c.Remark)
	for i := range c.Ext {
		n += 8 + len(c.Ext[i].Key) + len(c.Ext[i].Value)
	}
	if c.SerializeType == SerializeRocketMQ {
		return n
	}
	return fixed + 6*(n-fixed)
}

// headerLen is exactly the length AppendHeader writes for c.
func headerLen(c *Command) int {
	if c.SerializeType == SerializeRocketMQ {
		n := binaryFixedLen + len(c.Remark)
		for i := range c.Ext {
			if len(c.Ext[i].Key) <= math.MaxInt16 {
				n += 6 + len(c.Ext[i].Key) + len(c.Ext[i].Value)
			}
		}
		return n
	}
	n := len(`{"code":`) + intLen(c.Code)
	if c.HasExt {
		n += len(`,"extFields":{`) + len(`}`)
		for i := range c.Ext {
			if i > 0 {
				n++
			}
			n += jsontext.StringLen(c.Ext[i].Key) + len(`:`) + jsontext.StringLen(c.Ext[i].Value)
		}
	}
	n += len(`,"flag":`) + intLen(c.Flag)
	if name, ok := LanguageName(c.Language); ok {
		n += len(`,"language":"`) + len(name) + len(`"`)
	}
	n += len(`,"opaque":`) + intLen(c.Opaque)
	if c.Remark != "" {
		n += len(`,"remark":`) + jsontext.StringLen(c.Remark)
	}
	return n + len(`,"serializeTypeCurrentRPC":"JSON","version":`) + intLen(c.Version) + len(`}`)
}

// FramePrefixLen is exactly the length AppendFramePrefix (and
// EncodeFramePrefix, when it does not refuse c) appends for c: the two
// length words and the header. A writer that reserves a frame's bytes
// before encoding into them (netpoll's Malloc) reserves this much.
func FramePrefixLen(c *Command) int { return 8 + headerLen(c) }

// intLen is the length of v in decimal, sign included.
func intLen(v int32) int {
	if v < 0 {
		return 1 + uintLen(uint32(-int64(v)))
	}
	return uintLen(uint32(v))
}

// uintLen is the number of decimal digits of u: from its bit length,
// which gives the count or one more, and one comparison.
func uintLen(u uint32) int {
	if u < 10 {
		return 1
	}
	t := bits.Len32(u) * 1233 >> 12 // floor(log10(2) * bit length)
	if u < pow10[t] {
		return t
	}
	return t + 1
}

var pow10 = [...]uint32{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// appendInt32 is strconv.AppendInt for the header's int32 fields, at a
// fraction of its cost on the reply path: one byte for 0-9 (code, flag),
// else the length first and the digits written from the end straight
// into dst (opaque, version).
func appendInt32(dst []byte, v int32) []byte {
	if v >= 0 && v < 10 {
		return append(dst, byte('0'+v))
	}
	u := uint32(v)
	if v < 0 {
		dst = append(dst, '-')
		u = uint32(-int64(v))
	}
	l := len(dst)
	n := uintLen(u)
	if cap(dst)-l < n {
		dst = slices.Grow(dst, n)
	}
	dst = dst[:l+n]
	putUint(dst[l:], u)
	return dst
}

// putUint writes u in decimal into b, which is exactly uintLen(u) long,
// two digits per step from a table.
func putUint(b []byte, u uint32) {
	i := len(b)
	// Four digits per step while there are more than four: one division
	// by 10000, then two table pairs.
	for u >= 10000 && i >= 4 {
		q := u / 10000
		r := u - q*10000
		hi := r / 100
		lo := (r - hi*100) * 2
		hi *= 2
		i -= 4
		b[i+3], b[i+2], b[i+1], b[i] = digitPairs[lo+1], digitPairs[lo], digitPairs[hi+1], digitPairs[hi]
		u = q
	}
	for u >= 100 && i >= 2 {
		q := u / 100
		j := (u - q*100) * 2
		i -= 2
		b[i+1], b[i] = digitPairs[j+1], digitPairs[j]
		u = q
	}
	if u >= 10 && i >= 2 {
		b[i-1], b[i-2] = digitPairs[u*2+1], digitPairs[u*2]
	} else if i >= 1 {
		b[i-1] = byte('0' + u)
	}
}

// eightDigits returns u < 1e8 as eight ASCII digits, zero-padded, the most
// significant in the low byte (a little-endian store writes them in
// order). Each step splits every lane of the word in two: the quotient
// stays, the remainder moves up into the lane's upper half. x*10486>>20
// is x/100 for x < 43 699 and x*103>>10 is x/10 for x < 179, so lanes do
// not spill into each other.
func eightDigits(u uint32) uint64 {
	v := uint64(u/10000) | uint64(u%10000)<<32
	q := v * 10486 >> 20 & 0x0000007f_0000007f
	v = q | (v-q*100)<<16
	q = v * 103 >> 10 & 0x000f000f_000f000f
	v = q | (v-q*10)<<8
	return v + 0x30303030_30303030
}

// digitPairs holds 00 to 99, two bytes each.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendInt32(dst, c.Code)
	if c.HasExt {
		dst = append(dst, `,"extFields":{`...)
		for i := range c.Ext {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsontext.AppendString(dst, c.Ext[i].Key)
			dst = append(dst, ':')
			dst = jsontext.AppendString(dst, c.Ext[i].Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = appendInt32(dst, c.Flag)
	if name, ok := LanguageName(c.Language); ok {
		dst = append(dst, `,"language":"`...)
		dst = append(dst, name...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"opaque":`...)
	dst = appendInt32(dst, c.Opaque)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = jsontext.AppendString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = appendInt32(dst, c.Version)
	return append(dst, '}')
}
