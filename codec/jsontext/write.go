// write.go holds the quoting of strings in fastjson's two forms and the
// length of the default one.

package jsontext

import "unicode/utf8"

// HexUpper are the digits of fastjson's \u escapes.
const HexUpper = "0123456789ABCDEF"

// asciiSafe[c] is true for ASCII bytes both forms write unchanged; '/' is
// handled apart because only BrowserCompatible escapes it.
var asciiSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

// AppendString appends s as a quoted JSON string in fastjson's default
// form, that of every header and of legacy bodies: '"' and '\\' escaped,
// the short control escapes (\b \t \n \f \r), other controls, DEL and the
// C1 controls U+0080..U+009F as upper-case \u00XX (fastjson's table of
// characters to escape, IOUtils.specicalFlags_doubleQuotes, runs up to
// U+009F), U+2028 and U+2029 escaped (fastjson keeps JSONP safe), '/' and
// every other rune raw. Bytes that are not UTF-8 become U+FFFD.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// AppendStringASCII is AppendString in fastjson's BrowserCompatible form,
// that of standard bodies: also '/' as "\/" and every non-ASCII rune as
// upper-case \uXXXX, as UTF-16 surrogate pairs above the BMP.
func AppendStringASCII(dst []byte, s string) []byte { return appendString(dst, s, true) }

func appendString(dst []byte, s string, ascii bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSafe[c] || (c == '/' && !ascii) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedRune(dst, rune(c), ascii)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		invalid := r == utf8.RuneError && size == 1
		if !ascii && !invalid && rawInDefault(r) {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscapedRune(dst, r, ascii)
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// StringLen is len(AppendString(nil, s)), counted without writing: the
// header encoder decides whether a header fits before encoding it.
func StringLen(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case asciiSafe[c] || c == '/':
				n++
			case c == '"' || c == '\\' || c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len("\uFFFD")
		case rawInDefault(r):
			n += size
		default:
			n += 6
		}
		i += size
	}
	return n
}

// AppendContent re-escapes raw, the content of a JSON string between its
// quotes (escapes included), in the default form or, with ascii, the
// BrowserCompatible one. It fails on a malformed escape.
func AppendContent(dst, raw []byte, ascii bool) ([]byte, error) {
	dst = append(dst, '"')
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf && c != '\\' && (asciiSafe[c] || c == '/' && !ascii) {
			dst = append(dst, c)
			i++
			continue
		}
		r, n, err := NextRune(raw, i)
		if err != nil {
			return dst, err
		}
		if !ascii && rawInDefault(r) {
			dst = utf8.AppendRune(dst, r)
		} else {
			dst = appendEscapedRune(dst, r, ascii)
		}
		i += n
	}
	return append(dst, '"'), nil
}

// appendEscapedRune writes one rune that needs care in the form asked.
func appendEscapedRune(dst []byte, r rune, ascii bool) []byte {
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
		if ascii {
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
	if !ascii {
		return utf8.AppendRune(dst, r)
	}
	if r > 0xFFFF {
		r -= 0x10000
		dst = appendU4(dst, 0xD800+(r>>10))
		return appendU4(dst, 0xDC00+(r&0x3FF))
	}
	return appendU4(dst, r)
}

// rawInDefault reports whether the default form writes the non-ASCII rune
// r unescaped: not a C1 control, nor U+2028 or U+2029.
func rawInDefault(r rune) bool {
	return r >= 0xA0 && r != 0x2028 && r != 0x2029
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		HexUpper[(r>>12)&0xF], HexUpper[(r>>8)&0xF], HexUpper[(r>>4)&0xF], HexUpper[r&0xF])
}
