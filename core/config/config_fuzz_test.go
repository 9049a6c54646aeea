// Fuzz targets for the properties parser and for applying what it reads,
// and a regression test for what fuzzing the parser turned up.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

// propertySeeds returns the properties texts of the recorded exchanges:
// UPDATE_NAMESRV_CONFIG (318) request bodies and GET_NAMESRV_CONFIG (319)
// response bodies, plus the spec's and Java's odd forms.
func propertySeeds(f *testing.F) [][]byte {
	files, err := codectest.Files()
	if err != nil || len(files) == 0 {
		f.Fatalf("no vectors under %s: %v", codectest.Dir(), err)
	}
	type key struct {
		file         string
		conn, opaque int
	}
	asked := map[key]int{}
	var out [][]byte
	for _, file := range files {
		frames, err := codectest.Load(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fr := range frames {
			var h struct {
				Code   int `json:"code"`
				Opaque int `json:"opaque"`
			}
			if err := json.Unmarshal(fr.Header, &h); err != nil {
				f.Fatal(err)
			}
			raw := fr.Raw()
			if len(raw) < 8+fr.HeaderLen {
				f.Fatalf("%s seq %d: frame shorter than its header", fr.File, fr.Seq)
			}
			body := raw[8+fr.HeaderLen:]
			k := key{fr.File, fr.Conn, h.Opaque}
			switch {
			case fr.Dir == "req":
				asked[k] = h.Code
				if h.Code == 318 && len(body) > 0 {
					out = append(out, body)
				}
			case asked[k] == 319 && len(body) > 0:
				out = append(out, body)
			}
		}
	}
	if len(out) == 0 {
		f.Fatal("no properties bodies in the vectors")
	}
	return append(out,
		[]byte("# comment\n! comment\nlistenPort = 9876\nkey\\ with\\ spaces:value\\\n    continued\n"),
		[]byte("a=\\u00e9\\ud83d\\ude00\\ud800x\r\nb\tc\fd\r\\\n"),
		[]byte("orderMessageEnable=TRUE\nwaitSecondsForService=-1\nkvConfigPath=  \n"),
		[]byte("k=\\u12"),
		[]byte("x\\"),
	)
}

// FuzzParseProperties: no panic on any text, and every property read
// back from what the writer makes of it.
func FuzzParseProperties(f *testing.F) {
	for _, s := range propertySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		props, err := ParseProperties(bytes.NewReader(text))
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
			out = appendEscapedKey(out, p.Key)
			out = append(out, '=')
			out = appendEscapedValue(out, p.Value)
			out = append(out, '\n')
		}
		back, err := ParseProperties(bytes.NewReader(out))
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

// FuzzApply: a config file either applies whole or leaves the Config as it
// was; an applied one prints to a text that applies to the same Config; a
// run-time update never touches the Config it starts from.
func FuzzApply(f *testing.F) {
	for _, s := range propertySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		props, err := ParseProperties(bytes.NewReader(text))
		if err != nil {
			return
		}
		c := Default()
		before := c.Clone()
		if n, err := before.RuntimeUpdate(props); err == nil {
			if n == before {
				t.Fatal("RuntimeUpdate returned its receiver")
			}
		} else {
			var ue *UpdateError
			if !errors.As(err, &ue) {
				t.Fatalf("RuntimeUpdate error %v is not an *UpdateError", err)
			}
		}
		if !reflect.DeepEqual(before, c) {
			t.Fatal("RuntimeUpdate changed its receiver")
		}
		if _, err := c.Apply(props); err != nil {
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("Apply error %v holds no *ValueError", err)
			}
			if !reflect.DeepEqual(before, c) {
				t.Fatalf("a failed Apply changed the config: %v", err)
			}
			return
		}
		_ = c.Validate()
		_, _ = c.Level()
		printed := c.AppendText(nil)
		back := Default()
		again, err := ParseProperties(bytes.NewReader(printed))
		if err != nil {
			t.Fatalf("printed config does not parse: %v\n%s", err, printed)
		}
		if _, err := back.Apply(again); err != nil {
			t.Fatalf("printed config does not apply: %v\n%s", err, printed)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("printed config applies differently\n got %+v\nwant %+v\n%s", back, c, printed)
		}
	})
}

// TestContinuationBackslashRuns pins the continuation rule on runs of
// backslashes spread over lines (the shape that once made the reader
// quadratic): only the last physical line's trailing run counts, as in
// Java's LineReader.
func TestContinuationBackslashRuns(t *testing.T) {
	f := func(text, key, value string) {
		t.Helper()
		ps, err := ParseProperties(strings.NewReader(text))
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
