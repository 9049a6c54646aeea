// JSON primitives written byte for byte as fastjson 1.2.83 writes them, in
// both dialects.
package body

import (
	"strconv"
	"unicode/utf8"
)

// maxSafeLong is the largest magnitude a JavaScript number holds exactly;
// fastjson's BrowserCompatible mode quotes any long beyond it.
const maxSafeLong = 9007199254740991

const hexUpper = "0123456789ABCDEF"

// asciiSafe[c] is true for ASCII bytes both dialects write unchanged; '/'
// is handled apart because only Standard escapes it.
var asciiSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

// AppendString appends s as a quoted JSON string in dialect d.
//
// Both dialects escape '"', '\\', the short control escapes (\b \t \n \f
// \r), other controls, DEL and the C1 controls U+0080..U+009F as
// upper-case \u00XX, and U+2028/U+2029 (fastjson does so to keep JSONP
// safe). Standard also writes '/' as "\/" and every non-ASCII rune as
// upper-case \uXXXX, as UTF-16 surrogate pairs above the BMP. Invalid
// UTF-8 becomes U+FFFD, which is what Java would have held after decoding
// the same bytes.
func AppendString(dst []byte, s string, d Dialect) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSafe[c] || (c == '/' && d == Legacy) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedRune(dst, rune(c), d)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		invalid := r == utf8.RuneError && size == 1
		if d == Legacy && !invalid && legacyRaw(r) {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscapedRune(dst, r, d)
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscapedRune writes one rune that needs care in dialect d.
func appendEscapedRune(dst []byte, r rune, d Dialect) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	case '/':
		if d == Standard {
			return append(dst, '\\', '/')
		}
		return append(dst, '/')
	}
	if r < 0x20 || r >= 0x7F && r < 0xA0 || r == 0x2028 || r == 0x2029 {
		return appendU4(dst, r)
	}
	if r < utf8.RuneSelf {
		return append(dst, byte(r))
	}
	if d == Legacy {
		return utf8.AppendRune(dst, r)
	}
	if r > 0xFFFF {
		r -= 0x10000
		dst = appendU4(dst, 0xD800+(r>>10))
		return appendU4(dst, 0xDC00+(r&0x3FF))
	}
	return appendU4(dst, r)
}

// legacyRaw reports whether Legacy writes the non-ASCII rune r unescaped.
// fastjson's table of characters to escape
// (IOUtils.specicalFlags_doubleQuotes) runs up to U+009F, so the C1
// controls are escaped like DEL; U+2028 and U+2029 are escaped for JSONP.
func legacyRaw(r rune) bool {
	return r >= 0xA0 && r != 0x2028 && r != 0x2029
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		hexUpper[(r>>12)&0xF], hexUpper[(r>>8)&0xF], hexUpper[(r>>4)&0xF], hexUpper[r&0xF])
}

// AppendInt32 appends v as a JSON number.
func AppendInt32(dst []byte, v int32) []byte {
	return strconv.AppendInt(dst, int64(v), 10)
}

// AppendInt64 appends a Java long: a number, except that Standard quotes
// values a JavaScript client could not hold exactly.
func AppendInt64(dst []byte, v int64, d Dialect) []byte {
	if d == Standard && (v > maxSafeLong || v < -maxSafeLong) {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v, 10)
		return append(dst, '"')
	}
	return strconv.AppendInt(dst, v, 10)
}

// AppendBool appends true or false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendIntKey writes a Long/Integer map key: bare in Legacy (fastjson
// without WriteNonStringKeyAsString), quoted in Standard.
func appendIntKey(dst []byte, id int64, d Dialect) []byte {
	if d == Standard {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, '"', ':')
	}
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, ':')
}

// appendField writes a bean property name and colon. Names are constant
// ASCII identifiers, so no escaping is needed.
func appendField(dst []byte, comma bool, name string) []byte {
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendStringList writes a JSON array of strings.
func appendStringList(dst []byte, list []string, d Dialect) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s, d)
	}
	return append(dst, ']')
}
