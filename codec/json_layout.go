// json_layout.go holds the JSON header's fast path: the exact layout Java's
// fastjson (and this project's encoder) writes for a request without remark
// or escapes, matched as literals in one pass. Anything else, a space or a
// reordered key included, is left to the scanner, which gives the same
// result (a fuzz check holds the two to that).

package codec

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
// found, kept as offsets until the whole header has matched.
type layout struct {
	b   []byte
	p   int
	n   int
	ext [layoutMaxExt][4]int // key start, key end, value start, value end
}

func (l *layout) lit(s string) bool {
	if len(l.b)-l.p < len(s) || string(l.b[l.p:l.p+len(s)]) != s {
		return false
	}
	l.p += len(s)
	return true
}

// uint reads 1 to 10 digits within int32 without a leading zero (0 itself
// aside).
func (l *layout) uint() (int32, bool) {
	d := l.b[l.p:min(len(l.b), l.p+10)]
	var n int64
	i := 0
	for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		n = n*10 + int64(d[i]-'0')
	}
	if i == 0 || n > 1<<31-1 || (d[0] == '0' && i > 1) || l.p+i >= len(l.b) {
		return 0, false
	}
	if c := l.b[l.p+i]; c >= '0' && c <= '9' {
		return 0, false // an eleventh digit
	}
	l.p += i
	return int32(n), true
}

// plain moves past the characters of a string up to its closing quote,
// taking printable ASCII without backslashes only.
func (l *layout) plain() (int, int, bool) {
	start := l.p
	for l.p < len(l.b) {
		c := l.b[l.p]
		if c == '"' {
			end := l.p
			l.p++
			return start, end, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return 0, 0, false
		}
		l.p++
	}
	return 0, 0, false
}

// decodeLayout fills c from h when h has the fast path's layout and
// reports whether it did; when it did not, c is untouched.
func decodeLayout(h []byte, c *Command) bool {
	l := layout{b: h}
	if !l.lit(layoutCode) {
		return false
	}
	code, ok := l.uint()
	if !ok {
		return false
	}
	hasExt := l.lit(layoutExt)
	if hasExt {
		if l.p < len(h) && h[l.p] != '}' {
			for {
				if l.n == layoutMaxExt || !l.lit(`"`) {
					return false
				}
				e := &l.ext[l.n]
				if e[0], e[1], ok = l.plain(); !ok || !l.lit(`:"`) {
					return false
				}
				if e[2], e[3], ok = l.plain(); !ok {
					return false
				}
				l.n++
				if !l.lit(`,`) {
					break
				}
			}
		}
		if !l.lit(layoutFlag) {
			return false
		}
	} else if !l.lit(layoutFlagNoEx) {
		return false
	}
	flag, ok := l.uint()
	if !ok || !l.lit(layoutLang) {
		return false
	}
	ls, le, ok := l.plain()
	if !ok {
		return false
	}
	l.p--
	if !l.lit(layoutOpaque) {
		return false
	}
	opaque, ok := l.uint()
	if !ok || !l.lit(layoutTail) {
		return false
	}
	version, ok := l.uint()
	if !ok || !l.lit(`}`) || l.p != len(h) {
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
