// Benchmarks of the decode and encode hot paths (run with -benchmem).

package codec

import (
	"fmt"
	"testing"
)

func BenchmarkDecode(b *testing.B) {
	for _, tc := range allocFrames {
		b.Run(tc.name, func(b *testing.B) {
			frame := tc.frame[4:]
			var c Command
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(frame, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadCommand(b *testing.B) {
	frame := allocFrames[2].frame
	var c Command
	r := &sliceReader{}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.b, r.off = frame, 0
		if err := ReadCommand(r, DefaultMaxFrame, &c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	for _, tc := range allocFrames {
		b.Run(tc.name, func(b *testing.B) {
			var c Command
			if err := Decode(tc.frame[4:], &c); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendFrame(buf[:0], &c)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkResponse is the server's common reply: a response header built
// from the request, written before a cached body.
func BenchmarkResponse(b *testing.B) {
	var req Command
	if err := Decode(allocFrames[0].frame[4:], &req); err != nil {
		b.Fatal(err)
	}
	resp := Command{Code: Success, Flag: FlagResponse, Language: LanguageJava, Version: ServerVersion}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		resp.Opaque = req.Opaque
		resp.SerializeType = req.SerializeType
		buf = AppendFramePrefix(buf[:0], &resp, 431)
	}
}

// BenchmarkLongKeyHeader is the largest frame split into MaxExtEntries
// distinct keys that differ only at their ends: the repeated-key check must
// not compare them pairwise.
func BenchmarkLongKeyHeader(b *testing.B) {
	for _, typ := range []byte{SerializeRocketMQ, SerializeJSON} {
		b.Run(fmt.Sprint("type-", typ), func(b *testing.B) {
			frame, _ := longKeyHeader(typ, MaxExtEntries, (DefaultMaxFrame-4096)/MaxExtEntries-8)
			var c Command
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(frame, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
