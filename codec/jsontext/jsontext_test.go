// jsontext_test.go checks the primitives: both quoting forms on every kind
// of character fastjson treats apart, the length against the writer, and
// reading strings back.

package jsontext

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendString(t *testing.T) {
	t.Parallel()
	f := func(in, def, ascii string) {
		t.Helper()
		if got := string(AppendString(nil, in)); got != def {
			t.Errorf("default %q: got %s, want %s", in, got, def)
		}
		if got := string(AppendStringASCII(nil, in)); got != ascii {
			t.Errorf("ascii %q: got %s, want %s", in, got, ascii)
		}
		if n := StringLen(in); n != len(def) {
			t.Errorf("StringLen(%q) = %d, the writer wrote %d", in, n, len(def))
		}
	}
	f("", `""`, `""`)
	f("broker-a", `"broker-a"`, `"broker-a"`)
	f(`a"b\c`, `"a\"b\\c"`, `"a\"b\\c"`)
	f("a/b", `"a/b"`, `"a\/b"`)
	f("\b\t\n\f\r", `"\b\t\n\f\r"`, `"\b\t\n\f\r"`)
	f("\x00\x0b\x1f\x7f", `"\u0000\u000B\u001F\u007F"`, `"\u0000\u000B\u001F\u007F"`)
	// The C1 controls are in fastjson's table of characters to escape;
	// U+00A0 is the first it leaves raw.
	f("\u0080\u0085\u009f\u00a0", "\"\\u0080\\u0085\\u009F\u00a0\"", `"\u0080\u0085\u009F\u00A0"`)
	f("\u2028x\u2029", `"\u2028x\u2029"`, `"\u2028x\u2029"`)
	f("é中😀", `"é中😀"`, `"\u00E9\u4E2D\uD83D\uDE00"`)
	// Bytes that are not UTF-8: one U+FFFD each.
	f("a\xffb", "\"a\uFFFDb\"", `"a\uFFFDb"`)
	f("\xe2\x80", "\"\uFFFD\uFFFD\"", `"\uFFFD\uFFFD"`)
	f("\xe2\x80A", "\"\uFFFD\uFFFDA\"", `"\uFFFD\uFFFDA"`)
	f("\uFFFD", "\"\uFFFD\"", `"\uFFFD"`)
}

// StringLen agrees with the writer byte for byte on random mixes of the
// characters that matter.
func TestStringLenIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "\u0085", "\u00a0", "\u2028", "\u2029", "\xe2\x80", "\xe2\x80\xa8", "\x00", "\x1f", "\x7f",
		`"`, `\`, "\b\t\n\f\r", "/", "\xff", "😀", "\xc2"}
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := rng.IntN(10); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := StringLen(s), len(AppendString(nil, s)); got != want {
			t.Fatalf("%q: StringLen %d, writer %d", s, got, want)
		}
	}
}

func TestAppendContent(t *testing.T) {
	t.Parallel()
	f := func(raw, def, ascii string) {
		t.Helper()
		got, err := AppendContent(nil, []byte(raw), false)
		if err != nil || string(got) != def {
			t.Errorf("default %q: %s, %v; want %s", raw, got, err, def)
		}
		got, err = AppendContent(nil, []byte(raw), true)
		if err != nil || string(got) != ascii {
			t.Errorf("ascii %q: %s, %v; want %s", raw, got, err, ascii)
		}
	}
	f(`a\/b\u00fc\ud83d\ude00\u2028\n`, "\"a/bü😀\\u2028\\n\"", `"a\/b\u00FC\uD83D\uDE00\u2028\n"`)
	f("\u0085\\u009f\u00a0", "\"\\u0085\\u009F\u00a0\"", `"\u0085\u009F\u00A0"`)
	f(`\'`, `"'"`, `"'"`)
	if _, err := AppendContent(nil, []byte(`\x`), false); err == nil {
		t.Error("a bad escape re-escaped")
	}
}

func TestReading(t *testing.T) {
	t.Parallel()
	f := func(raw, unescaped, unquoted string) {
		t.Helper()
		got, err := AppendUnescaped([]byte("pre"), []byte(raw))
		if err != nil || string(got) != "pre"+unescaped {
			t.Errorf("AppendUnescaped(%q) = %q, %v; want %q", raw, got, err, unescaped)
		}
		if len(got)-3 > len(raw) {
			t.Errorf("AppendUnescaped(%q) grew", raw)
		}
		s, err := Unquote([]byte(raw))
		if err != nil || s != unquoted {
			t.Errorf("Unquote(%q) = %q, %v; want %q", raw, s, err, unquoted)
		}
	}
	f("plain", "plain", "plain")
	f(`a\"b\\c\/d\b\f\n\r\t\'`, "a\"b\\c/d\b\f\n\r\t'", "a\"b\\c/d\b\f\n\r\t'")
	f(`\u00e9\u4E2D\ud83d\ude00`, "é中😀", "é中😀")
	// A lone surrogate cannot be held: U+FFFD.
	f(`\ud83d`, "\uFFFD", "\uFFFD")
	f(`\ud83d\u0041`, "\uFFFDA", "\uFFFDA")
	f(`\ude00`, "\uFFFD", "\uFFFD")
	// Raw bytes that are not UTF-8 are kept by AppendUnescaped (a header
	// string holds the peer's bytes) and replaced by Unquote.
	f("a\xffb", "a\xffb", "a\uFFFDb")
	for _, bad := range []string{`\`, `\u12`, `\uZZZZ`, `\x41`} {
		if _, err := AppendUnescaped(nil, []byte(bad)); err == nil {
			t.Errorf("AppendUnescaped(%q) accepted", bad)
		}
		if _, err := Unquote([]byte(bad)); err == nil {
			t.Errorf("Unquote(%q) accepted", bad)
		}
	}
	if r, ok := Hex4([]byte("x00aF"), 1); !ok || r != 0xAF {
		t.Errorf("Hex4 = %x, %v", r, ok)
	}
	if _, ok := Hex4([]byte("0a"), 0); ok {
		t.Error("Hex4 read past the end")
	}
}

func TestAppendStringAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendString(buf[:0], "broker-a/ünï\u2028😀\x01\xff")
		buf = AppendStringASCII(buf, "broker-a/ünï\u2028😀\x01\xff")
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
