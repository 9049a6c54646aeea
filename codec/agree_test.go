// agree_test.go checks that a header and a legacy body write the same
// string the same way, as Java's single fastjson encoder does.

package codec_test

import (
	"bytes"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestHeaderAndBodyStringsAgree(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"plain", "a\u0085b", "\u0080\u009f\u00a0", "bad\xffutf8", "\xe2\x80", "\x00\x01\x1f\x7f",
		"\u2028\u2029", `"quoted" \back\slash/`, "\b\t\n\f\r", "é中😀", "\uFFFD",
	} {
		c := &codec.Command{Code: 1, Remark: s}
		c.SetExt("k", s)
		header := codec.AppendHeader(nil, c)
		want := body.AppendString(nil, s, body.Legacy)
		if !bytes.Contains(header, append([]byte(`"remark":`), want...)) ||
			!bytes.Contains(header, append([]byte(`{"k":`), want...)) {
			t.Errorf("%q: header %s does not quote it as the body does: %s", s, header, want)
		}
		// And the header reads back as the body's string would.
		var back codec.Command
		frame := codec.AppendFrame(nil, c)
		if err := codec.Decode(frame[4:], &back); err != nil {
			t.Fatal(err)
		}
		if v, _ := back.ExtValue("k"); v != string([]rune(s)) || back.Remark != v {
			t.Errorf("%q: read back as %q / %q", s, v, back.Remark)
		}
	}
}
