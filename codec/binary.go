// The ROCKETMQ binary header (serialize type 1): decoder and encoder.

package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// binaryFixedLen is code(2) + language(1) + version(2) + opaque(4) + flag(4)
// + remark length(4) + extFields length(4).
const binaryFixedLen = 21

func badBinary(format string, args ...any) error {
	return &DecodeError{Reason: ReasonBadBinaryHeader, Err: fmt.Errorf(format, args...)}
}

// bytesString views b as a string without copying; see Decode for how long
// that view lives.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// decodeBinaryHeader parses h into c (already reset). Every length is checked
// against what is left of the header, so a lying length is an error rather
// than a read into the body. Zero-length strings are Java's null: an absent
// remark, an ext entry that is not there.
func decodeBinaryHeader(h []byte, c *Command) error {
	if len(h) < binaryFixedLen {
		return badBinary("header has %d bytes, want at least %d", len(h), binaryFixedLen)
	}
	be := binary.BigEndian
	c.Code = int32(int16(be.Uint16(h[0:])))
	c.Language = h[2]
	c.Version = int32(int16(be.Uint16(h[3:])))
	c.Opaque = int32(be.Uint32(h[5:]))
	c.Flag = int32(be.Uint32(h[9:]))
	remarkLen := int64(int32(be.Uint32(h[13:])))
	p := h[17:]
	if remarkLen < 0 || remarkLen > int64(len(p)-4) {
		return badBinary("remark length %d, %d header bytes left", remarkLen, len(p)-4)
	}
	c.Remark = bytesString(p[:remarkLen])
	p = p[remarkLen:]
	extLen := int64(int32(be.Uint32(p)))
	p = p[4:]
	if extLen < 0 || extLen > int64(len(p)) {
		return badBinary("extFields length %d, %d header bytes left", extLen, len(p))
	}
	if extLen == 0 {
		// Java leaves the map null; trailing bytes, like Java, are ignored.
		return nil
	}
	c.HasExt = true
	m := p[:extLen]
	for n := 0; len(m) > 0; n++ {
		if n == MaxExtEntries {
			return badBinary("more than %d extFields entries", MaxExtEntries)
		}
		if len(m) < 2 {
			return badBinary("extFields entry key length cut off")
		}
		kl := int(int16(be.Uint16(m)))
		m = m[2:]
		if kl < 0 || kl > len(m) {
			return badBinary("extFields key length %d, %d map bytes left", kl, len(m))
		}
		key := m[:kl]
		m = m[kl:]
		if len(m) < 4 {
			return badBinary("extFields entry value length cut off")
		}
		vl := int64(int32(be.Uint32(m)))
		m = m[4:]
		if vl < 0 || vl > int64(len(m)) {
			return badBinary("extFields value length %d, %d map bytes left", vl, len(m))
		}
		val := m[:vl]
		m = m[vl:]
		if kl == 0 {
			continue // a null key: no header field can read it
		}
		if vl == 0 {
			c.extDelete(bytesString(key))
			continue
		}
		if k := bytesString(key); c.extPlain(k) {
			c.extPutPlain(k, bytesString(val))
		} else {
			c.extPutIndexed(k, bytesString(val))
		}
	}
	return nil
}

// appendBinaryHeader writes c as a ROCKETMQ header. Code and version are
// truncated to int16 as Java's (short) casts do. Entries whose key does not
// fit the int16 key length are skipped: no Java header field is that long
// and the alternative is a frame the peer cannot parse. Empty values are
// written with length 0, which the peer reads as null (absent).
func appendBinaryHeader(dst []byte, c *Command) []byte {
	be := binary.BigEndian
	dst = be.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, c.Language)
	dst = be.AppendUint16(dst, uint16(int16(c.Version)))
	dst = be.AppendUint32(dst, uint32(c.Opaque))
	dst = be.AppendUint32(dst, uint32(c.Flag))
	dst = be.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for i := range c.Ext {
		f := &c.Ext[i]
		if len(f.Key) > math.MaxInt16 {
			continue
		}
		dst = be.AppendUint16(dst, uint16(len(f.Key)))
		dst = append(dst, f.Key...)
		dst = be.AppendUint32(dst, uint32(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	be.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}
