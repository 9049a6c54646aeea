// cut.go holds the string cap every logged string goes through.

package logcap

import (
	"strconv"
	"unicode/utf8"
)

// DefaultMaxString is the longest string a record carries by default: long
// enough for any name, address, path or error the server logs, short enough
// that a request string of megabytes (a KV key, a broker name) costs a
// line, not megabytes of disk.
const DefaultMaxString = 1024

// String is s capped at DefaultMaxString (see Cut).
func String(s string) string { return Cut(s, DefaultMaxString) }

// Cut returns s whole when it has at most max bytes, else its first max
// bytes cut on a UTF-8 boundary and how long it was: "abc...(12345 bytes)".
func Cut(s string, max int) string {
	if len(s) <= max || max <= 0 {
		return s
	}
	cut := max
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut] + "...(" + strconv.Itoa(len(s)) + " bytes)"
}
