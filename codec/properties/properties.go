// properties.go holds the reader of the text, as Properties.load reads it,
// and the writer whose text it reads back unchanged.

package properties

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Property is one key/value pair.
type Property struct {
	Key   string
	Value string
	// Line is the 1-based line of the text where the (possibly continued)
	// entry starts; 0 when it came from elsewhere (a command-line flag).
	Line int
	// Origin names where it came from when not from a text (the
	// environment variable that set it), for messages.
	Origin string
}

// Parse reads r the way Java's Properties.load does: '#' and '!'
// comment lines, '=', ':' or whitespace between key and value, leading
// whitespace ignored, a line ending in an odd number of backslashes continued
// on the next one, and the escapes \t \n \r \f \uXXXX (any other \x is x).
// Properties are returned in file order; a repeated key appears twice and the
// later one wins when applied, like Java's Hashtable.
//
// One deliberate difference: Java's load(InputStream) decodes ISO-8859-1;
// here the bytes are taken as UTF-8, which is what every tool that writes these
// files produces (and \uXXXX escapes still work for anything else).
func Parse(r io.Reader) ([]Property, error) {
	br := bufio.NewReader(r)
	lr := lineReader{r: br, line: 1}
	var out []Property
	for {
		logical, start, err := lr.next()
		if err != nil {
			return out, fmt.Errorf("properties: line %d: %w", lr.line, err)
		}
		if logical == nil {
			return out, nil
		}
		p, err := splitProperty(logical)
		if err != nil {
			return out, fmt.Errorf("properties: line %d: %w", start, err)
		}
		p.Line = start
		out = append(out, p)
	}
}

// lineReader yields logical lines: comments and blank lines dropped,
// continuations joined, escapes still in place (they are resolved after the
// key/value split so that "\=" keeps its meaning).
type lineReader struct {
	r    *bufio.Reader
	line int // number of the next physical line to be read
	buf  []byte
	// crlf: the last physical line ended in "\r\n". Java tells that ending
	// from a lone '\n' or '\r' only for a lone backslash line at end of
	// input (see next).
	crlf bool

	// pos is the offset in the input of the next byte to be read. With
	// track set, next also records where each piece of buf came from
	// (segs) and where the entry's last physical line ends (end), so that
	// a Document can edit the entry in place.
	pos   int
	track bool
	segs  []segment
	end   int
}

// segment says that buf[from:] (up to the next segment) was read from
// input offset raw on.
type segment struct{ from, raw int }

// rawOffset maps an offset into the last logical line to the input.
func (lr *lineReader) rawOffset(i int) int {
	s := lr.segs[0]
	for _, t := range lr.segs[1:] {
		if t.from > i {
			break
		}
		s = t
	}
	return s.raw + i - s.from
}

// next returns the next logical line and the physical line it started on, or a
// nil slice at end of input. The slice is valid until the following call.
func (lr *lineReader) next() ([]byte, int, error) {
	for {
		physAt := lr.pos
		phys, eof, err := lr.physical()
		if err != nil {
			return nil, 0, err
		}
		start := lr.line
		lr.line++
		n := len(phys)
		phys = trimLeadingSpace(phys)
		physAt += n - len(phys)
		if len(phys) == 0 || phys[0] == '#' || phys[0] == '!' {
			// Java ends a comment at the end of its physical line even when it
			// ends with a backslash.
			if eof {
				return nil, 0, nil
			}
			continue
		}
		if len(phys) == 1 && phys[0] == '\\' {
			// A lone backslash continues a logical line that holds nothing
			// yet, so Java's reader is still at the start of one: blank
			// lines are skipped and a '#' or '!' line is a comment. It
			// reads an empty entry only when the backslash continues into
			// end of input, and not even then after "\r\n", whose '\n'
			// it consumes after its end-of-input check.
			if !eof {
				continue
			}
			if lr.crlf {
				return nil, 0, nil
			}
		}
		lr.buf = append(lr.buf[:0], phys...)
		if lr.track {
			lr.segs = append(lr.segs[:0], segment{0, physAt})
			lr.end = physAt + len(phys)
		}
		// Like Java, only the last physical line's own backslashes decide
		// whether the entry goes on. Counting over the joined buffer gives
		// the same answer (the removed backslash leaves an even run) but
		// rescans a run of backslash-only lines each time: quadratic, and a
		// megabyte of them took half a minute.
		last := phys
		for !eof && oddTrailingBackslashes(last) {
			lr.buf = lr.buf[:len(lr.buf)-1]
			physAt = lr.pos
			phys, eof, err = lr.physical()
			if err != nil {
				return nil, 0, err
			}
			lr.line++
			// A continuation line is never a comment, and leading whitespace
			// of it is dropped; an empty one ends the entry.
			last = trimLeadingSpace(phys)
			if lr.track {
				at := physAt + len(phys) - len(last)
				lr.segs = append(lr.segs, segment{len(lr.buf), at})
				lr.end = at + len(last)
			}
			lr.buf = append(lr.buf, last...)
		}
		if eof && oddTrailingBackslashes(last) {
			// Java drops a backslash that continues into end of input.
			lr.buf = lr.buf[:len(lr.buf)-1]
		}
		return lr.buf, start, nil
	}
}

// physical reads one physical line without its terminator (\n, \r or \r\n).
// eof reports that no further line follows.
func (lr *lineReader) physical() (line []byte, eof bool, err error) {
	var b []byte
	lr.crlf = false
	for {
		c, err := lr.r.ReadByte()
		if err == io.EOF {
			return b, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		lr.pos++
		switch c {
		case '\n':
			_, perr := lr.r.Peek(1)
			return b, perr == io.EOF, nil
		case '\r':
			if nb, perr := lr.r.Peek(1); perr == nil && nb[0] == '\n' {
				_, _ = lr.r.ReadByte()
				lr.pos++
				lr.crlf = true
			}
			_, perr := lr.r.Peek(1)
			return b, perr == io.EOF, nil
		default:
			b = append(b, c)
		}
	}
}

func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingSpace(b []byte) []byte {
	for len(b) > 0 && isPropSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func oddTrailingBackslashes(b []byte) bool {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty finds the key/value boundary exactly like Properties.load0 and
// then resolves escapes on each side.
func splitProperty(line []byte) (Property, error) {
	p, _, _, err := splitAt(line)
	return p, err
}

// splitAt is splitProperty that also returns where the key ends and the
// value starts in line.
func splitAt(line []byte) (p Property, keyLen, valueStart int, err error) {
	keyLen, valueStart = 0, len(line)
	hasSep, escaped := false, false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !escaped {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if isPropSpace(c) && !escaped {
			valueStart = keyLen + 1
			break
		}
		escaped = c == '\\' && !escaped
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropSpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyLen])
	if err != nil {
		return Property{}, 0, 0, fmt.Errorf("key: %w", err)
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return Property{}, 0, 0, fmt.Errorf("value of %q: %w", key, err)
	}
	return Property{Key: key, Value: value}, keyLen, valueStart, nil
}

// unescape is Java's loadConvert. A \uXXXX pair forming a UTF-16 surrogate
// pair becomes one rune; a lone surrogate becomes U+FFFD since Go strings hold
// UTF-8.
func unescape(b []byte) (string, error) {
	i := 0
	for i < len(b) && b[i] != '\\' {
		i++
	}
	if i == len(b) {
		return string(b), nil
	}
	var sb strings.Builder
	sb.Grow(len(b))
	sb.Write(b[:i])
	pendingHigh := rune(-1)
	flushHigh := func() {
		if pendingHigh >= 0 {
			sb.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i < len(b) {
		c := b[i]
		i++
		if c != '\\' {
			flushHigh()
			sb.WriteByte(c)
			continue
		}
		if i == len(b) {
			// A logical line never ends in an odd backslash (it would have
			// been a continuation), so this is defensive only.
			break
		}
		c = b[i]
		i++
		if c != 'u' {
			flushHigh()
			switch c {
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			case 'n':
				c = '\n'
			case 'f':
				c = '\f'
			}
			sb.WriteByte(c)
			continue
		}
		if len(b)-i < 4 {
			return "", fmt.Errorf("malformed \\uxxxx encoding %q", b[i-2:])
		}
		var r rune
		for _, h := range b[i : i+4] {
			d, ok := hexDigit(h)
			if !ok {
				return "", fmt.Errorf("malformed \\uxxxx encoding %q", b[i-2:i+4])
			}
			r = r<<4 | d
		}
		i += 4
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			flushHigh()
			pendingHigh = r
		case utf16.IsSurrogate(r):
			if pendingHigh >= 0 {
				sb.WriteRune(utf16.DecodeRune(pendingHigh, r))
				pendingHigh = -1
			} else {
				sb.WriteRune(utf8.RuneError)
			}
		default:
			flushHigh()
			sb.WriteRune(r)
		}
	}
	flushHigh()
	return sb.String(), nil
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// AppendKey writes key so that Parse reads it back unchanged.
func AppendKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch c {
		case '=', ':', ' ', '\\':
			dst = append(dst, '\\', c)
		case '#', '!':
			if i == 0 {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		default:
			dst = appendControlEscaped(dst, c)
		}
	}
	return dst
}

// AppendValue writes value the way Java's GET_NAMESRV_CONFIG does (raw)
// except for the few bytes that would not read back the same: backslashes,
// line breaks, and leading whitespace. Ordinary values are byte-identical to
// Java's output (and to what mqadmin sends, which writes them raw).
func AppendValue(dst []byte, value string) []byte {
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case i == 0 && c == ' ':
			dst = append(dst, '\\', ' ')
		case c == '\t' || c == '\f':
			if i == 0 {
				dst = appendControlEscaped(dst, c)
			} else {
				dst = append(dst, c)
			}
		default:
			dst = appendControlEscaped(dst, c)
		}
	}
	return dst
}

func appendControlEscaped(dst []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, c)
}

// Append appends props as "key=value\n" lines that Parse, and Java's
// Properties.load, read back to the same pairs, in the given order.
func Append(dst []byte, props []Property) []byte {
	for _, p := range props {
		dst = AppendKey(dst, p.Key)
		dst = append(dst, '=')
		dst = AppendValue(dst, p.Value)
		dst = append(dst, '\n')
	}
	return dst
}
