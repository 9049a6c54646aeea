// fuzz_test.go fuzzes the reader and the writer: no panic on any text, and
// whatever is read comes back from what the writer makes of it.

package properties

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

// FuzzParse: no panic on any text, and every property read
// back from what the writer makes of it.
func FuzzParse(f *testing.F) {
	texts, err := codectest.PropertiesTexts()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range texts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		props, err := Parse(bytes.NewReader(text))
		if err != nil {
			return
		}
		var out []byte
		line := 0
		for _, p := range props {
			if p.Line <= line {
				t.Fatalf("line numbers do not increase: %d after %d", p.Line, line)
			}
			line = p.Line
			out = AppendKey(out, p.Key)
			out = append(out, '=')
			out = AppendValue(out, p.Value)
			out = append(out, '\n')
		}
		back, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("written text does not parse: %v\n%q\nfrom %q", err, out, text)
		}
		if len(back) != len(props) {
			t.Fatalf("%d properties read back as %d\n%q\nfrom %q", len(props), len(back), out, text)
		}
		for i := range props {
			if back[i].Key != props[i].Key || back[i].Value != props[i].Value {
				t.Fatalf("property %d: %q=%q read back as %q=%q\n%q", i, props[i].Key, props[i].Value, back[i].Key, back[i].Value, out)
			}
		}
	})
}

// TestContinuationBackslashRuns pins the continuation rule on runs of
// backslashes spread over lines (the shape that once made the reader
// quadratic): only the last physical line's trailing run counts, as in
// Java's LineReader.
func TestContinuationBackslashRuns(t *testing.T) {
	t.Parallel()
	f := func(text, key, value string) {
		t.Helper()
		ps, err := Parse(strings.NewReader(text))
		if err != nil || len(ps) != 1 || ps[0].Key != key || ps[0].Value != value {
			t.Fatalf("%q: got %q, %v; want %q=%q", text, dump(ps), err, key, value)
		}
	}
	f("k=\\\\\\\n\\\\\\\nv", "k", `\\v`)
	f("k=\\\\\\\n\\\\\n", "k", `\\`)
	f("k=a\\\\\\\n  \\\nv", "k", `a\v`)
	f("k=a\\\n\n", "k", "a")
	f("k=a\\\\\\", "k", `a\`)
	f(strings.Repeat(`\\\`+"\n", 1<<16), strings.Repeat(`\`, 1<<16), "")
}

// FuzzDocument: editing any text that parses sets the key and nothing
// else. A key of the text (the first, the last or one taken by the seed)
// or a new one is set to a value, and the rendered text must read back
// to the same properties but that key's value, which must be the new one.
func FuzzDocument(f *testing.F) {
	texts, err := codectest.PropertiesTexts()
	if err != nil {
		f.Fatal(err)
	}
	for i, s := range texts {
		f.Add(s, uint8(i), "v\\ \n")
	}
	f.Add([]byte("a=1\\"), uint8(255), "x")
	f.Fuzz(func(t *testing.T, text []byte, pick uint8, value string) {
		d, err := ParseDocument(text)
		if err != nil {
			return
		}
		props := d.Properties()
		key := "fuzz.new.key"
		if len(props) > 0 && pick != 255 {
			key = props[int(pick)%len(props)].Key
		}
		d.Set(key, value)
		out := d.Bytes()
		back, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("rendered text does not parse: %v\n%q\nfrom %q", err, out, text)
		}
		want := map[string]string{}
		for _, p := range props {
			want[p.Key] = p.Value
		}
		want[key] = value
		got := map[string]string{}
		for _, p := range back {
			got[p.Key] = p.Value
		}
		if len(got) != len(want) {
			t.Fatalf("%d keys read back, want %d\n%q\nfrom %q", len(got), len(want), out, text)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%q = %q after setting %q=%q, want %q\n%q\nfrom %q", k, got[k], key, value, v, out, text)
			}
		}
	})
}
