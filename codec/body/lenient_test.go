// Tests of bare-key quoting, member iteration and dialect re-encoding.

package body

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/jsontext"
)

func TestLenient(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := string(Lenient([]byte(in))); got != want {
			t.Errorf("Lenient(%s):\ngot  %s\nwant %s", in, got, want)
		}
	}
	f(`{}`, `{}`)
	f(`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`)
	f(`{"currIdMap":{0:0,1:1}}`, `{"currIdMap":{"0":0,"1":1}}`)
	f(`{"hostedQueues":{0:[{"gen":0,"queueId":0}],12:[]}}`, `{"hostedQueues":{"0":[{"gen":0,"queueId":0}],"12":[]}}`)
	f(`{ 0 : "a" , -1:"b"}`, `{ "0" : "a" , "-1":"b"}`)
	f(`[0,1,{2:3}]`, `[0,1,{"2":3}]`)
	f(`{"a":[1,2],"b":3}`, `{"a":[1,2],"b":3}`)
	// Braces and commas inside strings are not structure.
	f(`{"x":"{0:1,2:3}","y":"\"{4:5"}`, `{"x":"{0:1,2:3}","y":"\"{4:5"}`)
	f(`{"x":"\\",0:1}`, `{"x":"\\","0":1}`)
	// fastjson writes a null map key bare, too.
	f(`{null:{"a":1}}`, `{"null":{"a":1}}`)
	// Malformed input passes through for the decoder to reject.
	f(`{"x":"unterminated,0:1}`, `{"x":"unterminated,0:1}`)
	f(`}}]]{0`, `}}]]{"0"`)
}

func TestLenientHotPathCopyFree(t *testing.T) {
	src := []byte(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"timestamp":2},"topicConfigTable":{"A":{"perm":6,"topicName":"A"}}}}`)
	if got := Lenient(src); &got[0] != &src[0] || len(got) != len(src) {
		t.Fatal("Lenient copied an input without bare keys")
	}
	if n := testing.AllocsPerRun(100, func() { Lenient(src) }); n != 0 {
		t.Fatalf("allocations per run: %v, want 0", n)
	}
	bare := []byte(`{"currIdMap":{0:0}}`)
	got := Lenient(bare)
	if string(bare) != `{"currIdMap":{0:0}}` || &got[0] == &bare[0] {
		t.Fatal("Lenient changed its input in place")
	}
}

func TestForEachMember(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		var sb strings.Builder
		err := forEachMember([]byte(in), func(k, v []byte) error {
			sb.WriteString(string(k) + "=" + string(v) + ";")
			return nil
		})
		got := sb.String()
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("forEachMember(%s): got %s, want %s", in, got, want)
		}
	}
	f(`{}`, ``)
	f(`null`, ``)
	f(` { "b" : 1 , "a" : {"x":[1,"}"]} } `, `b=1;a={"x":[1,"}"]};`)
	f(`{"a\"b":"c"}`, `a\"b="c";`)
	f(`[]`, `error`)
	f(`{"a":1`, `error`)
	f(`{"a" 1}`, `error`)
	f(`{"a":1 "b":2}`, `error`)
	f(`{"a":}`, `error`)
	f(`{"a":{"b":1}`, `error`)
	f(`{a:1}`, `error`)
}

func TestAppendJSONDialects(t *testing.T) {
	t.Parallel()
	f := func(in, legacy, standard string) {
		t.Helper()
		got, err := appendJSON(nil, []byte(in), Legacy)
		if err != nil || string(got) != legacy {
			t.Errorf("Legacy %s: got %s (%v), want %s", in, got, err, legacy)
		}
		got, err = appendJSON(nil, []byte(in), Standard)
		if err != nil || string(got) != standard {
			t.Errorf("Standard %s: got %s (%v), want %s", in, got, err, standard)
		}
	}
	f(` { "currIdMap" : { "0" : 0 , 1 : 1 } } `, `{"currIdMap":{0:0,1:1}}`, `{"currIdMap":{"0":0,"1":1}}`)
	f(`{"hostedQueues":{0:[{"endOffset":-1,"gen":0}]}}`, `{"hostedQueues":{0:[{"endOffset":-1,"gen":0}]}}`, `{"hostedQueues":{"0":[{"endOffset":-1,"gen":0}]}}`)
	// Only the Integer-keyed maps get bare keys back.
	f(`{"other":{"0":1}}`, `{"other":{"0":1}}`, `{"other":{"0":1}}`)
	f(`{"s":"a\/b\u00fc\ud83d\ude00\u2028\n"}`, "{\"s\":\"a/bü😀\\u2028\\n\"}", `{"s":"a\/b\u00FC\uD83D\uDE00\u2028\n"}`)
	f(`{"big":9007199254740992,"ok":9007199254740991,"neg":-9223372036854775808,"f":1.5e3}`,
		`{"big":9007199254740992,"ok":9007199254740991,"neg":-9223372036854775808,"f":1.5e3}`,
		`{"big":"9007199254740992","ok":9007199254740991,"neg":"-9223372036854775808","f":1.5e3}`)
	f(`[true,false,null,[],{}]`, `[true,false,null,[],{}]`, `[true,false,null,[],{}]`)
	f("{\"s\":\"\u0085\\u009f\u00a0\"}", "{\"s\":\"\\u0085\\u009F\u00a0\"}", `{"s":"\u0085\u009F\u00A0"}`)
}

// Mappings are stored with their numbers as they came: a long beyond 2^53
// is quoted when Standard is written, and Legacy writes the number bare
// as Java's writer does.
func TestCompactStoredKeepsNumbers(t *testing.T) {
	t.Parallel()
	in := `{"bname":"b/ü","currIdMap":{0:0},"epoch":9007199254740993,"neg":-9007199254740993,"ok":9007199254740991}`
	stored, err := compactStored([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bname":"b\/\u00FC","currIdMap":{"0":0},"epoch":9007199254740993,"neg":-9007199254740993,"ok":9007199254740991}`
	if string(stored) != want {
		t.Fatalf("stored\ngot  %s\nwant %s", stored, want)
	}
	for _, c := range []struct {
		d    Dialect
		want string
	}{
		{Legacy, `{"bname":"b/ü","currIdMap":{0:0},"epoch":9007199254740993,"neg":-9007199254740993,"ok":9007199254740991}`},
		{Standard, `{"bname":"b\/\u00FC","currIdMap":{"0":0},"epoch":"9007199254740993","neg":"-9007199254740993","ok":9007199254740991}`},
	} {
		got, err := appendJSON(nil, stored, c.d)
		if err != nil || string(got) != c.want {
			t.Errorf("dialect %d\ngot  %s (%v)\nwant %s", c.d, got, err, c.want)
		}
	}
}

func TestAppendJSONRejects(t *testing.T) {
	t.Parallel()
	f := func(in string) {
		t.Helper()
		if got, err := appendJSON(nil, []byte(in), Standard); err == nil {
			t.Errorf("%q: no error, got %s", in, got)
		}
	}
	f(``)
	f(`{`)
	f(`{"a"`)
	f(`{"a":1,}`)
	f(`[1,]`)
	f(`[1 2]`)
	f(`"\x"`)
	f(`"\u12"`)
	f(`nul`)
	f(`-`)
	f(`01`)
	f(`1.`)
	f(`1e`)
	f(`.5`)
	f(`{} {}`)
	f(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1))
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	f := func(raw, want string) {
		t.Helper()
		got, err := jsontext.Unquote([]byte(raw))
		if err != nil || got != want {
			t.Errorf("jsontext.Unquote(%s): got %q (%v), want %q", raw, got, err, want)
		}
	}
	f(`TopicTest`, "TopicTest")
	f(`a\"b\\c\/d\n`, "a\"b\\c/d\n")
	f(`\u00FC\uD83D\uDE00`, "ü😀")
	f(`\uD83D`, "\uFFFD")
	if _, err := jsontext.Unquote([]byte(`\q`)); err == nil {
		t.Error("unquote accepted a bad escape")
	}
}
