// Tests of the JSON header's fast path: the header this project's encoder
// (and Java's fastjson) writes for a request is taken by it, whatever else
// is left to the scanner, and both give the same command.

package codec

import "testing"

func TestLayoutTakesTheEncodersRequests(t *testing.T) {
	t.Parallel()
	req := Command{Code: GetRouteInfoByTopic, Version: ServerVersion, Opaque: 1_000_000_042, Language: LanguageJava}
	req.SetExt("topic", "BenchTopic-0000042")
	req.SetExt("acceptStandardJsonOnly", "true")
	bare := Command{Code: 7, Flag: 2, Opaque: 0, Version: 0, Language: LanguageJava}
	for _, in := range []*Command{&req, &bare} {
		frame := AppendFrame(nil, in)
		h := frame[8:]
		var c Command
		if !decodeLayout(h, &c) {
			t.Fatalf("fast path refused %s", h)
		}
		c.extDone()
		c.SerializeType = SerializeJSON
		var want Command
		if err := Decode(frame[4:], &want); err != nil {
			t.Fatal(err)
		}
		if !sameCommand(&c, &want) {
			t.Fatalf("fast path gave\n%+v\nwant\n%+v", c, want)
		}
	}
}

func TestLayoutLeavesTheRestToTheScanner(t *testing.T) {
	t.Parallel()
	for _, h := range []string{
		`{"code":1,"flag":0,"language":"JAVA","opaque":1,"remark":"x","serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1, "flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":-1,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"flag":0,"language":"JAVA","opaque":12345678901,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"extFields":{"k":"\u0041"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"extFields":{"k":1},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1} `,
		`{"flag":0,"code":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
	} {
		c := Command{Code: 99}
		if decodeLayout([]byte(h), &c) || c.Code != 99 {
			t.Errorf("fast path took (or touched the command for) %s", h)
		}
	}
}
