// Round trips, rejection paths, JSON dialects and the Command helpers.

package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudwego/netpoll"
)

// rawFrame builds a frame (prefix included) from a type byte, a header and a
// body, bypassing the encoder so malformed headers can be fed in.
func rawFrame(typ byte, header, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(typ)<<24|uint32(len(header)))
	b = append(b, header...)
	return append(b, body...)
}

// sameCommand compares the wire-visible fields of two commands.
func sameCommand(a, b *Command) bool {
	if a.Code != b.Code || a.Language != b.Language || a.Version != b.Version || a.Opaque != b.Opaque ||
		a.Flag != b.Flag || a.Remark != b.Remark || a.HasExt != b.HasExt || a.SerializeType != b.SerializeType ||
		!bytes.Equal(a.Body, b.Body) || (a.Body == nil) != (b.Body == nil) || len(a.Ext) != len(b.Ext) {
		return false
	}
	for i := range a.Ext {
		if a.Ext[i] != b.Ext[i] {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	f := func(c Command) {
		t.Helper()
		for _, st := range []byte{SerializeJSON, SerializeRocketMQ} {
			in := c
			in.SerializeType = st
			frame := AppendFrame(nil, &in)
			l, err := FrameLength(frame, DefaultMaxFrame)
			if err != nil || l != len(frame)-4 {
				t.Fatalf("type %d: FrameLength = %d, %v (frame %d bytes)", st, l, err, len(frame))
			}
			var out Command
			if err := Decode(frame[4:], &out); err != nil {
				t.Fatalf("type %d: decode %q: %v", st, frame, err)
			}
			want := in
			if st == SerializeRocketMQ {
				// Binary cannot tell "no extFields" from "empty extFields".
				want.HasExt = len(in.Ext) > 0
			}
			if !sameCommand(&out, &want) {
				t.Fatalf("type %d:\n got %+v\nwant %+v\nframe %q", st, out, want, frame)
			}
		}
	}
	// Requests.
	f(Command{Code: GetRouteInfoByTopic, Language: LanguageJava, Version: 479, Opaque: 7,
		HasExt: true, Ext: []Field{{"topic", "TopicTest"}}})
	f(Command{Code: GetBrokerClusterInfo, Language: LanguageGo, Version: 317, Opaque: 1})
	f(Command{Code: GetBrokerClusterInfo, Language: LanguageRust, Version: 317, Opaque: 1, HasExt: true})
	f(Command{Code: BrokerHeartbeat, Flag: FlagOneway, Opaque: -5, Version: -1, Language: LanguageNodeJS,
		HasExt: true, Ext: []Field{{"clusterName", "DefaultCluster"}, {"brokerAddr", "192.168.0.2:10911"}, {"brokerName", "broker-a"}}})
	f(Command{Code: RegisterBroker, Opaque: 1 << 30, Flag: 0, Body: []byte(`{"filterServerList":[]}`),
		HasExt: true, Ext: []Field{{"brokerName", "broker-a"}, {"bodyCrc32", "12345"}}})
	f(Command{Code: UpdateNamesrvConfig, Body: []byte("a=b\n"), Remark: "client remark"})
	// Responses.
	f(Command{Code: Success, Flag: FlagResponse, Opaque: 9, Version: ServerVersion, HasExt: true})
	f(Command{Code: TopicNotExist, Flag: FlagResponse, Opaque: 1, Version: ServerVersion,
		Remark: "No topic route info in name server for the topic: Foo\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."})
	f(Command{Code: Success, Flag: FlagResponse, Opaque: 1007, HasExt: true, Ext: []Field{{"value", "v2 ünïcode"}}})
	f(Command{Code: SystemError, Flag: FlagResponse, Remark: "quote \" backslash \\ slash / tab \t nl \n cr \r bs \b ff \f nul \x00 us \x1f del \x7f ls \u2028 ps \u2029 emoji 😀 中文"})
	f(Command{Code: Success, Flag: FlagResponse, HasExt: true, Ext: []Field{{"k\"ey\\", "v\x01al\u2028"}, {"ключ", "значение"}}})
	f(Command{Code: 32767, Version: -32768, Opaque: -1 << 31, Flag: 1<<31 - 1})
}

func TestEncodeJSONExact(t *testing.T) {
	t.Parallel()
	f := func(c Command, want string) {
		t.Helper()
		if got := string(AppendHeader(nil, &c)); got != want {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	}
	f(Command{}, `{"code":0,"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`)
	f(Command{Code: 3, Flag: 1, Opaque: 5, Version: 479, Remark: " request type 9999 not supported"},
		`{"code":3,"flag":1,"language":"JAVA","opaque":5,"remark":" request type 9999 not supported","serializeTypeCurrentRPC":"JSON","version":479}`)
	f(Command{HasExt: true, Ext: []Field{{"b", "1"}, {"a", "2"}}},
		`{"code":0,"extFields":{"b":"1","a":"2"},"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`)
	// Ext entries without HasExt are not written: HasExt is the switch.
	f(Command{Ext: []Field{{"a", "b"}}},
		`{"code":0,"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`)
	// A language byte outside the enum is left out, as fastjson does with null.
	f(Command{Language: 200}, `{"code":0,"flag":0,"opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`)
	f(Command{Language: LanguageGo, Remark: "a\"b\\c/d\te\x00f\x7fg\u2028h\u2029i é"},
		`{"code":0,"flag":0,"language":"GO","opaque":0,"remark":"a\"b\\c/d\te\u0000f\u007Fg\u2028h\u2029i é","serializeTypeCurrentRPC":"JSON","version":0}`)
	// Unknown serialize types are written as JSON.
	f(Command{SerializeType: 7}, `{"code":0,"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`)
}

func TestEncodeBinaryExact(t *testing.T) {
	t.Parallel()
	c := Command{Code: 0, Flag: 1, Opaque: 1005, Version: 409, SerializeType: SerializeRocketMQ, HasExt: true,
		Ext: []Field{{"value", "v2 ünïcode"}}}
	want := "0000000199000003ed000000010000000000000017000576616c75650000000c763220c3bc6ec3af636f6465"
	if got := AppendHeader(nil, &c); string(got) != string(mustHex(t, want)) {
		t.Fatalf("got % x", got)
	}
	// Empty values are written with length 0; the peer reads them as null.
	c = Command{SerializeType: SerializeRocketMQ, HasExt: true, Ext: []Field{{"a", ""}}}
	frame := AppendFrame(nil, &c)
	var out Command
	if err := Decode(frame[4:], &out); err != nil {
		t.Fatal(err)
	}
	if !out.HasExt || len(out.Ext) != 0 {
		t.Fatalf("empty value decoded as %+v", out.Ext)
	}
	// A key too long for the int16 length is dropped rather than corrupting the frame.
	c = Command{SerializeType: SerializeRocketMQ, Ext: []Field{{strings.Repeat("k", 1<<15), "v"}, {"b", "c"}}}
	frame = AppendFrame(nil, &c)
	if err := Decode(frame[4:], &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Ext) != 1 || out.Ext[0] != (Field{"b", "c"}) {
		t.Fatalf("got %+v", out.Ext)
	}
}

func TestAppendFramePrefix(t *testing.T) {
	t.Parallel()
	c := Command{Code: Success, Flag: FlagResponse, Opaque: 3, Version: ServerVersion}
	body := []byte(`{"topicList":[]}`)
	dst := []byte("keep")
	dst = AppendFramePrefix(dst, &c, len(body))
	dst = append(dst, body...)
	c.Body = body
	if whole := AppendFrame([]byte("keep"), &c); !bytes.Equal(dst, whole) {
		t.Fatalf("prefix+body %q != frame %q", dst, whole)
	}
	var out Command
	if err := Decode(dst[8:], &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Body) != string(body) {
		t.Fatalf("body %q", out.Body)
	}
}

func TestDecodeJSONDialects(t *testing.T) {
	t.Parallel()
	f := func(header string, want Command) {
		t.Helper()
		var c Command
		if err := Decode(rawFrame(SerializeJSON, []byte(header), nil)[4:], &c); err != nil {
			t.Fatalf("%s: %v", header, err)
		}
		if c.Ext == nil {
			c.Ext = []Field{}
		}
		if want.Ext == nil {
			want.Ext = []Field{}
		}
		if !sameCommand(&c, &want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", header, c, want)
		}
	}
	// rocketmq-client-go's key order and empty remark.
	f(`{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"RouteTopic"}}`,
		Command{Code: 105, Language: LanguageGo, Version: 317, Opaque: 1, HasExt: true, Ext: []Field{{"topic", "RouteTopic"}}})
	// Unknown keys of every kind, numbers in ext as literal text.
	f(`{"version":409,"opaque":4242,"language":"JAVA","unknownField":"x","remark":"client remark","flag":0,"extFields":{"topic":"CorpusTopic","numeric":5},"code":105}`,
		Command{Code: 105, Version: 409, Opaque: 4242, Remark: "client remark", HasExt: true,
			Ext: []Field{{"topic", "CorpusTopic"}, {"numeric", "5"}}})
	f(` { "code" : 1 , "x" : { "a" : [ 1 , -2.5e+3 , true , false , null , "s\"" , { } , [ ] ] } , "y":[] , "z":{}, "w":-0.0E1 } `,
		Command{Code: 1})
	f(`{"extFields":{"b":true,"f":false,"n":-1.5e3,"z":0,"gone":null}}`,
		Command{HasExt: true, Ext: []Field{{"b", "true"}, {"f", "false"}, {"n", "-1.5e3"}, {"z", "0"}}})
	// Nulls leave fields at their defaults; a null extFields is no extFields.
	f(`{"code":null,"remark":null,"language":null,"extFields":null,"flag":null}`, Command{})
	f(`{"extFields":{"a":"1"},"extFields":null}`, Command{})
	// A repeated key wins last; a repeated extFields replaces the map.
	f(`{"code":1,"code":2,"extFields":{"a":"1"},"extFields":{"b":"2","b":"3","c":"4","c":null}}`,
		Command{Code: 2, HasExt: true, Ext: []Field{{"b", "3"}}})
	// Escapes, surrogate pairs, lone surrogates, escaped keys.
	f(`{"remark":"a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\u4E2D\ud83d\ude00|\ud83d|\ude00|\ud83dx","extFields":{"k\u0065y":"\u0000"},"c\u006fde":7}`,
		Command{Code: 7, Remark: "a\"b\\c/d\be\ff\ng\rh\ti\u00e9中😀|\uFFFD|\uFFFD|\uFFFDx", HasExt: true, Ext: []Field{{"key", "\x00"}}})
	f(`{"remark":"\ud83d\u0041"}`, Command{Remark: "\uFFFDA"})
	f(`{"remark":"raw ü and \u00fc"}`, Command{Remark: "raw ü and ü"})
	// Languages: names, ordinals, unknowns.
	f(`{"language":"NODE_JS"}`, Command{Language: LanguageNodeJS})
	f(`{"language":"java"}`, Command{Language: LanguageUnknown})
	f(`{"language":"KOTLIN"}`, Command{Language: LanguageUnknown})
	f(`{"language":9}`, Command{Language: LanguageGo})
	f(`{"language":14}`, Command{Language: LanguageUnknown})
	f(`{"language":-1}`, Command{Language: LanguageUnknown})
	f(`{"language":256}`, Command{Language: LanguageUnknown})
	// serializeTypeCurrentRPC is informational: the type byte wins.
	f(`{"serializeTypeCurrentRPC":"ROCKETMQ"}`, Command{})
	f(`{}`, Command{})
	f(`{"code":-2147483648,"opaque":2147483647}`, Command{Code: -1 << 31, Opaque: 1<<31 - 1})
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	f := func(name string, frame []byte, reason string) {
		t.Helper()
		var c Command
		err := Decode(frame, &c)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: got %v, want a *DecodeError", name, err)
		}
		if de.Reason != reason {
			t.Fatalf("%s: reason %q (%v), want %q", name, de.Reason, err, reason)
		}
		if !strings.Contains(err.Error(), reason) {
			t.Fatalf("%s: message %q lacks the reason", name, err)
		}
	}
	noPrefix := func(b []byte) []byte { return b[4:] }
	json := func(h string) []byte { return noPrefix(rawFrame(SerializeJSON, []byte(h), nil)) }
	bin := func(h []byte) []byte { return noPrefix(rawFrame(SerializeRocketMQ, h, nil)) }

	f("empty", nil, ReasonFrameTooShort)
	f("3 bytes", []byte{0, 0, 0}, ReasonFrameTooShort)
	f("header beyond frame", []byte{0, 0, 0, 5, '{', '}'}, ReasonBadHeaderLength)
	f("header beyond frame, max", []byte{0, 0xFF, 0xFF, 0xFF}, ReasonBadHeaderLength)
	for typ := 2; typ < 256; typ++ {
		f("type", noPrefix(rawFrame(byte(typ), []byte("{}"), nil)), ReasonUnknownSerializeType)
	}

	for _, h := range []string{
		``, ` `, `{`, `}`, `[]`, `null`, `"x"`, `{"code":1`, `{"code":1,}`, `{"code":}`, `{"code" 1}`,
		`{code:1}`, `{'code':1}`, `{"code":1}x`, `{"code":1}{}`, `{"code":"1"}`, `{"code":1.5}`, `{"code":1e2}`,
		`{"code":01}`, `{"code":-}`, `{"code":2147483648}`, `{"code":-2147483649}`, `{"code":99999999999999999999}`,
		`{"code":true}`, `{"code":[]}`, `{"flag":{}}`, `{"remark":1}`, `{"remark":"abc}`, `{"remark":"\x"}`,
		`{"remark":"\u12"}`, `{"remark":"\u12G4"}`, `{"remark":"\`, `{"language":true}`, `{"language":"JA`,
		`{"extFields":[]}`, `{"extFields":"a"}`, `{"extFields":{"a":{}}}`, `{"extFields":{"a":[]}}`,
		`{"extFields":{"a"}}`, `{"extFields":{"a":"b",}}`, `{"extFields":{1:"b"}}`, `{"extFields":{"a":tru}}`,
		`{"extFields":{"a":"b"}`, `{"extFields":{"a":1.}}`, `{"extFields":{"a":-}}`, `{"x":nul}`, `{"x":[1,]}`,
		`{"x":[1 2]}`, `{"x":{"a":1,}}`, `{"x":{1:1}}`, `{"x":+1}`, `{"x":.5}`, `{"x":1e}`, `{"x":'a'}`,
		`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		f("json "+h, json(h), ReasonBadJSONHeader)
	}

	fixed := func(remarkLen int32, tail ...byte) []byte {
		h := mustHex(t, "0069 00 01df 00000007 00000000")
		h = binary.BigEndian.AppendUint32(h, uint32(remarkLen))
		return append(h, tail...)
	}
	u32 := func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f("binary short", bin(make([]byte, 20)), ReasonBadBinaryHeader)
	f("binary remark beyond header", bin(fixed(5, 'a', 'b', 0, 0, 0, 0)), ReasonBadBinaryHeader)
	f("binary remark eats ext length", bin(fixed(2, 'a', 'b', 0, 0, 0)), ReasonBadBinaryHeader)
	f("binary negative remark", bin(fixed(-1, 0, 0, 0, 0)), ReasonBadBinaryHeader)
	f("binary ext beyond header", bin(cat(fixed(0), u32(10), []byte{0, 1, 'a'})), ReasonBadBinaryHeader)
	f("binary negative ext", bin(cat(fixed(0), u32(-4))), ReasonBadBinaryHeader)
	f("binary key length cut", bin(cat(fixed(0), u32(1), []byte{0})), ReasonBadBinaryHeader)
	f("binary key beyond map", bin(cat(fixed(0), u32(4), []byte{0, 5, 'a', 'b'})), ReasonBadBinaryHeader)
	f("binary negative key", bin(cat(fixed(0), u32(6), []byte{0xFF, 0xFF, 0, 0, 0, 0})), ReasonBadBinaryHeader)
	f("binary value length cut", bin(cat(fixed(0), u32(5), []byte{0, 1, 'a', 0, 0})), ReasonBadBinaryHeader)
	f("binary value beyond map", bin(cat(fixed(0), u32(8), []byte{0, 1, 'a', 0, 0, 0, 2, 'b'}, []byte("body"))), ReasonBadBinaryHeader)
	f("binary negative value", bin(cat(fixed(0), u32(7), []byte{0, 1, 'a', 0x80, 0, 0, 0})), ReasonBadBinaryHeader)
}

func TestDecodeBinaryLenient(t *testing.T) {
	t.Parallel()
	// What Java accepts: zero-length strings are null, trailing header bytes
	// are ignored, a repeated key wins last.
	h := mustHex(t, "0069 09 ffff 00000001 00000002 00000000")
	h = binary.BigEndian.AppendUint32(h, 30)
	h = append(h, 0, 1, 'a', 0, 0, 0, 1, 'x') // a=x
	h = append(h, 0, 0, 0, 0, 0, 1, 'y')      // null key
	h = append(h, 0, 1, 'b', 0, 0, 0, 0)      // b=null
	h = append(h, 0, 1, 'a', 0, 0, 0, 1, 'z') // a=z
	if len(h) != 21+30 {
		t.Fatalf("test header is %d bytes", len(h))
	}
	h = append(h, "trailing"...)
	var c Command
	if err := Decode(rawFrame(SerializeRocketMQ, h, []byte("B"))[4:], &c); err != nil {
		t.Fatal(err)
	}
	want := Command{Code: 105, Language: LanguageGo, Version: -1, Opaque: 1, Flag: 2, HasExt: true,
		Ext: []Field{{"a", "z"}}, Body: []byte("B"), SerializeType: SerializeRocketMQ}
	if !sameCommand(&c, &want) {
		t.Fatalf("got %+v", c)
	}
	// A byte outside the language enum is kept as is (Java: null).
	h[2] = 77
	if err := Decode(rawFrame(SerializeRocketMQ, h, nil)[4:], &c); err != nil || c.Language != 77 {
		t.Fatalf("language %d, %v", c.Language, err)
	}
}

func TestFrameLength(t *testing.T) {
	t.Parallel()
	f := func(l uint32, max int, want int, reason string) {
		t.Helper()
		got, err := FrameLength(binary.BigEndian.AppendUint32(nil, l), max)
		if reason == "" {
			if err != nil || got != want {
				t.Fatalf("L=%d max=%d: %d, %v; want %d", l, max, got, err, want)
			}
			return
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Reason != reason {
			t.Fatalf("L=%d max=%d: %v, want %s", l, max, err, reason)
		}
	}
	f(4, 0, 4, "")
	f(45, DefaultMaxFrame, 45, "")
	f(DefaultMaxFrame-4, DefaultMaxFrame, DefaultMaxFrame-4, "")
	f(DefaultMaxFrame-4, 0, DefaultMaxFrame-4, "")
	f(DefaultMaxFrame-3, DefaultMaxFrame, 0, ReasonFrameTooLarge)
	f(0xFFFFFFFF, DefaultMaxFrame, 0, ReasonFrameTooLarge)
	f(0xFFFFFFFC, 0, 0, ReasonFrameTooLarge)
	f(96, 100, 96, "")
	f(97, 100, 0, ReasonFrameTooLarge)
	f(3, 0, 0, ReasonFrameTooShort)
	f(0, 0, 0, ReasonFrameTooShort)
	if _, err := FrameLength([]byte{0, 0, 0}, 0); err == nil {
		t.Fatal("3-byte prefix accepted")
	}
}

// A frame whose length field lies (claims more than follows) is not
// decodable as a whole: the framing layer waits for bytes that never come,
// and the slice it holds is rejected.
func TestLyingLength(t *testing.T) {
	t.Parallel()
	frame := rawFrame(SerializeJSON, []byte(`{"code":1}`), []byte("body"))
	binary.BigEndian.PutUint32(frame, uint32(len(frame)+100))
	r := netpoll.NewLinkBuffer()
	if _, err := r.WriteBinary(frame); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	var c Command
	if err := ReadCommand(r, 0, &c); err == nil {
		t.Fatal("frame shorter than its length field was read")
	}
	// Claiming less than the header: the header-length word then lies.
	short := rawFrame(SerializeJSON, []byte(`{"code":1}`), nil)
	var de *DecodeError
	if err := Decode(short[4:8+5], &c); !errors.As(err, &de) || de.Reason != ReasonBadHeaderLength {
		t.Fatalf("got %v", err)
	}
}

func TestReadCommand(t *testing.T) {
	t.Parallel()
	r := netpoll.NewLinkBuffer()
	reqs := []Command{
		{Code: GetRouteInfoByTopic, Opaque: 1, HasExt: true, Ext: []Field{{"topic", "T\u00e9"}}},
		{Code: RegisterBroker, Opaque: 2, SerializeType: SerializeRocketMQ, HasExt: true,
			Ext: []Field{{"brokerName", "b"}}, Body: []byte("body bytes")},
		{Code: QueryDataVersion, Opaque: 3, Flag: FlagOneway, Remark: "x\ny"},
	}
	for i := range reqs {
		if _, err := r.WriteBinary(AppendFrame(nil, &reqs[i])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.WriteBinary(rawFrame(SerializeJSON, []byte("{"), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteBinary([]byte{0x01, 0, 0, 0}); err != nil { // 16 MiB + 4
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	var c Command
	for i := range reqs {
		if err := ReadCommand(r, DefaultMaxFrame, &c); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !sameCommand(&c, &reqs[i]) {
			t.Fatalf("frame %d:\n got %+v\nwant %+v", i, c, reqs[i])
		}
		if err := r.Release(); err != nil {
			t.Fatal(err)
		}
	}
	var de *DecodeError
	if err := ReadCommand(r, 0, &c); !errors.As(err, &de) || de.Reason != ReasonBadJSONHeader {
		t.Fatalf("garbage header: %v", err)
	}
	if err := ReadCommand(r, 0, &c); !errors.As(err, &de) || de.Reason != ReasonFrameTooLarge {
		t.Fatalf("huge frame: %v", err)
	}
	if r.Len() != 4 {
		t.Fatalf("an oversized frame's prefix was consumed: %d bytes left", r.Len())
	}
}

func TestCommandHelpers(t *testing.T) {
	t.Parallel()
	var c Command
	if _, ok := c.ExtValue("a"); ok {
		t.Fatal("empty command has ext")
	}
	c.SetExt("a", "1")
	c.SetExt("b", "2")
	c.SetExt("a", "3")
	if !c.HasExt || !reflect.DeepEqual(c.Ext, []Field{{"a", "3"}, {"b", "2"}}) {
		t.Fatalf("ext %+v", c.Ext)
	}
	if v, ok := c.ExtValue("b"); !ok || v != "2" {
		t.Fatalf("b = %q, %v", v, ok)
	}
	c.Flag = FlagResponse
	if !c.IsResponse() || c.IsOneway() {
		t.Fatal("response flags")
	}
	c.Flag = FlagOneway
	if c.IsResponse() || !c.IsOneway() {
		t.Fatal("oneway flags")
	}
	c.Code, c.Remark, c.Body, c.Version = 5, "r", []byte("x"), 3
	backing := &c.Ext[:1][0]
	c.Reset()
	if c.Code != 0 || c.Remark != "" || c.Body != nil || c.Version != 0 || c.Flag != 0 || c.HasExt ||
		len(c.Ext) != 0 || cap(c.Ext) == 0 {
		t.Fatalf("after Reset: %+v", c)
	}
	if *backing != (Field{}) {
		t.Fatal("Reset kept old ext strings alive")
	}
	if v, ok := c.ExtValue("a"); ok || v != "" {
		t.Fatal("ext survived Reset")
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for b := 0; b < 256; b++ {
		name, ok := LanguageName(byte(b))
		if ok != (b <= 13) {
			t.Fatalf("LanguageName(%d) ok=%v", b, ok)
		}
		if ok && LanguageByName(name) != byte(b) {
			t.Fatalf("%s does not map back to %d", name, b)
		}
	}
	if LanguageByName("") != LanguageUnknown || LanguageByName("Go") != LanguageUnknown {
		t.Fatal("unknown names")
	}
	f := func(code int32, want string) {
		t.Helper()
		if got := RequestCodeName(code); got != want {
			t.Fatalf("RequestCodeName(%d) = %s, want %s", code, got, want)
		}
	}
	f(GetRouteInfoByTopic, "GET_ROUTEINFO_BY_TOPIC")
	f(BrokerHeartbeat, "BROKER_HEARTBEAT")
	f(NotifyMinBrokerIDChange, "NOTIFY_MIN_BROKER_ID_CHANGE")
	f(ControllerElectMaster, "CONTROLLER_ELECT_MASTER")
	f(RaftBrokerHeartBeatEventCode, "RAFT_BROKER_HEART_BEAT_EVENT_REQUEST")
	f(9999, "UNKNOWN")
	f(Success, "UNKNOWN")
	for code, want := range map[int32]string{Success: "SUCCESS", TopicNotExist: "TOPIC_NOT_EXIST", GoAway: "GO_AWAY",
		ControllerNotLeader: "CONTROLLER_NOT_LEADER", ControllerBrokerLiveInfoNotExists: "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS",
		4: "UNKNOWN", PutKVConfig: "UNKNOWN"} {
		if got := ResponseCodeName(code); got != want {
			t.Fatalf("ResponseCodeName(%d) = %s, want %s", code, got, want)
		}
	}
}

func TestDecodeErrorUnwrap(t *testing.T) {
	t.Parallel()
	var c Command
	err := Decode([]byte{2, 0, 0, 0}, &c)
	var de *DecodeError
	if !errors.As(err, &de) || errors.Unwrap(err) == nil || errors.Unwrap(err) != de.Err {
		t.Fatalf("got %v", err)
	}
	if (&DecodeError{Reason: ReasonFrameTooShort}).Error() != "decode frame: frame_too_short" {
		t.Fatal("message without detail")
	}
}

func TestAppendInt32MatchesStrconv(t *testing.T) {
	t.Parallel()
	vals := []int32{0, 1, 9, 10, 11, 99, 100, 479, 1_000_000_000, 1<<31 - 1, -1, -9, -10, -1 << 31, -2147483647}
	for v := int32(-2000); v < 2000; v++ {
		vals = append(vals, v)
	}
	for i := int64(1); i < 1<<31; i = i*3 + 1 {
		vals = append(vals, int32(i), int32(-i))
	}
	for p := int64(10); p < 1<<31; p *= 10 {
		vals = append(vals, int32(p-1), int32(p), int32(p+1), int32(1-p), int32(-p), int32(-p-1))
	}
	for b := 0; b < 31; b++ {
		vals = append(vals, int32(1)<<b, int32(1)<<b-1, -(int32(1) << b))
	}
	for _, v := range vals {
		if got, want := string(appendInt32([]byte("x"), v)), "x"+strconv.FormatInt(int64(v), 10); got != want {
			t.Fatalf("appendInt32(%d) = %q, want %q", v, got, want)
		}
		if got, want := intLen(v), len(strconv.FormatInt(int64(v), 10)); got != want {
			t.Fatalf("intLen(%d) = %d, want %d", v, got, want)
		}
	}
}

// ReadCommandOfLength, for a caller that peeked the length prefix, checks
// and answers as ReadCommand does: the same command from a good frame, the
// same error for a length below the header word or over the limit.
func TestReadCommandOfLengthAgreesWithReadCommand(t *testing.T) {
	t.Parallel()
	good := rawFrame(SerializeJSON, []byte(`{"code":105,"extFields":{"topic":"T"},"opaque":7}`), []byte("body"))
	const max = 256
	for _, length := range []uint32{0, 3, 4, uint32(len(good) - 4), max - 4, max - 3, 1<<32 - 1} {
		frame := append([]byte(nil), good...)
		binary.BigEndian.PutUint32(frame, length)
		read := func(viaLength bool) (*Command, error) {
			r := netpoll.NewLinkBuffer()
			if _, err := r.WriteBinary(frame); err != nil {
				t.Fatal(err)
			}
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			var c Command
			if viaLength {
				return &c, ReadCommandOfLength(r, length, max, &c)
			}
			return &c, ReadCommand(r, max, &c)
		}
		c1, err1 := read(false)
		c2, err2 := read(true)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("length %d: ReadCommand %v, ReadCommandOfLength %v", length, err1, err2)
		}
		if err1 == nil && !sameCommand(c1, c2) {
			t.Fatalf("length %d: ReadCommand %+v, ReadCommandOfLength %+v", length, c1, c2)
		}
		if length == uint32(len(good)-4) && err1 != nil {
			t.Fatalf("good frame: %v", err1)
		}
	}
}

// Bytes that are not UTF-8 read as U+FFFD, as Java's decoder reads them: two
// keys of different invalid bytes are one key, the last value wins, and the
// header written back reads the same. Found by FuzzJSONHeader: both keys
// were kept as their raw bytes, then written as U+FFFD each and read back
// as one.
func TestInvalidUTF8ReadsAsJavaReadsIt(t *testing.T) {
	header := []byte("{\"code\":1,\"remark\":\"a\xffb\",\"extFields\":{\"\xd1\":\"x\",\"\xa3\":\"y\",\"k\":\"\xc3\"}}")
	var c Command
	if err := Decode(rawFrame(SerializeJSON, header, nil)[4:], &c); err != nil {
		t.Fatal(err)
	}
	want := []Field{{Key: "\uFFFD", Value: "y"}, {Key: "k", Value: "\uFFFD"}}
	if c.Remark != "a\uFFFDb" || !slices.Equal(c.Ext, want) {
		t.Fatalf("remark %q, ext %q; want %q, %q", c.Remark, c.Ext, "a\uFFFDb", want)
	}
	var again Command
	if err := Decode(AppendFrame(nil, &c)[4:], &again); err != nil {
		t.Fatal(err)
	}
	if again.Remark != c.Remark || !slices.Equal(again.Ext, c.Ext) {
		t.Fatalf("written back and read: remark %q, ext %q", again.Remark, again.Ext)
	}
}
