// properties_test.go checks the reader against Properties.load's edge
// cases and the writer's round trip.

package properties

import (
	"fmt"
	"strings"
	"testing"
)

// dump renders properties as "key|value@line" entries for compact comparison.
func dump(ps []Property) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s|%s@%d", p.Key, p.Value, p.Line))
	}
	return strings.Join(parts, " ; ")
}

// parseCase returns a check that input parses to want (in dump's form).
func parseCase(t *testing.T) func(input, want string) {
	return func(input, want string) {
		t.Helper()
		got, err := Parse(strings.NewReader(input))
		if err != nil {
			t.Fatalf("Parse(%q): %v", input, err)
		}
		if s := dump(got); s != want {
			t.Errorf("Parse(%q)\n got: %q\nwant: %q", input, s, want)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	f := parseCase(t)
	f("", "")
	f("\n\n  \n", "")
	f("a=b", "a|b@1")
	f("a=b\n", "a|b@1")
	f("a:b\n", "a|b@1")
	f("a b\n", "a|b@1")
	f("a\tb\n", "a|b@1")
	f("a\fb\n", "a|b@1")
	// Whitespace around the separator; trailing whitespace is kept.
	f("  a  =  b  \n", "a|b  @1")
	f("a = = b\n", "a|= b@1")
	f("a   :b\n", "a|b@1")
	f("a b=c\n", "a|b=c@1")
	// No value.
	f("a\n", "a|@1")
	f("a=\n", "a|@1")
	f("=b\n", "|b@1")
	// Comments.
	f("# x=y\n! z=w\na=b\n", "a|b@3")
	f("   # indented comment\na=b", "a|b@2")
	f("a=b # not a comment\n", "a|b # not a comment@1")
	// A comment ending in a backslash does not continue.
	f("# comment \\\na=b\n", "a|b@2")
	// Line terminators.
	f("a=1\r\nb=2\rc=3\nd=4", "a|1@1 ; b|2@2 ; c|3@3 ; d|4@4")
	// Continuations: the next line's leading blanks are dropped, a '#' there
	// is data, an empty continuation ends the entry.
	f("a=b\\\n   c\nd=e\n", "a|bc@1 ; d|e@3")
	f("a=b\\\r\n  c\n", "a|bc@1")
	f("a=b\\\n#c\n", "a|b#c@1")
	f("a=b\\\n\nc=d\n", "a|b@1 ; c|d@3")
	f("a=one\\\n two\\\n three\nx=y", "a|onetwothree@1 ; x|y@4")
	f("key\\\n  =value\n", "key|value@1")
	// An even number of trailing backslashes is an escaped backslash.
	f("a=b\\\\\nc=d\n", "a|b\\@1 ; c|d@2")
	f("a=b\\\\\\\nc\n", "a|b\\c@1")
	// A continuation into end of input drops the backslash.
	f("a=b\\", "a|b@1")
	f("a=b\\\n", "a|b@1")
	// Escapes.
	f(`a=x\ty\nz\rw\f`, "a|x\ty\nz\rw\f@1")
	f(`a\=b=c`, "a=b|c@1")
	f(`a\:b:c`, "a:b|c@1")
	f(`a\ b c`, "a b|c@1")
	f(`a=\ b`, "a| b@1")
	f(`a=\q\"\\`, `a|q"\@1`)
	f(`\#a=b`, "#a|b@1")
	f(`a=\u0041\u00e9\u4E2D`, "a|Aé中@1")
	f(`a=\uD83D\uDE00`, "a|😀@1")
	f(`a=\uD83Dx`, "a|\uFFFDx@1")
	// UTF-8 bytes pass through.
	f("名=值\n", "名|值@1")
	// Repeated keys are all returned in order.
	f("a=1\na=2\n", "a|1@1 ; a|2@2")
}

func TestParsePropertiesErrors(t *testing.T) {
	t.Parallel()
	f := func(input, wantSub string) {
		t.Helper()
		_, err := Parse(strings.NewReader(input))
		if err == nil {
			t.Fatalf("Parse(%q): no error", input)
		}
		if !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("Parse(%q): error %q does not contain %q", input, err, wantSub)
		}
	}
	f(`a=\u12`, "line 1")
	f("x=1\n# c\na=\\uZZZZ\n", "line 3: value of \"a\": malformed \\uxxxx")
	f("x=1\n\\u00g1=2\n", "line 2: key: malformed")
	f("a=b\\\n\\u1", "line 1")
}

func TestAppendEscapedRoundTrip(t *testing.T) {
	t.Parallel()
	f := func(key, value string) {
		t.Helper()
		var b []byte
		b = AppendKey(b, key)
		b = append(b, '=')
		b = AppendValue(b, value)
		b = append(b, '\n')
		got, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if len(got) != 1 || got[0].Key != key || got[0].Value != value {
			t.Fatalf("%q read back as %q, want %s|%s", b, dump(got), key, value)
		}
	}
	f("a", "b")
	f("a b", "c d ")
	f("k=:", "=v:")
	f("#k", "#v")
	f("!k", "!v")
	f("k\\", `C:\path\to`)
	f("k", " leading")
	f("k", "\tleading tab")
	f("k", "multi\nline\r\nvalue")
	f("k\tx", "mid\ttab")
	f("", "")
	f("uni", "中文 ✓")
}

func TestAppendEscapedPlainValueIsRaw(t *testing.T) {
	t.Parallel()
	// Ordinary values must be byte-identical to Java's raw output.
	got := string(AppendValue(nil, "configBlackList;configStorePath;kvConfigPath"))
	if got != "configBlackList;configStorePath;kvConfigPath" {
		t.Fatalf("got %q", got)
	}
	got = string(AppendValue(nil, "/home/x/namesrv/kvConfig.json"))
	if got != "/home/x/namesrv/kvConfig.json" {
		t.Fatalf("got %q", got)
	}
}

// TestLoneBackslashLineLikeJava pins what Properties.load (OpenJDK 17) reads
// after a line holding only a backslash: the logical line is still empty, so
// its reader is at the start of one. Blank lines are skipped and a '#' or '!'
// line is a comment, where treating the backslash as a continuation made
// "#notcomment" a key and blank lines an empty key.
func TestLoneBackslashLineLikeJava(t *testing.T) {
	t.Parallel()
	f := parseCase(t)
	// The reviewer's cases.
	f("\\\n#notcomment=1\nk=v\n", "k|v@3")
	f("  \\\n!bang=2\n", "")
	f("\\\n\n\nafter=3\n", "after|3@4")
	f("a\n0!0=:\n\\\n\r4b\\", "a|@1 ; 0!0|:@2 ; 4b|@5")
	// Leading blanks on the next line are skipped as on any line start.
	f("\\\n  \\\n  x=1\n", "x|1@3")
	f("\t\f\\\r\nk", "k|@2")
	// A comment after it ends at its own line, backslash or not.
	f("\\\n#c\\\nx=y", "x|y@3")
	// Into end of input Java reads one empty entry, except after "\r\n".
	f("\\", "|@1")
	f("\\\n", "|@1")
	f("\\\r", "|@1")
	f("k=v\n\\\n", "k|v@1 ; |@2")
	f("\\\n\\\n", "|@2")
	f("\\\r\n", "")
	f("  \\\r\n", "")
	f("k=v\n\\\r\n", "k|v@1")
	f("\\\n\\\r\n", "")
	f("\\\n   ", "")
	f("\\\n\n", "")
	// Inside an entry a lone backslash line is an ordinary continuation.
	f("k\\\n\\\nv", "kv|@1")
	f("k=a\\\n\\\n\nb=c", "k|a@1 ; b|c@4")
}

// The writer against what mqadmin sends for an update (keys and values
// raw): ordinary pairs come out byte for byte the same, and only what
// Properties.load would read differently is escaped. Pairs keep their
// order.
func TestAppendLikeMqadmin(t *testing.T) {
	t.Parallel()
	f := func(key, value, want string) {
		t.Helper()
		text := string(Append(nil, []Property{{Key: key, Value: value}}))
		if text != want {
			t.Errorf("Append(%q, %q) = %q, want %q", key, value, text, want)
		}
		props, err := Parse(strings.NewReader(text))
		if err != nil || len(props) != 1 || props[0].Key != key || props[0].Value != value {
			t.Errorf("read back %q: %+v %v", text, props, err)
		}
	}
	f("orderMessageEnable", "false", "orderMessageEnable=false\n")
	f("rocketmqHome", "/opt/rocket mq", "rocketmqHome=/opt/rocket mq\n")
	f("addr", "10.0.0.1:9876;10.0.0.2:9876", "addr=10.0.0.1:9876;10.0.0.2:9876\n")
	f("a=b", "c=d", `a\=b=c=d`+"\n")
	f("a:b c", " lead", `a\:b\ c=\ lead`+"\n")
	f("#k", "#v", `\#k=#v`+"\n")
	f("!k", "x!", `\!k=x!`+"\n")
	f("path", `C:\dir\file`, `path=C:\\dir\\file`+"\n")
	f("multi", "a\nb\r\tc\fd", "multi=a\\nb\\r\tc\fd\n")
	f("tab", "\tlead", "tab=\\tlead\n")
	f("ctl", "\x01", "ctl=\x01\n")
	f("unicode", "ünïcode ✓", "unicode=ünïcode ✓\n")
	f("empty", "", "empty=\n")
	if got := string(Append(nil, []Property{{Key: "b", Value: "1"}, {Key: "a", Value: "2"}})); got != "b=1\na=2\n" {
		t.Errorf("order not kept: %q", got)
	}
}
