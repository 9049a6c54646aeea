// The JSON header parser: a hand-written scanner over the flat object Java's
// fastjson writes, filling a Command without maps, reflection or copies.

package codec

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/rocketns/rocketns/codec/jsontext"
)

// maxSkipDepth bounds the nesting of unknown values we skip, so a hostile
// header cannot grow the stack; no real sender nests at all.
const maxSkipDepth = 64

// jsonScanner walks one header. Unescaped strings are appended to c.scratch,
// which the first escaped string sizes to the rest of the header: an
// unescaped string is never longer than its escaped form, so scratch never
// reallocates while earlier strings still point into it, and a header
// without escapes (almost every one) needs none.
type jsonScanner struct {
	buf     []byte
	pos     int
	c       *Command
	entries int // extFields entries read so far, for MaxExtEntries
	// shortcuts turns on knownKey and shortInt, which every decode takes;
	// a scanner without them is the plain reference the fuzz tests hold
	// the shortcuts (and decodeLayout) to.
	shortcuts bool
}

func (s *jsonScanner) fail(format string, args ...any) error {
	return &DecodeError{Reason: ReasonBadJSONHeader, Err: fmt.Errorf("offset %d: %s", s.pos, fmt.Sprintf(format, args...))}
}

func decodeJSONHeader(h []byte, c *Command) error {
	if decodeLayout(h, c) {
		return nil
	}
	s := jsonScanner{buf: h, c: c, shortcuts: true}
	return s.header()
}

func (s *jsonScanner) skipWS() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *jsonScanner) peek() byte {
	if s.pos < len(s.buf) && s.buf[s.pos] > ' ' {
		return s.buf[s.pos] // no space to skip, as in every compact header
	}
	s.skipWS()
	if s.pos >= len(s.buf) {
		return 0
	}
	return s.buf[s.pos]
}

func (s *jsonScanner) expect(b byte) error {
	if s.peek() != b {
		return s.fail("want %q", b)
	}
	s.pos++
	return nil
}

// header parses the top-level object. Keys may come in any order; unknown
// keys and nulls are skipped as fastjson does; a repeated key wins last.
func (s *jsonScanner) header() error {
	c := s.c
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return s.end()
	}
	for {
		if s.peek() != '"' {
			return s.fail("want a key")
		}
		k := s.knownKey()
		if k == keyNone {
			key, err := s.str()
			if err != nil {
				return err
			}
			k = keyKindOf(key)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		var err error
		if s.peek() == 'n' {
			// null leaves the Java field at its default.
			if err := s.literal("null"); err != nil {
				return err
			}
			if k == keyExtFields {
				c.extClear()
				c.HasExt = false
			}
		} else {
			switch k {
			case keyCode:
				c.Code, err = s.int32()
			case keyFlag:
				c.Flag, err = s.int32()
			case keyOpaque:
				c.Opaque, err = s.int32()
			case keyVersion:
				c.Version, err = s.int32()
			case keyLanguage:
				err = s.language()
			case keyRemark:
				if s.peek() != '"' {
					return s.fail("remark is not a string")
				}
				c.Remark, err = s.str()
			case keyExtFields:
				err = s.ext()
			default:
				// serializeTypeCurrentRPC lands here too: the frame's type
				// byte is what counts, as in Java.
				err = s.skip(0)
			}
			if err != nil {
				return err
			}
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return s.end()
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

func (s *jsonScanner) end() error {
	if s.peek() != 0 {
		return s.fail("data after the header object")
	}
	return nil
}

// language accepts the enum name or, as fastjson does, its ordinal. Names
// and ordinals outside the enum become LanguageUnknown (Java: null).
func (s *jsonScanner) language() error {
	if s.peek() == '"' {
		name, err := s.str()
		if err != nil {
			return err
		}
		s.c.Language = LanguageByName(name)
		return nil
	}
	n, err := s.int32()
	if err != nil {
		return err
	}
	s.c.Language = LanguageUnknown
	if n >= 0 && n <= 0xFF {
		if _, ok := LanguageName(byte(n)); ok {
			s.c.Language = byte(n)
		}
	}
	return nil
}

// ext parses the extFields object. Values are strings in practice; numbers
// and booleans are kept as their literal text (fastjson would coerce them),
// nested objects and arrays are rejected since no header field can hold one.
func (s *jsonScanner) ext() error {
	c := s.c
	if err := s.expect('{'); err != nil {
		return err
	}
	// A repeated extFields key replaces the whole map, as the Java setter does.
	c.extClear()
	c.HasExt = true
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.entries++; s.entries > MaxExtEntries {
			return s.fail("more than %d extFields entries", MaxExtEntries)
		}
		if s.peek() != '"' {
			return s.fail("want an extFields key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		var v string
		null := false
		switch b := s.peek(); {
		case b == '"':
			if v, err = s.str(); err != nil {
				return err
			}
		case b == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
			null = true
		case b == 't' || b == 'f' || b == '-' || (b >= '0' && b <= '9'):
			start := s.pos
			if err := s.skip(0); err != nil {
				return err
			}
			v = bytesString(s.buf[start:s.pos])
		default:
			return s.fail("extFields value for %q is not a string, number or boolean", key)
		}
		switch {
		case null:
			c.extDelete(key)
		case c.extPlain(key):
			c.extPutPlain(key, v)
		default:
			c.extPutIndexed(key, v)
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("want ',' or '}' in extFields")
		}
	}
}

// The header fields the scanner tells apart: keySkip is any other key,
// whose value is skipped; keyNone is knownKey's "not matched".
const (
	keyNone = iota
	keySkip
	keyCode
	keyExtFields
	keyFlag
	keyLanguage
	keyOpaque
	keyRemark
	keyVersion
)

// headerKeys are the header's field names as written, quotes included, by
// their first letter: knownKey matches them without scanning.
var headerKeys = [...]struct {
	lit  string
	kind int
}{
	'c': {`"code"`, keyCode}, 'e': {`"extFields"`, keyExtFields}, 'f': {`"flag"`, keyFlag},
	'l': {`"language"`, keyLanguage}, 'o': {`"opaque"`, keyOpaque}, 'r': {`"remark"`, keyRemark},
	's': {`"serializeTypeCurrentRPC"`, keySkip}, 'v': {`"version"`, keyVersion},
}

// keyKindOf is the field a key scanned as a string names.
func keyKindOf(key string) int {
	switch key {
	case "code":
		return keyCode
	case "extFields":
		return keyExtFields
	case "flag":
		return keyFlag
	case "language":
		return keyLanguage
	case "opaque":
		return keyOpaque
	case "remark":
		return keyRemark
	case "version":
		return keyVersion
	}
	return keySkip
}

// knownKey moves past the key at s.pos when it is one of headerKeys written
// without escapes, which is how every sender writes them, and returns its
// kind; otherwise it moves nothing and returns keyNone, and the caller
// scans the key as any string.
func (s *jsonScanner) knownKey() int {
	if !s.shortcuts || s.pos+1 >= len(s.buf) {
		return keyNone
	}
	i := s.buf[s.pos+1]
	if int(i) >= len(headerKeys) {
		return keyNone
	}
	k := headerKeys[i]
	if k.lit == "" || len(s.buf)-s.pos < len(k.lit) || string(s.buf[s.pos:s.pos+len(k.lit)]) != k.lit {
		return keyNone
	}
	s.pos += len(k.lit)
	return k.kind
}

// int32 parses an integer literal into the int32 Java fields hold.
func (s *jsonScanner) int32() (int32, error) {
	s.skipWS()
	if v, ok := s.shortInt(); ok {
		return v, nil
	}
	start := s.pos
	if err := s.number(); err != nil {
		return 0, err
	}
	whole := s.buf[start:s.pos]
	lit := whole
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var n int64
	for _, b := range lit {
		if b < '0' || b > '9' {
			s.pos = start
			return 0, s.fail("%q is not an integer", whole)
		}
		n = n*10 + int64(b-'0')
		if n > 1<<31 {
			s.pos = start
			return 0, s.fail("integer out of int32 range")
		}
	}
	if neg {
		n = -n
	}
	if n > 1<<31-1 {
		s.pos = start
		return 0, s.fail("integer out of int32 range")
	}
	return int32(n), nil
}

// shortInt reads the common case of int32 without a second pass: up to 10
// digits within int32, no sign, no leading zero but for 0 itself, followed
// by a delimiter (',' '}' or space). Anything else is left to the full path.
func (s *jsonScanner) shortInt() (int32, bool) {
	b, p := s.buf, s.pos
	if !s.shortcuts || p >= len(b) || b[p] < '0' || b[p] > '9' {
		return 0, false
	}
	var n int64
	end := min(len(b), p+10)
	q := p
	for q < end && b[q] >= '0' && b[q] <= '9' {
		n = n*10 + int64(b[q]-'0')
		q++
	}
	if q >= len(b) || n > 1<<31-1 || (b[p] == '0' && q > p+1) {
		return 0, false
	}
	switch b[q] {
	case ',', '}', ' ', '\t', '\n', '\r':
		s.pos = q
		return int32(n), true
	}
	return 0, false
}

// number validates a JSON number at s.pos and moves past it.
func (s *jsonScanner) number() error {
	b, p := s.buf, s.pos
	if p < len(b) && b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
	default:
		return s.fail("want a number")
	}
	if p < len(b) && b[p] == '.' {
		p++
		d := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == d {
			s.pos = p
			return s.fail("no digits after '.'")
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		d := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == d {
			s.pos = p
			return s.fail("no digits in exponent")
		}
	}
	s.pos = p
	return nil
}

func (s *jsonScanner) literal(lit string) error {
	if len(s.buf)-s.pos < len(lit) || string(s.buf[s.pos:s.pos+len(lit)]) != lit {
		return s.fail("want %s", lit)
	}
	s.pos += len(lit)
	return nil
}

// skip moves past one value of any kind, checking its syntax.
func (s *jsonScanner) skip(depth int) error {
	switch b := s.peek(); {
	case b == '"':
		_, err := s.strEnd()
		return err
	case b == '{' || b == '[':
		if depth >= maxSkipDepth {
			return s.fail("nesting deeper than %d", maxSkipDepth)
		}
		s.pos++
		closer := byte('}')
		if b == '[' {
			closer = ']'
		}
		if s.peek() == closer {
			s.pos++
			return nil
		}
		for {
			if b == '{' {
				if s.peek() != '"' {
					return s.fail("want a key")
				}
				if _, err := s.strEnd(); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case closer:
				s.pos++
				return nil
			default:
				return s.fail("want ',' or %q", closer)
			}
		}
	case b == 't':
		return s.literal("true")
	case b == 'f':
		return s.literal("false")
	case b == 'n':
		return s.literal("null")
	case b == '-' || (b >= '0' && b <= '9'):
		return s.number()
	}
	return s.fail("want a value")
}

// strEnd validates the string whose opening quote is at s.pos, moves past
// its closing quote and reports whether it must be decoded rather than
// viewed: it holds escapes, or bytes that are not UTF-8, which read as
// U+FFFD as Java's decoder reads them. Two keys of different invalid bytes
// are then one key, last wins, as in Java, and the header written back
// (U+FFFD for each) reads the same.
func (s *jsonScanner) strEnd() (decode bool, err error) {
	p := s.pos + 1
	var high uint64
	// Eight bytes at a time while none is a quote or a backslash.
	for p+8 <= len(s.buf) {
		w := binary.LittleEndian.Uint64(s.buf[p:])
		if hasByte(w, '"')|hasByte(w, '\\') != 0 {
			break
		}
		high |= w
		p += 8
	}
	for p < len(s.buf) {
		switch b := s.buf[p]; b {
		case '"':
			if !decode && high&0x8080808080808080 != 0 && !utf8.Valid(s.buf[s.pos+1:p]) {
				decode = true
			}
			s.pos = p + 1
			return decode, nil
		case '\\':
			decode = true
			_, n, err := jsontext.NextRune(s.buf, p)
			if err != nil {
				s.pos = p
				return false, s.fail("%v", err)
			}
			p += n
		default:
			high |= uint64(b)
			p++
		}
	}
	return false, s.fail("unterminated string")
}

// hasByte is non-zero when a byte of w is b (the classic SWAR zero-byte
// test on w with b's bytes cleared).
func hasByte(w uint64, b byte) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	x := w ^ (lo * uint64(b))
	return (x - lo) & ^x & hi
}

// str returns the string at s.pos: a view of the header when it has no
// escapes and is UTF-8, else its decoded form in c.scratch.
func (s *jsonScanner) str() (string, error) {
	start := s.pos + 1
	decode, err := s.strEnd()
	if err != nil {
		return "", err
	}
	raw := s.buf[start : s.pos-1]
	if !decode {
		return bytesString(raw), nil
	}
	c := s.c
	if len(c.scratch) == 0 && cap(c.scratch) < len(s.buf)-start {
		c.scratch = make([]byte, 0, len(s.buf)-start)
	}
	from := len(c.scratch)
	// strEnd has validated every escape.
	if utf8.Valid(raw) {
		c.scratch, _ = jsontext.AppendUnescaped(c.scratch, raw)
	} else {
		c.scratch, _ = jsontext.AppendJava(c.scratch, raw)
	}
	out := c.scratch[from:]
	if len(out) == 0 {
		return "", nil
	}
	return unsafe.String(&out[0], len(out)), nil
}
