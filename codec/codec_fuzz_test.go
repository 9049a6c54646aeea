// Fuzz targets for the frame decoder: whole frames, JSON and binary headers
// alone, and a byte stream of frames arriving in random chunks.

package codec

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cloudwego/netpoll"
)

// checkRoundTrip asserts that first, a command Decode accepted, survives an
// encode and a second decode unchanged, apart from what the wire cannot
// carry: a binary header has no "empty extFields", and a JSON header drops a
// language outside the enum (readers then assume JAVA). It returns the
// re-encoded frame, prefix included, and the command decoded from it.
func checkRoundTrip(t *testing.T, first *Command) ([]byte, *Command) {
	t.Helper()
	enc := AppendFrame(nil, first)
	l, err := FrameLength(enc, 1<<30)
	if err != nil || l != len(enc)-4 {
		t.Fatalf("re-encoded frame has length %d, %v (%d bytes)", l, err, len(enc))
	}
	var second Command
	if err := Decode(enc[4:], &second); err != nil {
		t.Fatalf("re-encoded frame does not decode: %v\n%q", err, enc)
	}
	want := *first
	if want.SerializeType == SerializeRocketMQ {
		want.HasExt = len(want.Ext) > 0
	} else {
		if _, ok := LanguageName(want.Language); !ok {
			want.Language = LanguageJava
		}
		// JSON writes bytes that are not UTF-8 as U+FFFD, one each.
		want.Remark = string([]rune(want.Remark))
		want.Ext = append([]Field(nil), want.Ext...)
		for i := range want.Ext {
			want.Ext[i] = Field{string([]rune(want.Ext[i].Key)), string([]rune(want.Ext[i].Value))}
		}
	}
	if !sameCommand(&second, &want) {
		t.Fatalf("round trip changed the command\nfirst  %+v\nsecond %+v\nframe %q", want, second, enc)
	}
	// Once normalised, encoding is a fixed point: what we read back from
	// our own frame, we write again byte for byte.
	if again, norm := AppendFrame(nil, &second), AppendFrame(nil, &want); string(again) != string(norm) {
		t.Fatalf("second encode differs\nfirst  %q\nsecond %q", norm, again)
	}
	return enc, &second
}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *DecodeError", err)
	}
	switch de.Reason {
	case ReasonFrameTooLarge, ReasonFrameTooShort, ReasonBadHeaderLength,
		ReasonUnknownSerializeType, ReasonBadJSONHeader, ReasonBadBinaryHeader:
	default:
		t.Fatalf("unknown reason %q in %v", de.Reason, err)
	}
}

// FuzzDecode feeds arbitrary frames (without the length prefix) to Decode.
// It must never panic, and whatever it accepts must round-trip.
func FuzzDecode(f *testing.F) {
	for _, fr := range loadFrames(f) {
		f.Add(fr.Raw()[4:])
	}
	for _, tc := range allocFrames {
		f.Add(tc.frame[4:])
	}
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		var first Command
		if err := Decode(frame, &first); err != nil {
			checkDecodeError(t, err)
			return
		}
		enc, second := checkRoundTrip(t, &first)
		// The same frame split in two link-buffer nodes at a point the input
		// picks: the result must not depend on how the bytes arrived.
		lb := netpoll.NewLinkBuffer()
		k := len(frame) % len(enc)
		for _, part := range [][]byte{enc[:k], enc[k:]} {
			if _, err := lb.WriteBinary(part); err != nil {
				t.Fatal(err)
			}
			if err := lb.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		var third Command
		if err := ReadCommand(lb, 1<<30, &third); err != nil {
			t.Fatalf("ReadCommand of the re-encoded frame: %v\n%q", err, enc)
		}
		if !sameCommand(&third, second) {
			t.Fatalf("ReadCommand disagrees with Decode\n%+v\n%+v", third, *second)
		}
		if err := lb.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

// headerSeeds returns the headers of the recorded frames of one serialize
// type, and of the hand-made frames used by the allocation tests.
func headerSeeds(f *testing.F, typ byte) [][]byte {
	var out [][]byte
	add := func(frame []byte) {
		if len(frame) < 8 || frame[4] != typ {
			return
		}
		h := int(binary.BigEndian.Uint32(frame[4:]) & maxHeaderLen)
		if 8+h <= len(frame) {
			out = append(out, frame[8:8+h])
		}
	}
	for _, fr := range loadFrames(f) {
		add(fr.Raw())
	}
	for _, tc := range allocFrames {
		add(tc.frame)
	}
	return out
}

// checkSlowPathAgrees decodes the JSON frame again with the plain scanner
// (no decodeLayout, no known keys, no short integers) and checks that the
// outcome is the same: the same command, or an error at the same offset.
func checkSlowPathAgrees(t *testing.T, frame []byte, fast *Command, fastErr error) {
	t.Helper()
	var slow Command
	slowErr := decodePlainJSON(frame, &slow)
	if (fastErr == nil) != (slowErr == nil) || (fastErr != nil && fastErr.Error() != slowErr.Error()) {
		t.Fatalf("shortcuts change the error: %v, without them %v", fastErr, slowErr)
	}
	if fastErr == nil && !sameCommand(fast, &slow) {
		t.Fatalf("shortcuts change the command:\n%+v\nwithout them\n%+v", fast, &slow)
	}
}

// decodePlainJSON is Decode of a JSON frame without a body, with the
// header read by the plain scanner alone.
func decodePlainJSON(frame []byte, c *Command) error {
	c.Reset()
	if len(frame) < 4 || frame[0] != SerializeJSON || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		panic("decodePlainJSON takes a JSON frame without a body")
	}
	s := jsonScanner{buf: frame[4:], c: c}
	err := s.header()
	c.extDone()
	if err == nil {
		c.SerializeType = SerializeJSON
	}
	return err
}

// FuzzJSONHeader aims at the JSON scanner alone: the input is the header
// text, framed with a correct header length, so no mutation is wasted on
// the framing.
func FuzzJSONHeader(f *testing.F) {
	for _, h := range headerSeeds(f, SerializeJSON) {
		f.Add(h)
	}
	// Spec examples and dialects: a Go client's header, nulls, nesting,
	// escapes, surrogate pairs, numbers in odd forms.
	for _, s := range []string{
		`{}`,
		`{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"RouteTopic"}}`,
		`{"code":null,"extFields":null,"remark":null}`,
		`{"code":-1,"flag":2147483647,"opaque":-2147483648,"version":0}`,
		`{"extFields":{},"x":{"y":[1,2,{"z":"w"}],"n":-1.5e-3,"t":true,"f":false}}`,
		`{"remark":"\ud83d\ude00\u2028\/\\\"\b\f\n\r\t","extFields":{"k":"\u0000"}}`,
		`{"remark":"\ud800"}`,
		`{"language":"CPP","language":"JAVA"}`,
		`{"extFields":{"a":"1","a":"2"}}`,
		` { "code" : 1 } `,
		`{"code":0123}`, `{"code":1e3}`, `{"code":1.0}`, `{"code":999999999,"flag":1000000000,"opaque":2147483648}`,
		`{"codex":1,"code\u0000":2,"cod":3,"code":4}`, `{"code":7 ,"flag":8` + "\t" + `,"opaque":9` + "\n}",
		`{"extFields":{"topic":"abcdefghijklmnopqrstuvw\"xyz"},"remark":"0123456789abcdef\\"}`,
		// The fast path's layout and near misses of it.
		`{"code":105,"extFields":{"topic":"BenchTopic-0000042"},"flag":0,"language":"JAVA","opaque":1000000042,"serializeTypeCurrentRPC":"JSON","version":479}`,
		`{"code":105,"extFields":{"a":"1","b":"","a":"3"},"flag":0,"language":"GO","opaque":2147483647,"serializeTypeCurrentRPC":"JSON","version":0}`,
		`{"code":105,"extFields":{},"flag":0,"language":"X","opaque":0,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"flag":0,"language":"JAVA","opaque":2147483648,"serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"flag":0,"language":"JAVA","opaque":1,"remark":"r","serializeTypeCurrentRPC":"JSON","version":1}`,
		`{"code":1,"extFields":{"k":"v\u0041"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, header []byte) {
		if len(header) > maxHeaderLen {
			return
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(header)))
		frame = append(frame, header...)
		var c Command
		err := Decode(frame, &c)
		checkSlowPathAgrees(t, frame, &c, err)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if c.SerializeType != SerializeJSON || c.Body != nil {
			t.Fatalf("JSON frame decoded as type %d with body %q", c.SerializeType, c.Body)
		}
		_, _ = checkRoundTrip(t, &c)
	})
}

// FuzzBinaryHeader is FuzzJSONHeader for the ROCKETMQ binary layout, with a
// body after the header so lengths that run past the header are caught.
func FuzzBinaryHeader(f *testing.F) {
	for _, h := range headerSeeds(f, SerializeRocketMQ) {
		f.Add(h, []byte("body"))
	}
	for _, c := range []*Command{
		{Code: GetRouteInfoByTopic, Version: 479, Opaque: 7, HasExt: true, Ext: []Field{{"topic", "TopicTest"}}},
		{Code: -1, Language: 9, Version: -1, Opaque: -1, Flag: 3, Remark: "r\x00\xff"},
		{Code: PutKVConfig, HasExt: true, Ext: []Field{{"namespace", "N"}, {"key", "k"}, {"value", "v"}}},
	} {
		c.SerializeType = SerializeRocketMQ
		f.Add(AppendHeader(nil, c), []byte(nil))
	}
	// Lengths that lie: a remark and an extFields map running past the end,
	// negative lengths, a key of length -1.
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, []byte("xxxx"))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0xff, 0xff, 0, 0, 0, 0}, []byte(nil))
	f.Fuzz(func(t *testing.T, header, body []byte) {
		if len(header) > maxHeaderLen {
			return
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(SerializeRocketMQ)<<24|uint32(len(header)))
		frame = append(frame, header...)
		frame = append(frame, body...)
		var c Command
		if err := Decode(frame, &c); err != nil {
			checkDecodeError(t, err)
			return
		}
		if string(c.Body) != string(body) {
			t.Fatalf("body %q, want %q", c.Body, body)
		}
		_, _ = checkRoundTrip(t, &c)
	})
}

// chunkReader hands out its data in pieces whose sizes come from rng, the
// way TCP segments arrive: a frame may be split anywhere, several frames
// may come in one piece.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + r.rng.IntN(r.max)
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzReadCommandChunks feeds a byte stream (length prefixes included) to
// ReadCommand through a netpoll Reader that receives it in random chunks.
// The commands it yields, and where and why it stops, must be exactly what
// FrameLength and Decode give on the whole stream at once; every command
// must round-trip; and the reader must come to an end (no hang) when the
// stream does. The frame limit is small so that the fuzzer reaches it.
func FuzzReadCommandChunks(f *testing.F) {
	// Whole recorded connections, frames back to back as they were sent.
	byConn := map[int][]byte{}
	for _, fr := range loadFrames(f) {
		if fr.Dir == "req" {
			byConn[fr.Conn] = append(byConn[fr.Conn], fr.Raw()...)
		}
	}
	for _, stream := range byConn {
		if len(stream) > 64<<10 {
			stream = stream[:64<<10] // a cut frame at the end is a case too
		}
		f.Add(stream, uint64(len(stream)), uint16(7))
	}
	var two []byte
	for _, tc := range allocFrames {
		two = append(two, tc.frame...)
	}
	f.Add(two, uint64(1), uint16(1))
	f.Add([]byte{0, 0, 0, 0}, uint64(0), uint16(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, '{', '}'}, uint64(0), uint16(3))
	f.Add([]byte{0, 0, 0, 6, 0, 0, 0, 2, '{', '}', 0, 0, 0, 6, 2, 0, 0, 2, '{', '}'}, uint64(9), uint16(2))

	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, stream []byte, seed uint64, maxChunk uint16) {
		// The reference: the whole stream in memory.
		type step struct {
			frame []byte // re-encoded command
			err   error
		}
		var want []step
		for rest := stream; ; {
			if len(rest) < 4 {
				break
			}
			l, err := FrameLength(rest, limit)
			if err != nil {
				want = append(want, step{err: err})
				break
			}
			if len(rest) < 4+l {
				break
			}
			var c Command
			if err := Decode(rest[4:4+l], &c); err != nil {
				want = append(want, step{err: err})
				break
			}
			enc, _ := checkRoundTrip(t, &c)
			want = append(want, step{frame: enc})
			rest = rest[4+l:]
		}

		cr := &chunkReader{data: stream, rng: rand.New(rand.NewPCG(seed, seed>>7)), max: 1 + int(maxChunk)}
		r := netpoll.NewReader(cr)
		defer r.Release()
		var c Command
		for i := 0; ; i++ {
			// Each call consumes at least 4 bytes or ends the loop, so the
			// loop is bounded by the stream length.
			if i > len(stream)/4+1 {
				t.Fatalf("more than %d commands from %d bytes", i, len(stream))
			}
			err := ReadCommand(r, limit, &c)
			if err != nil {
				var de *DecodeError
				if errors.As(err, &de) {
					if i >= len(want) || want[i].err == nil || want[i].err.Error() != err.Error() {
						t.Fatalf("command %d: stream error %v, whole-buffer result %+v", i, err, want[i:])
					}
					return
				}
				// End of the stream, possibly in the middle of a frame.
				if i != len(want) {
					t.Fatalf("stream ended after %d commands (%v), whole buffer gave %d", i, err, len(want))
				}
				return
			}
			if i >= len(want) || want[i].err != nil {
				t.Fatalf("command %d decoded from the stream but not from the whole buffer", i)
			}
			if got := AppendFrame(nil, &c); string(got) != string(want[i].frame) {
				t.Fatalf("command %d differs\nstream %q\nwhole  %q", i, got, want[i].frame)
			}
			if err := r.Release(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
