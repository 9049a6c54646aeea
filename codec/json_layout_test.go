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

// TestLayoutStringsByteByByte puts every byte value at every position of
// an extFields key, an extFields value and the language, across the
// eight-byte words the fast path reads strings by: it takes exactly the
// printable ASCII that is neither a quote nor a backslash, and gives what
// the scanner gives.
func TestLayoutStringsByteByByte(t *testing.T) {
	t.Parallel()
	const pad = "abcdefghijklmnopqrst" // 20 bytes: two words and a part
	for pos := 0; pos <= len(pad); pos++ {
		for b := 0; b < 256; b++ {
			s := pad[:pos] + string([]byte{byte(b)}) + pad[pos:]
			for _, h := range []string{
				`{"code":105,"extFields":{"topic":"` + s + `"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":1}`,
				`{"code":105,"extFields":{"` + s + `":"v"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":1}`,
				`{"code":105,"flag":0,"language":"` + s + `","opaque":7,"serializeTypeCurrentRPC":"JSON","version":1}`,
			} {
				var c Command
				took := decodeLayout([]byte(h), &c)
				if want := b >= 0x20 && b < 0x7f && b != '"' && b != '\\'; took != want {
					t.Fatalf("byte %#x at %d: fast path took it %v, want %v: %q", b, pos, took, want, h)
				}
				frame := append([]byte{0, 0, 0, byte(len(h))}, h...)
				frame[2] = byte(len(h) >> 8)
				var fast Command
				err := Decode(frame, &fast)
				checkSlowPathAgrees(t, frame, &fast, err)
			}
		}
	}
}

// TestLayoutIntegers puts integers of every length from 1 to 12 digits
// (leading zeros, int32's bounds and one past them, a digit run cut by
// each byte value) in each integer field, with more than and fewer than
// eight bytes after them: the fast path, which reads up to eight digits at
// once, gives what the scanner gives.
func TestLayoutIntegers(t *testing.T) {
	t.Parallel()
	nums := []string{"0", "00", "01", "7", "10", "2147483647", "2147483648", "4294967295", "4294967296",
		"9999999999", "12345678901", "999999999999", "99999999", "100000000", "0000000000"}
	for n := 1; n <= 12; n++ {
		nums = append(nums, "123456789012"[:n], "987654321098"[:n])
	}
	for b := 0; b < 256; b++ {
		nums = append(nums, "1234"+string([]byte{byte(b)})+"567",
			"12345678"+string([]byte{byte(b)})+"90", "123456789"+string([]byte{byte(b)})+"0")
	}
	for _, num := range nums {
		for _, h := range []string{
			`{"code":` + num + `,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
			`{"code":1,"extFields":{"k":"v"},"flag":` + num + `,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}`,
			`{"code":1,"flag":0,"language":"JAVA","opaque":` + num + `,"serializeTypeCurrentRPC":"JSON","version":1}`,
			`{"code":1,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":` + num + `}`,
		} {
			frame := append([]byte{0, 0, 0, byte(len(h))}, h...)
			var fast Command
			err := Decode(frame, &fast)
			checkSlowPathAgrees(t, frame, &fast, err)
		}
	}
}
