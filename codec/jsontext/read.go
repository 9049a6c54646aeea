// read.go holds the reading of a JSON string's content: one character at
// a time, unescaped whole, or as the Go string Java would have held.

package jsontext

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrUnexpectedEnd: a JSON string ends inside an escape.
var ErrUnexpectedEnd = errors.New("unexpected end of JSON")

// NextRune decodes the character at raw[i] inside a JSON string's content:
// an escape sequence (fastjson's, so \' too), or one UTF-8 rune, bytes
// that are not UTF-8 reading as U+FFFD. A \u escape of a lone surrogate
// reads as U+FFFD too: Go strings cannot hold one. n is the bytes read.
func NextRune(raw []byte, i int) (r rune, n int, err error) {
	c := raw[i]
	if c != '\\' {
		if c < utf8.RuneSelf {
			return rune(c), 1, nil
		}
		r, n := utf8.DecodeRune(raw[i:])
		return r, n, nil
	}
	if i+1 >= len(raw) {
		return 0, 0, ErrUnexpectedEnd
	}
	switch raw[i+1] {
	case '"', '\\', '/', '\'':
		return rune(raw[i+1]), 2, nil
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case 'u':
		r1, ok := Hex4(raw, i+2)
		if !ok {
			return 0, 0, fmt.Errorf("bad \\u escape at offset %d", i)
		}
		if r1 >= 0xD800 && r1 < 0xDC00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if r2, ok := Hex4(raw, i+8); ok && r2 >= 0xDC00 && r2 < 0xE000 {
				return 0x10000 + (r1-0xD800)<<10 + (r2 - 0xDC00), 12, nil
			}
		}
		if r1 >= 0xD800 && r1 < 0xE000 {
			return utf8.RuneError, 6, nil
		}
		return r1, 6, nil
	}
	return 0, 0, fmt.Errorf("bad escape %q at offset %d", raw[i+1], i)
}

// AppendUnescaped appends the content raw holds with its escapes decoded;
// other bytes are copied as they are. The output is never longer than raw.
func AppendUnescaped(dst, raw []byte) ([]byte, error) {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...), nil
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		r, n, err := NextRune(raw, i)
		if err != nil {
			return dst, err
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst, nil
}

// Unquote is the string raw, a JSON string's content, stands for as Java
// holds it: escapes decoded, bytes that are not UTF-8 replaced by U+FFFD,
// one per byte. It always returns a string of its own.
func Unquote(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), nil
	}
	out, err := AppendJava(make([]byte, 0, len(raw)), raw)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// AppendJava appends what Unquote returns for raw.
func AppendJava(dst, raw []byte) ([]byte, error) {
	for i := 0; i < len(raw); {
		r, n, err := NextRune(raw, i)
		if err != nil {
			return dst, err
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst, nil
}

// Hex4 reads the four hex digits at b[i:], either case.
func Hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
