// Tests of string and number escaping in both dialects.

package body

import (
	"strings"
	"testing"
)

func TestAppendStringLegacy(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := string(AppendString(nil, in, Legacy)); got != want {
			t.Errorf("Legacy %q: got %s, want %s", in, got, want)
		}
	}
	f("", `""`)
	f("broker-a", `"broker-a"`)
	f(`a"b`, `"a\"b"`)
	f(`a\b`, `"a\\b"`)
	f("\b\t\n\f\r", `"\b\t\n\f\r"`)
	f("\x00\x01\x0b\x1f", `"\u0000\u0001\u000B\u001F"`)
	f("\x7f", `"\u007F"`)
	f("a/b", `"a/b"`)
	f("\u2028x\u2029", `"\u2028x\u2029"`)
	// fastjson escapes the C1 controls as it escapes DEL; U+00A0 on is raw.
	f("a\u0085b", `"a\u0085b"`)
	f("\u0080", `"\u0080"`)
	f("x\u009fy\u00a0z", "\"x\\u009Fy\u00a0z\"")
	f("ünïcode", `"ünïcode"`)
	f("中文", `"中文"`)
	f("😀", `"😀"`)
	f("<>&'", `"<>&'"`)
	f("\xff", "\"\uFFFD\"")
	f("\uFFFD", "\"\uFFFD\"")
}

func TestAppendStringStandard(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := string(AppendString(nil, in, Standard)); got != want {
			t.Errorf("Standard %q: got %s, want %s", in, got, want)
		}
	}
	f("", `""`)
	f("127.0.0.1:10911", `"127.0.0.1:10911"`)
	f(`a"b`, `"a\"b"`)
	f(`a\b`, `"a\\b"`)
	f("\b\t\n\f\r", `"\b\t\n\f\r"`)
	f("\x00\x01\x0b\x1f", `"\u0000\u0001\u000B\u001F"`)
	f("\x7f", `"\u007F"`)
	f("a/b", `"a\/b"`)
	f("\u2028x\u2029", `"\u2028x\u2029"`)
	f("ünïcode", `"\u00FCn\u00EFcode"`)
	f("中文", `"\u4E2D\u6587"`)
	f("😀", `"\uD83D\uDE00"`)
	f("<>&'", `"<>&'"`)
	f("\xff", `"\uFFFD"`)
	f("\u00a0é", `"\u00A0\u00E9"`)
}

func TestAppendInt64(t *testing.T) {
	t.Parallel()
	f := func(v int64, d Dialect, want string) {
		t.Helper()
		if got := string(AppendInt64(nil, v, d)); got != want {
			t.Errorf("%d dialect %d: got %s, want %s", v, d, got, want)
		}
	}
	f(0, Standard, "0")
	f(1700000000123, Standard, "1700000000123")
	f(9007199254740991, Standard, "9007199254740991")
	f(-9007199254740991, Standard, "-9007199254740991")
	f(9007199254740992, Standard, `"9007199254740992"`)
	f(-9007199254740992, Standard, `"-9007199254740992"`)
	f(9223372036854775807, Standard, `"9223372036854775807"`)
	f(9007199254740992, Legacy, "9007199254740992")
	f(-9223372036854775808, Legacy, "-9223372036854775808")
}

func TestAppendStringNoAlloc(t *testing.T) {
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		buf = AppendString(buf[:0], "broker-a/ünï\u2028😀\x01", Standard)
		buf = AppendString(buf, "broker-a/ünï\u2028😀\x01", Legacy)
		buf = AppendInt64(buf, 1<<60, Standard)
	})
	if n != 0 {
		t.Fatalf("allocations per run: %v, want 0", n)
	}
}

// The C1 rule reaches every legacy string: bean fields, map keys and
// values, and strings inside a stored mapping.
func TestLegacyEscapesC1Controls(t *testing.T) {
	t.Parallel()
	r := &TopicRoute{OrderTopicConf: "broker-a:4\u0085", MappingByBroker: map[string][]byte{
		"broker-a": []byte("{\"topic\":\"T\u0086\",\"scope\":\"\\u0087\"}"),
	}}
	got := string(AppendTopicRoute(nil, r, Legacy))
	for _, want := range []string{`"orderTopicConf":"broker-a:4\u0085"`, `"broker-a":{"topic":"T\u0086","scope":"\u0087"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("legacy route lacks %s: %s", want, got)
		}
	}
	if got := string(AppendKVTable(nil, map[string]string{"k\u0090": "v\u0091"})); got != `{"table":{"k\u0090":"v\u0091"}}` {
		t.Errorf("kv table: %s", got)
	}
	// Standard writes every non-ASCII rune escaped; nothing changes there.
	if got := string(AppendString(nil, "\u0085\u00a0", Standard)); got != `"\u0085\u00A0"` {
		t.Errorf("standard: %s", got)
	}
}
