// Frame and header encoding into caller-owned buffers.
package codec

import (
	"encoding/binary"
	"strconv"
)

// AppendHeader appends c's header in c.SerializeType: the ROCKETMQ binary
// layout for SerializeRocketMQ, JSON for anything else (the type byte
// written by AppendFramePrefix agrees).
//
// The JSON form is byte for byte what Java's fastjson writes: keys in
// alphabetical order, extFields only when c.HasExt (entries in c.Ext order,
// since Java's is hash order and a reply's fields are few), remark only when
// not empty, language by name. A language byte outside the enum is left out,
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
// it without being copied into the same buffer. A header longer than the
// 24-bit field is the caller's bug; headers built from decoded requests are
// far below it.
func AppendFramePrefix(dst []byte, c *Command, bodyLen int) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = AppendHeader(dst, c)
	h := len(dst) - start - 8
	typ := SerializeJSON
	if c.SerializeType == SerializeRocketMQ {
		typ = SerializeRocketMQ
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(4+h+bodyLen))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(typ)<<24|uint32(h)&maxHeaderLen)
	return dst
}

// AppendFrame appends c's whole frame, body included.
func AppendFrame(dst []byte, c *Command) []byte {
	dst = AppendFramePrefix(dst, c, len(c.Body))
	return append(dst, c.Body...)
}

func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if c.HasExt {
		dst = append(dst, `,"extFields":{`...)
		for i := range c.Ext {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, c.Ext[i].Key)
			dst = append(dst, ':')
			dst = appendJSONString(dst, c.Ext[i].Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	if name, ok := LanguageName(c.Language); ok {
		dst = append(dst, `,"language":"`...)
		dst = append(dst, name...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

const hexDigits = "0123456789ABCDEF"

// appendJSONString quotes s the way fastjson's default mode does: '"' and
// '\' escaped, control characters as \b \t \n \f \r or upper-case \u00XX,
// DEL and U+2028/U+2029 as \u escapes, everything else (non-ASCII and '/'
// included) raw.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		var esc string
		switch {
		case b == '"':
			esc = `\"`
		case b == '\\':
			esc = `\\`
		case b == '\b':
			esc = `\b`
		case b == '\t':
			esc = `\t`
		case b == '\n':
			esc = `\n`
		case b == '\f':
			esc = `\f`
		case b == '\r':
			esc = `\r`
		case b < 0x20 || b == 0x7F:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			start = i + 1
			continue
		case b == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			esc = `\u2028`
			if s[i+2] == 0xA9 {
				esc = `\u2029`
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, esc...)
			i += 2
			start = i + 1
			continue
		default:
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
