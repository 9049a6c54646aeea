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
	// The tail in pieces of up to 16 bytes: the compiler inlines a
	// comparison with such a constant as two word loads, and calls
	// memequal for a longer one.
	layoutTail1 = `,"serializeTypeC`
	layoutTail2 = `urrentRPC":"JSON`
	layoutTail3 = `","version":`
	layoutTail  = layoutTail1 + layoutTail2 + layoutTail3
)

// layoutMaxExt bounds the extFields entries the fast path takes; a request
// header has a handful.
const layoutMaxExt = 8

// The parse keeps the header and its position in locals and passes them
// to small functions (layoutUint, layoutString) rather than methods on a
// struct: the position then stays in a register. Every literal is compared
// where it is named, against the constant: the compiler turns such a
// comparison into a few word loads, where a comparison against a string
// parameter calls memequal.

// layoutUint reads, at h[p:], 1 to 10 digits within int32 without a
// leading zero (0 itself aside), followed by a byte that is not a digit,
// and returns the value and the position after the digits. Where eight
// bytes are left it takes up to eight digits at once (swarDigits).
func layoutUint(h []byte, p int) (int32, int, bool) {
	// Up to three digits (code, flag, version) one at a time: cheaper
	// than the word for them.
	if len(h)-p >= 4 {
		d0 := h[p] - '0'
		d1 := h[p+1] - '0'
		if d0 <= 9 && d1 > 9 {
			return int32(d0), p + 1, true
		}
		if d0-1 <= 8 && d1 <= 9 {
			d2 := h[p+2] - '0'
			if d2 > 9 {
				return int32(d0)*10 + int32(d1), p + 2, true
			}
			if d3 := h[p+3] - '0'; d3 > 9 {
				return int32(d0)*100 + int32(d1)*10 + int32(d2), p + 3, true
			}
		}
	}
	var n uint64
	i := p
	if len(h)-p >= 8 {
		var k int
		n, k = swarDigits(binary.LittleEndian.Uint64(h[p:]))
		i += k
		if k < 8 {
			goto done
		}
	}
	for end := min(len(h), p+11); i < end; i++ {
		d := h[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + uint64(d)
	}
done:
	k := i - p
	// k == 11 is an eleventh digit; i == len(h) leaves nothing after it.
	if k == 0 || k > 10 || n > 1<<31-1 || (k > 1 && h[p] == '0') || i >= len(h) {
		return 0, 0, false
	}
	return int32(n), i, true
}

// layoutWideUint is layoutUint for the opaque, which a long-lived client
// sends with many digits (it counts its requests): up to eight digits in
// one word without trying the short forms first, then the ninth and tenth
// one at a time (cheaper than a second word). The tail that follows the
// opaque leaves the header 16 bytes at this point whenever it matches; a
// header shorter than that goes to layoutUint.
func layoutWideUint(h []byte, p int) (int32, int, bool) {
	if len(h)-p < 16 {
		return layoutUint(h, p)
	}
	x := binary.LittleEndian.Uint64(h[p:])
	var n uint64
	var k int
	if eightDigitsIn(x) {
		n, k = uint64(parseEightDigits(x)), 8
	} else {
		n, k = swarDigits(x)
	}
	if k == 8 {
		if d := h[p+8] - '0'; d <= 9 {
			n = n*10 + uint64(d)
			k++
			if d := h[p+9] - '0'; d <= 9 {
				n = n*10 + uint64(d)
				k++
				if h[p+10]-'0' <= 9 {
					k++
				}
			}
		}
	}
	// An eleventh digit, or a leading zero: not the layout's.
	if k == 0 || k > 10 || n > 1<<31-1 || (k > 1 && h[p] == '0') {
		return 0, 0, false
	}
	return int32(n), p + k, true
}

// eightDigitsIn reports whether the eight bytes of x are all ASCII digits:
// the cheap test for the word of a long number, where swarDigits counts
// them (the test and the conversion of simdjson's
// is_made_of_eight_digits_fast and parse_eight_digits_unrolled).
func eightDigitsIn(x uint64) bool {
	return x&0xf0f0f0f0f0f0f0f0|(x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0>>4 == 0x3333333333333333
}

// parseEightDigits is the value of the eight ASCII digits of x, the first
// in its low byte: adjacent digits, then pairs, then quads combined by one
// multiplication each.
func parseEightDigits(x uint64) uint32 {
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return uint32((x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32)
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

// layoutString finds, from h[p:], the closing quote of a string of
// printable ASCII without backslashes and returns its position. It looks
// at eight bytes at a time for the first that is a quote, a backslash or
// outside 0x20-0x7e (the usual zero-byte test, on the word xored with each
// byte looked for; a byte of 0x7f or more has its high bit set in x or in
// x plus one; each test exact for the lowest such byte, as a borrow or a
// carry only moves up), and at the last few bytes of the header one at a
// time.
func layoutString(h []byte, p int) (int, bool) {
	for len(h)-p >= 8 {
		x := binary.LittleEndian.Uint64(h[p:])
		q := x ^ ('"' * swarOnes)
		s := x ^ ('\\' * swarOnes)
		special := (((x - 0x20*swarOnes) & ^x) | x | (x + swarOnes) |
			((q - swarOnes) & ^q) | ((s - swarOnes) & ^s)) & swarHighs
		if special == 0 {
			p += 8
			continue
		}
		p += bits.TrailingZeros64(special) >> 3
		return p, h[p] == '"'
	}
	for ; p < len(h); p++ {
		c := h[p]
		if c == '"' {
			return p, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return 0, false
		}
	}
	return 0, false
}

// decodeLayout fills c from h when h has the fast path's layout and
// reports whether it did; when it did not, c is untouched. The extFields
// entries found are kept as offsets (key start, key end, value start,
// value end) until the whole header has matched.
func decodeLayout(h []byte, c *Command) bool {
	if len(h) < len(layoutCode) || string(h[:len(layoutCode)]) != layoutCode {
		return false
	}
	code, p, ok := layoutUint(h, len(layoutCode))
	if !ok {
		return false
	}
	var ext [layoutMaxExt][4]int32
	n := 0
	hasExt := len(h)-p >= len(layoutExt) && string(h[p:p+len(layoutExt)]) == layoutExt
	if hasExt {
		p += len(layoutExt)
		if p < len(h) && h[p] != '}' {
			for {
				if n == layoutMaxExt || p >= len(h) || h[p] != '"' {
					return false
				}
				ks := p + 1
				ke, ok := layoutString(h, ks)
				if !ok || len(h)-ke < 3 || h[ke+1] != ':' || h[ke+2] != '"' {
					return false
				}
				vs := ke + 3
				ve, ok := layoutString(h, vs)
				if !ok {
					return false
				}
				ext[n] = [4]int32{int32(ks), int32(ke), int32(vs), int32(ve)}
				n++
				p = ve + 1
				if p >= len(h) || h[p] != ',' {
					break
				}
				p++
			}
		}
		if len(h)-p < len(layoutFlag) || string(h[p:p+len(layoutFlag)]) != layoutFlag {
			return false
		}
		p += len(layoutFlag)
	} else if len(h)-p < len(layoutFlagNoEx) || string(h[p:p+len(layoutFlagNoEx)]) != layoutFlagNoEx {
		return false
	} else {
		p += len(layoutFlagNoEx)
	}
	flag, p, ok := layoutUint(h, p)
	if !ok || len(h)-p < len(layoutLang) || string(h[p:p+len(layoutLang)]) != layoutLang {
		return false
	}
	ls := p + len(layoutLang)
	le, ok := layoutString(h, ls)
	if !ok {
		return false
	}
	// The language's closing quote is the first byte of layoutOpaque.
	p = le
	if len(h)-p < len(layoutOpaque) || string(h[p:p+len(layoutOpaque)]) != layoutOpaque {
		return false
	}
	opaque, p, ok := layoutWideUint(h, p+len(layoutOpaque))
	if !ok || len(h)-p < len(layoutTail) || string(h[p:p+len(layoutTail1)]) != layoutTail1 ||
		string(h[p+len(layoutTail1):p+len(layoutTail1+layoutTail2)]) != layoutTail2 ||
		string(h[p+len(layoutTail1+layoutTail2):p+len(layoutTail)]) != layoutTail3 {
		return false
	}
	version, p, ok := layoutUint(h, p+len(layoutTail))
	if !ok || p != len(h)-1 || h[p] != '}' {
		return false
	}
	c.Code, c.Flag, c.Opaque, c.Version = code, flag, opaque, version
	c.Language = LanguageByName(bytesString(h[ls:le]))
	if hasExt {
		c.extClear()
		c.HasExt = true
		for _, e := range ext[:n] {
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
