// Lenient JSON input: quoting of the bare object keys fastjson writes, an
// in-order walk over object members, and a re-encoder that rewrites a JSON
// value in either dialect.

package body

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/rocketns/rocketns/codec/jsontext"
)

// maxDepth bounds nesting in the re-encoder and the value skipper so a
// hostile body cannot exhaust the stack; real bodies nest at most 6 deep.
const maxDepth = 512

var (
	errUnexpectedEnd = jsontext.ErrUnexpectedEnd
	errTooDeep       = errors.New("JSON nested too deeply")
)

// Lenient returns src with every bare object key quoted ({0:"a"} becomes
// {"0":"a"}), so a strict decoder accepts what fastjson writes for maps with
// Integer/Long keys (currIdMap, hostedQueues, brokerAddrs). Keys made of
// letters, digits, '_', '$', '.', '+' and '-' count as bare keys.
//
// When src has no bare key, Lenient returns src itself and allocates
// nothing; otherwise it returns a new buffer and src is left untouched.
// Malformed input is passed on unchanged for the decoder to reject.
func Lenient(src []byte) []byte {
	if !lenientScan(src, nil) {
		return src
	}
	out := make([]byte, 0, len(src)+len(src)/16+8)
	lenientScan(src, &out)
	return out
}

func isBareKeyByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
		c == '_' || c == '$' || c == '.' || c == '+' || c == '-'
}

// lenientScan walks src outside strings, tracking whether the next token
// is an object key. With out == nil it only reports whether a bare key
// exists (stopping at the first); otherwise it writes the quoted form to
// *out and reports the same.
func lenientScan(src []byte, out *[]byte) bool {
	// inObject[len-1] tells whether the innermost container is an object.
	var stackBuf [16]bool
	inObject := stackBuf[:0]
	expectKey := false
	found := false
	emitted := 0 // src[:emitted] has been copied to *out
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case '"':
			end := skipString(src, i)
			if end < 0 {
				i = len(src)
				continue
			}
			i = end
			expectKey = false
			continue
		case '{':
			inObject = append(inObject, true)
			expectKey = true
		case '[':
			inObject = append(inObject, false)
			expectKey = false
		case '}', ']':
			if len(inObject) > 0 {
				inObject = inObject[:len(inObject)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
		case ':':
			expectKey = false
		case ' ', '\t', '\n', '\r':
		default:
			if expectKey && isBareKeyByte(c) {
				j := i + 1
				for j < len(src) && isBareKeyByte(src[j]) {
					j++
				}
				found = true
				if out == nil {
					return true
				}
				*out = append(*out, src[emitted:i]...)
				*out = append(*out, '"')
				*out = append(*out, src[i:j]...)
				*out = append(*out, '"')
				emitted = j
				i = j
				expectKey = false
				continue
			}
			expectKey = false
		}
		i++
	}
	if out != nil {
		*out = append(*out, src[emitted:]...)
	}
	return found
}

// skipString returns the index just past the string whose opening quote is
// at src[i], or -1 when it is not terminated.
func skipString(src []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p > i && src[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

func skipWS(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the JSON value starting at
// src[i] (after whitespace). It checks structure loosely: the decoder that
// reads the value validates it.
func skipValue(src []byte, i int) (int, error) {
	i = skipWS(src, i)
	if i >= len(src) {
		return 0, errUnexpectedEnd
	}
	switch src[i] {
	case '"':
		end := skipString(src, i)
		if end < 0 {
			return 0, errUnexpectedEnd
		}
		return end, nil
	case '{', '[':
		depth := 0
		for i < len(src) {
			switch src[i] {
			case '"':
				end := skipString(src, i)
				if end < 0 {
					return 0, errUnexpectedEnd
				}
				i = end
				continue
			case '{', '[':
				depth++
				if depth > maxDepth {
					return 0, errTooDeep
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errUnexpectedEnd
	default:
		j := i
		for j < len(src) && isBareKeyByte(src[j]) {
			j++
		}
		if j == i {
			return 0, fmt.Errorf("unexpected byte %q at offset %d", src[i], i)
		}
		return j, nil
	}
}

// isNull reports whether b holds the JSON literal null (after whitespace).
func isNull(b []byte) bool {
	if len(b) == 0 || b[0] != 'n' && b[0] > ' ' {
		return false
	}
	return string(bytes.TrimSpace(b)) == "null"
}

// memberIter walks the members of one JSON object in document order:
//
//	it := memberIter{obj: b}
//	for it.next() { use(it.key, it.val) }
//	if it.err != nil { ... }
//
// key is the raw key between its quotes (escapes kept), val the raw value;
// both point into obj. A JSON null counts as an empty object.
type memberIter struct {
	obj      []byte
	pos      int
	started  bool
	done     bool
	key, val []byte
	err      error
}

func (it *memberIter) fail(err error) bool {
	it.err = err
	return false
}

func (it *memberIter) next() bool {
	obj := it.obj
	i := it.pos
	if !it.started {
		it.started = true
		if isNull(obj) {
			return false
		}
		i = skipWS(obj, 0)
		if i >= len(obj) || obj[i] != '{' {
			return it.fail(errors.New("expected a JSON object"))
		}
		i = skipWS(obj, i+1)
		if i < len(obj) && obj[i] == '}' {
			it.done = true
			return false
		}
	} else {
		if it.err != nil || it.done {
			return false
		}
		i = skipWS(obj, i)
		if i >= len(obj) {
			return it.fail(errUnexpectedEnd)
		}
		switch obj[i] {
		case ',':
			i = skipWS(obj, i+1)
		case '}':
			it.done = true
			return false
		default:
			return it.fail(fmt.Errorf("expected ',' or '}' at offset %d", i))
		}
	}
	if i >= len(obj) || obj[i] != '"' {
		return it.fail(fmt.Errorf("expected an object key at offset %d", i))
	}
	end := skipString(obj, i)
	if end < 0 {
		return it.fail(errUnexpectedEnd)
	}
	it.key = obj[i+1 : end-1]
	i = skipWS(obj, end)
	if i >= len(obj) || obj[i] != ':' {
		return it.fail(fmt.Errorf("expected ':' at offset %d", i))
	}
	vstart := skipWS(obj, i+1)
	vend, err := skipValue(obj, vstart)
	if err != nil {
		return it.fail(err)
	}
	it.val = obj[vstart:vend]
	it.pos = vend
	return true
}

// forEachMember calls fn for every member of the object obj, in order; see
// memberIter for what key and val hold.
func forEachMember(obj []byte, fn func(key, val []byte) error) error {
	it := memberIter{obj: obj}
	for it.next() {
		if err := fn(it.key, it.val); err != nil {
			return err
		}
	}
	return it.err
}

// reencoder rewrites one strict JSON value compactly in a dialect. It is
// how opaque nested objects (TopicQueueMappingInfo) are stored and sent:
// strings are re-escaped for the dialect, big integers quoted when Standard
// is written (never when stored), and in Legacy the integer keys of the
// Integer-keyed maps fastjson knows (currIdMap, hostedQueues) are written
// bare again. Member order is kept.
type reencoder struct {
	src      []byte
	pos      int
	d        Dialect
	quoteBig bool // write integers beyond +-2^53-1 as strings
	depth    int
}

// appendJSON appends src, a single JSON value (bare keys allowed), in
// dialect d.
func appendJSON(dst, src []byte, d Dialect) ([]byte, error) {
	return reencode(dst, src, reencoder{d: d, quoteBig: d == Standard})
}

// compactStored returns src in a new slice in the form static-topic
// mappings are kept in: compact, keys quoted, strings escaped as Standard
// escapes them, numbers as they came. Quoting big longs is the Standard
// writer's business: stored quoted, an epoch beyond 2^53 would reach a
// Legacy reader as a string where Java writes the number.
func compactStored(src []byte) ([]byte, error) {
	return reencode(make([]byte, 0, len(src)), src, reencoder{d: Standard})
}

func reencode(dst, src []byte, e reencoder) ([]byte, error) {
	e.src = Lenient(src)
	dst, err := e.value(dst, false)
	if err != nil {
		return dst, err
	}
	if e.pos = skipWS(e.src, e.pos); e.pos != len(e.src) {
		return dst, fmt.Errorf("trailing data at offset %d", e.pos)
	}
	return dst, nil
}

func (e *reencoder) value(dst []byte, intKeys bool) ([]byte, error) {
	e.pos = skipWS(e.src, e.pos)
	if e.pos >= len(e.src) {
		return dst, errUnexpectedEnd
	}
	switch c := e.src[e.pos]; {
	case c == '{':
		return e.object(dst, intKeys)
	case c == '[':
		return e.array(dst)
	case c == '"':
		raw, err := e.stringRaw()
		if err != nil {
			return dst, err
		}
		return jsontext.AppendContent(dst, raw, e.d == Standard)
	case c == '-' || c >= '0' && c <= '9':
		return e.number(dst)
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(e.src[e.pos:], []byte(lit)) {
				e.pos += len(lit)
				return append(dst, lit...), nil
			}
		}
		return dst, fmt.Errorf("unexpected byte %q at offset %d", c, e.pos)
	}
}

func (e *reencoder) enter() error {
	e.depth++
	if e.depth > maxDepth {
		return errTooDeep
	}
	return nil
}

func (e *reencoder) object(dst []byte, intKeys bool) ([]byte, error) {
	if err := e.enter(); err != nil {
		return dst, err
	}
	e.pos++
	dst = append(dst, '{')
	e.pos = skipWS(e.src, e.pos)
	if e.pos < len(e.src) && e.src[e.pos] == '}' {
		e.pos++
		e.depth--
		return append(dst, '}'), nil
	}
	for {
		e.pos = skipWS(e.src, e.pos)
		if e.pos >= len(e.src) || e.src[e.pos] != '"' {
			return dst, fmt.Errorf("expected an object key at offset %d", e.pos)
		}
		key, err := e.stringRaw()
		if err != nil {
			return dst, err
		}
		if intKeys && e.d == Legacy && isIntKey(key) {
			dst = append(dst, key...)
		} else if dst, err = jsontext.AppendContent(dst, key, e.d == Standard); err != nil {
			return dst, err
		}
		e.pos = skipWS(e.src, e.pos)
		if e.pos >= len(e.src) || e.src[e.pos] != ':' {
			return dst, fmt.Errorf("expected ':' at offset %d", e.pos)
		}
		e.pos++
		dst = append(dst, ':')
		childIntKeys := string(key) == "currIdMap" || string(key) == "hostedQueues"
		if dst, err = e.value(dst, childIntKeys); err != nil {
			return dst, err
		}
		e.pos = skipWS(e.src, e.pos)
		if e.pos >= len(e.src) {
			return dst, errUnexpectedEnd
		}
		switch e.src[e.pos] {
		case ',':
			e.pos++
			dst = append(dst, ',')
		case '}':
			e.pos++
			e.depth--
			return append(dst, '}'), nil
		default:
			return dst, fmt.Errorf("expected ',' or '}' at offset %d", e.pos)
		}
	}
}

func (e *reencoder) array(dst []byte) ([]byte, error) {
	if err := e.enter(); err != nil {
		return dst, err
	}
	e.pos++
	dst = append(dst, '[')
	e.pos = skipWS(e.src, e.pos)
	if e.pos < len(e.src) && e.src[e.pos] == ']' {
		e.pos++
		e.depth--
		return append(dst, ']'), nil
	}
	for {
		var err error
		if dst, err = e.value(dst, false); err != nil {
			return dst, err
		}
		e.pos = skipWS(e.src, e.pos)
		if e.pos >= len(e.src) {
			return dst, errUnexpectedEnd
		}
		switch e.src[e.pos] {
		case ',':
			e.pos++
			dst = append(dst, ',')
		case ']':
			e.pos++
			e.depth--
			return append(dst, ']'), nil
		default:
			return dst, fmt.Errorf("expected ',' or ']' at offset %d", e.pos)
		}
	}
}

// stringRaw consumes a string and returns its content without quotes.
func (e *reencoder) stringRaw() ([]byte, error) {
	end := skipString(e.src, e.pos)
	if end < 0 {
		return nil, errUnexpectedEnd
	}
	raw := e.src[e.pos+1 : end-1]
	e.pos = end
	return raw, nil
}

// number copies a number checked against the JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (e *reencoder) number(dst []byte) ([]byte, error) {
	src := e.src
	start := e.pos
	i := start
	digits := func() int {
		n := 0
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	bad := func() ([]byte, error) { return dst, fmt.Errorf("bad number at offset %d", start) }
	if src[i] == '-' {
		i++
	}
	intStart := i
	if n := digits(); n == 0 || n > 1 && src[intStart] == '0' {
		return bad()
	}
	intEnd := i
	if i < len(src) && src[i] == '.' {
		i++
		if digits() == 0 {
			return bad()
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return bad()
		}
	}
	e.pos = i
	num := src[start:i]
	if e.quoteBig && i == intEnd && beyondSafeLong(src[intStart:intEnd]) {
		dst = append(dst, '"')
		dst = append(dst, num...)
		return append(dst, '"'), nil
	}
	return append(dst, num...), nil
}

// beyondSafeLong reports whether the decimal digits exceed 2^53-1.
func beyondSafeLong(digits []byte) bool {
	const limit = "9007199254740991"
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) != len(limit) {
		return len(digits) > len(limit)
	}
	return string(digits) > limit
}

func isIntKey(key []byte) bool {
	if len(key) > 0 && key[0] == '-' {
		key = key[1:]
	}
	if len(key) == 0 {
		return false
	}
	for _, c := range key {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
