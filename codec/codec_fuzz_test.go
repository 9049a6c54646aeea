// Fuzz target for the frame decoder, seeded with the recorded frames.
package codec

import (
	"testing"

	"github.com/cloudwego/netpoll"
)

// FuzzDecode feeds arbitrary frames (without the length prefix) to Decode.
// It must never panic, and whatever it accepts must survive an encode and a
// second decode unchanged, apart from what the wire cannot carry: a binary
// header has no "empty extFields", and a JSON header drops a language
// outside the enum (readers then assume JAVA).
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
		var first, second Command
		if err := Decode(frame, &first); err != nil {
			if _, ok := err.(*DecodeError); !ok {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			return
		}
		enc := AppendFrame(nil, &first)
		l, err := FrameLength(enc, 1<<30)
		if err != nil || l != len(enc)-4 {
			t.Fatalf("re-encoded frame has length %d, %v (%d bytes)", l, err, len(enc))
		}
		if err := Decode(enc[4:], &second); err != nil {
			t.Fatalf("re-encoded frame does not decode: %v\n%q", err, enc)
		}
		want := first
		if want.SerializeType == SerializeRocketMQ {
			want.HasExt = len(want.Ext) > 0
		} else if _, ok := LanguageName(want.Language); !ok {
			want.Language = LanguageJava
		}
		if !sameCommand(&second, &want) {
			t.Fatalf("round trip changed the command\nfirst  %+v\nsecond %+v\nframe %q", want, second, enc)
		}
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
		if err := ReadCommand(lb, 1<<30, &third); err != nil || !sameCommand(&third, &second) {
			t.Fatalf("ReadCommand disagrees with Decode: %v\n%+v\n%+v", err, third, second)
		}
		if err := lb.Release(); err != nil {
			t.Fatal(err)
		}
	})
}
