// json_layout.go holds the JSON header's fast path: the exact layout Java's
// fastjson (and this project's encoder) writes for a request without remark
// or escapes, matched as literals in one pass. Anything else, a space or a
// reordered key included, is left to the scanner, which gives the same
// result (a fuzz check holds the two to that).

package codec

import (
	"encoding/binary"
	"math/bits"
)

// Fixed parts of the layout, in fastjson's alphabetical key order.
const (
	layoutCode     = `{"code":`
	layoutExt      = `,"extFields":{`
	layoutFlag     = `},"flag":`
	layoutFlagNoEx = `,"flag":`
	layoutLang     = `,"language":"`
	layoutOpaque   = `","opaque":`
	layoutTail     = `,"serializeTypeCurrentRPC":"JSON","version":`
)

// layoutMaxExt bounds the extFields entries the fast path takes; a request
// header has a handful.
const layoutMaxExt = 8

// layout is a header being matched: the position, and the ext entries
// found, kept as offsets until the whole header has matched. Every
// literal is compared where it is named, against the constant: the
// compiler turns such a comparison into a few word loads, where a
// comparison against a string parameter calls memequal.
type layout struct {
	b   []byte
	p   int
	n   int
	ext [layoutMaxExt][4]int // key start, key end, value start, value end
}

// uint reads 1 to 10 digits within int32 without a leading zero (0 itself
// aside), followed by a byte that is not a digit. Where eight bytes are
// left it takes up to eight digits at once (swarDigits); a tenth of a
// reply's cost was this loop one digit at a time.
func (l *layout) uint() (int32, bool) {
	b, p := l.b, l.p
	var n uint64
	i := p
	if len(b)-p >= 8 {
		var k int
		n, k = swarDigits(binary.LittleEndian.Uint64(b[p:]))
		i += k
		if k < 8 {
			goto done
		}
	}
	for end := min(len(b), p+11); i < end; i++ {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + uint64(d)
	}
done:
	k := i - p
	// k == 11 is an eleventh digit; i == len(b) leaves nothing after it.
	if k == 0 || k > 10 || n > 1<<31-1 || (k > 1 && b[p] == '0') || i >= len(b) {
		return 0, false
	}
	l.p = i
	return int32(n), true
}

// SWAR masks: a word of 8 equal bytes, and their high bits.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// swarDigits reads the ASCII digits x starts with (its bytes in memory
// order, little-endian): their value and their count, 0 to 8. A byte is a
// digit when its high nibble is 3 and adding 6 keeps it so; a carry out of
// a byte that is not a digit only reaches the bytes after it. The digits
// are then moved to the top of the word, behind zero bytes that read as
// leading zeros, and combined two, four and eight at a time.
func swarDigits(x uint64) (uint64, int) {
	notDigit := ((x & 0xf0f0f0f0f0f0f0f0) ^ 0x3030303030303030) |
		(((x + 0x0606060606060606) & 0xf0f0f0f0f0f0f0f0) ^ 0x3030303030303030)
	k := bits.TrailingZeros64(notDigit) >> 3
	if k == 0 {
		return 0, 0
	}
	t := (x - 0x3030303030303030) << (64 - 8*uint(k))
	t = t*10 + t>>8
	t = ((t&0x000000ff000000ff)*(100+(1000000<<32)) + (t>>16&0x000000ff000000ff)*(1+(10000<<32))) >> 32
	return t, k
}

// plain moves past the characters of a string up to its closing quote,
// taking printable ASCII without backslashes only. It looks at eight bytes
// at a time for the first that is a quote, a backslash or outside
// 0x20-0x7e (the usual zero-byte test, on the word xored with each byte
// looked for: exact for the lowest such byte), and at the last few bytes
// of the header one at a time.
func (l *layout) plain() (int, int, bool) {
	b := l.b
	start := l.p
	p := start
	for len(b)-p >= 8 {
		x := binary.LittleEndian.Uint64(b[p:])
		q := x ^ ('"' * swarOnes)
		s := x ^ ('\\' * swarOnes)
		d := x ^ (0x7f * swarOnes)
		special := (((x - 0x20*swarOnes) & ^x) | x |
			((q - swarOnes) & ^q) | ((s - swarOnes) & ^s) | ((d - swarOnes) & ^d)) & swarHighs
		if special == 0 {
			p += 8
			continue
		}
		p += bits.TrailingZeros64(special) >> 3
		if b[p] != '"' {
			return 0, 0, false
		}
		l.p = p + 1
		return start, p, true
	}
	for p < len(b) {
		c := b[p]
		if c == '"' {
			l.p = p + 1
			return start, p, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return 0, 0, false
		}
		p++
	}
	return 0, 0, false
}

// rest is what is left of the header after l.p.
func (l *layout) rest() []byte { return l.b[l.p:] }

// decodeLayout fills c from h when h has the fast path's layout and
// reports whether it did; when it did not, c is untouched.
func decodeLayout(h []byte, c *Command) bool {
	l := layout{b: h}
	if r := l.rest(); len(r) < len(layoutCode) || string(r[:len(layoutCode)]) != layoutCode {
		return false
	}
	l.p += len(layoutCode)
	code, ok := l.uint()
	if !ok {
		return false
	}
	hasExt := false
	if r := l.rest(); len(r) >= len(layoutExt) && string(r[:len(layoutExt)]) == layoutExt {
		hasExt = true
		l.p += len(layoutExt)
		if l.p < len(h) && h[l.p] != '}' {
			for {
				if l.n == layoutMaxExt || l.p >= len(h) || h[l.p] != '"' {
					return false
				}
				l.p++
				e := &l.ext[l.n]
				if e[0], e[1], ok = l.plain(); !ok {
					return false
				}
				if r := l.rest(); len(r) < 2 || r[0] != ':' || r[1] != '"' {
					return false
				}
				l.p += 2
				if e[2], e[3], ok = l.plain(); !ok {
					return false
				}
				l.n++
				if l.p >= len(h) || h[l.p] != ',' {
					break
				}
				l.p++
			}
		}
		if r := l.rest(); len(r) < len(layoutFlag) || string(r[:len(layoutFlag)]) != layoutFlag {
			return false
		}
		l.p += len(layoutFlag)
	} else if r := l.rest(); len(r) < len(layoutFlagNoEx) || string(r[:len(layoutFlagNoEx)]) != layoutFlagNoEx {
		return false
	} else {
		l.p += len(layoutFlagNoEx)
	}
	flag, ok := l.uint()
	if !ok {
		return false
	}
	if r := l.rest(); len(r) < len(layoutLang) || string(r[:len(layoutLang)]) != layoutLang {
		return false
	}
	l.p += len(layoutLang)
	ls, le, ok := l.plain()
	if !ok {
		return false
	}
	l.p--
	if r := l.rest(); len(r) < len(layoutOpaque) || string(r[:len(layoutOpaque)]) != layoutOpaque {
		return false
	}
	l.p += len(layoutOpaque)
	opaque, ok := l.uint()
	if !ok {
		return false
	}
	if r := l.rest(); len(r) < len(layoutTail) || string(r[:len(layoutTail)]) != layoutTail {
		return false
	}
	l.p += len(layoutTail)
	version, ok := l.uint()
	if !ok || l.p != len(h)-1 || h[l.p] != '}' {
		return false
	}
	c.Code, c.Flag, c.Opaque, c.Version = code, flag, opaque, version
	c.Language = LanguageByName(bytesString(h[ls:le]))
	if hasExt {
		c.extClear()
		c.HasExt = true
		for _, e := range l.ext[:l.n] {
			key, v := bytesString(h[e[0]:e[1]]), bytesString(h[e[2]:e[3]])
			if c.extPlain(key) {
				c.extPutPlain(key, v)
			} else {
				c.extPutIndexed(key, v)
			}
		}
	}
	return true
}
