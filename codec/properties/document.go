// document.go holds Document: a properties text kept byte for byte, so
// that keys can be changed or added without touching any other line.

package properties

import (
	"bufio"
	"bytes"
	"fmt"
)

// Document is a properties text that can be edited the way a person edits
// it: Set changes the value of a key where the key is written and leaves
// every other byte (comments, blank lines, continuations, order, the way
// other values are escaped, the line endings) as it was; a key the text
// does not have is appended at the end. Bytes renders the result.
//
// The zero value is an empty document.
type Document struct {
	src     []byte
	entries []entry
	added   []Property // keys the text did not have, in the order they were set
	nl      string     // the text's line terminator, for appended lines
}

// entry is one key/value entry of the text and where it is.
type entry struct {
	prop Property
	// valueAt..end is the value as written in the text (from its first
	// byte to the end of the entry's last physical line, without the line
	// terminator); a new value replaces exactly these bytes.
	valueAt, end int
	// bare: the entry has no separator at all ("key"), so a value needs one.
	bare bool
	// set holds a value given to Set; nil while the text's own value holds.
	set *string
}

// ParseDocument reads text as Parse does and keeps it for editing. The
// Document holds a copy of text.
func ParseDocument(text []byte) (*Document, error) {
	d := &Document{src: bytes.Clone(text), nl: lineEnding(text)}
	lr := lineReader{r: bufio.NewReader(bytes.NewReader(d.src)), line: 1, track: true}
	for {
		logical, start, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("properties: line %d: %w", lr.line, err)
		}
		if logical == nil {
			return d, nil
		}
		p, keyLen, valueStart, err := splitAt(logical)
		if err != nil {
			return nil, fmt.Errorf("properties: line %d: %w", start, err)
		}
		p.Line = start
		d.entries = append(d.entries, entry{
			prop:    p,
			valueAt: lr.rawOffset(valueStart),
			end:     lr.end,
			bare:    valueStart == keyLen,
		})
	}
}

// lineEnding is the first line terminator of text, "\n" when it has none.
func lineEnding(text []byte) string {
	i := bytes.IndexAny(text, "\r\n")
	switch {
	case i < 0:
		return "\n"
	case text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n':
		return "\r\n"
	}
	return string(text[i])
}

// Properties returns the entries with their current values in text order,
// then the appended ones; like Parse's, a repeated key appears each time it
// is written. Appended entries have Line 0.
func (d *Document) Properties() []Property {
	out := make([]Property, 0, len(d.entries)+len(d.added))
	for _, e := range d.entries {
		p := e.prop
		if e.set != nil {
			p.Value = *e.set
		}
		out = append(out, p)
	}
	return append(out, d.added...)
}

// Get returns the value key has in the document: that of its last entry,
// which is the one Java's Properties.load keeps.
func (d *Document) Get(key string) (value string, ok bool) {
	for i := len(d.added) - 1; i >= 0; i-- {
		if d.added[i].Key == key {
			return d.added[i].Value, true
		}
	}
	for i := len(d.entries) - 1; i >= 0; i-- {
		if e := d.entries[i]; e.prop.Key == key {
			if e.set != nil {
				return *e.set, true
			}
			return e.prop.Value, true
		}
	}
	return "", false
}

// Set gives key the value. When the text has the key, the value of its last
// entry (the one in effect) is replaced where it is written, continuation
// lines included, and its key and separator are kept as written; an earlier
// entry of the same key has no effect and is left alone. A key the text
// does not have is appended at the end. Set reports whether the document
// changed: setting the value a key already has changes nothing.
func (d *Document) Set(key, value string) bool {
	if v, ok := d.Get(key); ok && v == value {
		return false
	}
	for i := len(d.added) - 1; i >= 0; i-- {
		if d.added[i].Key == key {
			d.added[i].Value = value
			return true
		}
	}
	for i := len(d.entries) - 1; i >= 0; i-- {
		if d.entries[i].prop.Key == key {
			v := value
			d.entries[i].set = &v
			return true
		}
	}
	d.added = append(d.added, Property{Key: key, Value: value})
	return true
}

// Bytes renders the document: the text with every Set value in place and
// the appended keys as key=value lines at the end.
func (d *Document) Bytes() []byte {
	out := make([]byte, 0, len(d.src)+64)
	at := 0
	for i, e := range d.entries {
		if e.set == nil && len(d.added) > 0 && i == len(d.entries)-1 && e.end == len(d.src) && string(d.src[e.valueAt:e.end]) == "\\" {
			// A lone backslash at the very end reads as an empty entry
			// only there: with lines after it, it would read as nothing.
			// Written as "=" it stays an empty entry.
			e.set = new(string)
		}
		if e.set == nil {
			continue
		}
		out = append(out, d.src[at:e.valueAt]...)
		if e.bare {
			out = append(out, '=')
		}
		if v := *e.set; v != "" && (v[0] == '=' || v[0] == ':') {
			// After a blank separator ("key value") a raw '=' or ':'
			// would read as the separator.
			out = append(out, '\\')
		}
		out = AppendValue(out, *e.set)
		at = e.end
	}
	out = append(out, d.src[at:]...)
	if len(d.added) == 0 {
		return out
	}
	nl := d.nl
	if nl == "" {
		nl = "\n" // the zero Document
	}
	if len(out) > 0 {
		// The last line gets a terminator if it has none; and when it ends
		// in a continuation backslash, which reads as continuing into the
		// end of input whether a terminator follows or not, an empty line
		// too, which ends the entry before the appended keys (after a
		// comment ending in a backslash that line is only cosmetic).
		last := out
		switch {
		case bytes.HasSuffix(last, []byte("\r\n")):
			last = last[:len(last)-2]
		case last[len(last)-1] == '\n' || last[len(last)-1] == '\r':
			last = last[:len(last)-1]
		default:
			out = append(out, nl...)
		}
		if oddTrailingBackslashes(last[bytes.LastIndexAny(last, "\r\n")+1:]) {
			out = append(out, nl...)
		}
	}
	for _, p := range d.added {
		out = AppendKey(out, p.Key)
		out = append(out, '=')
		out = AppendValue(out, p.Value)
		out = append(out, nl...)
	}
	return out
}
