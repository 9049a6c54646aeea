// Tests of the compressed REGISTER_BROKER layout: round trips, the 4.x
// record shape, and rejection of broken bodies.

package body

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

func deflate(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zlib.NewWriterLevel(&b, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// layout builds an inflated body: ints are written as 4-byte words,
// strings as length-prefixed sections.
func layout(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		case string:
			b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		}
	}
	return b
}

func TestCompressedRoundTrip(t *testing.T) {
	t.Parallel()
	rb := &RegisterBroker{
		FilterServerList: []string{"10.0.0.1:30000"},
		DataVersion:      DataVersion{Counter: 7, StateVersion: 2, Timestamp: 1700000000123},
		Topics: []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}},
			{TopicName: "Fifo", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 7, TopicSysFlag: 3, Order: true, TopicFilterType: "MULTI_TAG", Attributes: map[string]string{"message.type": "FIFO"}},
			// A value with a space breaks Java's split: attributes dropped.
			{TopicName: "Spaced", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"a": "b c"}},
		},
		MappingInfo: map[string][]byte{
			"StaticTopic": []byte(`{"bname":"broker-a","currIdMap":{"0":0},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"StaticTopic","totalQueues":2}`),
		},
	}
	z, err := EncodeRegisterBroker(rb, true, 413)
	if err != nil {
		t.Fatal(err)
	}
	if len(z) < 2 || z[0] != 0x78 || z[1] != 0xda {
		t.Fatalf("not a level-9 zlib stream: % x", z[:2])
	}
	got, err := DecodeRegisterBroker(z, true, 413)
	if err != nil {
		t.Fatal(err)
	}
	want := &RegisterBroker{
		FilterServerList: []string{"10.0.0.1:30000"},
		DataVersion:      rb.DataVersion,
		Topics: []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}},
			{TopicName: "Fifo", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 7, TopicFilterType: "MULTI_TAG", Attributes: map[string]string{"message.type": "FIFO"}},
			{TopicName: "Spaced", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		},
		MappingInfo: rb.MappingInfo,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}

	// A 4.x broker: 5-field records, no mapping section.
	z, err = EncodeRegisterBroker(rb, true, 409)
	if err != nil {
		t.Fatal(err)
	}
	got, err = DecodeRegisterBroker(z, true, 409)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Topics {
		want.Topics[i].Attributes = nil
	}
	want.MappingInfo = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("4.x round trip:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestCompressedJavaShapes(t *testing.T) {
	t.Parallel()
	f := func(raw []byte, version int32, want *RegisterBroker) {
		t.Helper()
		got, err := DecodeRegisterBroker(deflate(t, raw), true, version)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("\ngot  %+v\nwant %+v", got, want)
		}
	}
	dv := DataVersion{Counter: 42, Timestamp: 1700000000123}
	// 4.9.8 broker with compressedRegister=true: exactly 5 fields.
	f(layout(`{"counter":42,"timestamp":1700000000123}`, 2, "TopicTest 4 4 6 SINGLE_TAG", "TBW102 8 8 7 SINGLE_TAG", `[]`), 409,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7, TopicFilterType: "SINGLE_TAG"},
		}})
	// A trailing space with nothing after it is no 6th field; bytes past
	// the last section are ignored.
	f(append(layout(`{"counter":42,"timestamp":1700000000123}`, 1, "T 1 1 6 MULTI_TAG ", `["a:1"]`), "junk"...), 409,
		&RegisterBroker{FilterServerList: []string{"a:1"}, DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "MULTI_TAG"},
		}})
	// 5.x with a mapping written by fastjson (bare keys); a bad filter list
	// is logged and replaced by an empty one in Java.
	f(layout(`{"counter":42,"stateVersion":0,"timestamp":1700000000123}`, 1, `T 1 1 6 SINGLE_TAG {"k":"v"}`, `[1,`, 1,
		`{"bname":"broker-a","currIdMap":{0:0},"topic":"T"}`), 413,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"k": "v"}},
		}, MappingInfo: map[string][]byte{"T": []byte(`{"bname":"broker-a","currIdMap":{"0":0},"topic":"T"}`)}})
	// Zero mappings leave MappingInfo nil.
	f(layout(`{}`, 0, `[]`, 0), 413, &RegisterBroker{FilterServerList: []string{}, Topics: []TopicConfig{}})
}

func TestCompressedRejects(t *testing.T) {
	codectest.SkipUnderRace(t)
	t.Parallel()
	good := layout(`{"counter":1,"timestamp":2}`, 1, "T 1 1 6 SINGLE_TAG", `[]`, 0)
	f := func(name string, body []byte, version int32) {
		t.Helper()
		if rb, err := DecodeRegisterBroker(body, true, version); err == nil {
			t.Errorf("%s: no error, got %+v", name, rb)
		}
	}
	z := deflate(t, good)
	if _, err := DecodeRegisterBroker(z, true, 413); err != nil {
		t.Fatalf("good body: %v", err)
	}
	for n := 1; n < len(z); n++ {
		f("truncated stream", z[:n], 413)
	}
	bad := bytes.Clone(z)
	bad[len(bad)-1] ^= 0xFF
	f("bad checksum", bad, 413)
	f("not zlib", []byte(`{"filterServerList":[]}`), 409)
	f("raw deflate", z[2:], 409)
	for cut := 1; cut < len(good); cut++ {
		f("truncated layout", deflate(t, good[:cut]), 413)
	}
	f("mapping section missing at 413", deflate(t, layout(`{}`, 0, `[]`)), 413)
	f("lying data version length", deflate(t, layout(0x7FFFFFF0)), 409)
	f("negative length", deflate(t, layout(-1)), 409)
	f("lying topic count", deflate(t, layout(`{}`, 0x10000000, "T 1 1 6 SINGLE_TAG", `[]`)), 409)
	f("negative topic count", deflate(t, layout(`{}`, -5, `[]`)), 409)
	f("lying record length", deflate(t, append(layout(`{}`, 1, 1<<30), "T 1 1 6 SINGLE_TAG"...)), 409)
	f("lying mapping count", deflate(t, layout(`{}`, 0, `[]`, 1000)), 413)
	f("bad data version", deflate(t, layout(`{"counter":"x"}`, 0, `[]`)), 409)
	f("four fields", deflate(t, layout(`{}`, 1, "T 1 1 6", `[]`)), 409)
	f("bad number", deflate(t, layout(`{}`, 1, "T x 1 6 SINGLE_TAG", `[]`)), 409)
	f("double space", deflate(t, layout(`{}`, 1, "T  1 1 6 SINGLE_TAG", `[]`)), 409)
	f("unknown filter type", deflate(t, layout(`{}`, 1, "T 1 1 6 NO_TAG", `[]`)), 409)
	f("mapping without topic", deflate(t, layout(`{}`, 0, `[]`, 1, `{"bname":"b"}`)), 413)
	f("broken mapping", deflate(t, layout(`{}`, 0, `[]`, 1, `{"topic":`)), 413)
}

func TestParseTopicRecord(t *testing.T) {
	t.Parallel()
	f := func(rec string, want TopicConfig) {
		t.Helper()
		got, err := parseTopicRecord([]byte(rec))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v (%v), want %+v", rec, got, err, want)
		}
	}
	f("TopicTest 4 4 6 SINGLE_TAG", TopicConfig{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	f("TopicTest 4 4 6 SINGLE_TAG {}", TopicConfig{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}})
	f("T -1 2147483647 0 SINGLE_TAG not-json", TopicConfig{TopicName: "T", ReadQueueNums: -1, WriteQueueNums: 2147483647, TopicFilterType: "SINGLE_TAG"})
	f(`T 1 1 6 SINGLE_TAG {"a":"b"} extra`, TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"a": "b"}})
	f(" 1 1 6 SINGLE_TAG", TopicConfig{ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	for _, bad := range []string{"", "T", "T 1 1 6 ", "T 1 1 2147483648 SINGLE_TAG", strings.Repeat(" ", 10)} {
		if got, err := parseTopicRecord([]byte(bad)); err == nil {
			t.Errorf("%q: no error, got %+v", bad, got)
		}
	}
}

// The limit is on what the sections take, not on the stream: sections
// adding up to exactly the limit decode, one byte more is refused, and
// bytes after the last section do not count, however many there are
// (Java ignores them too).
func TestCompressedInflateLimit(t *testing.T) {
	codectest.SkipUnderRace(t)
	t.Parallel()
	const limit = 64 << 10
	head := layout(`{"counter":1,"timestamp":2}`, 1, "T 1 1 6 SINGLE_TAG")
	mappings := layout(0)
	// The filter list, padded with JSON whitespace, makes up the rest.
	pad := strings.Repeat(" ", limit-len(head)-len(mappings)-4-2)
	exact := slices.Concat(head, layout("["+pad+"]"), mappings)
	if len(exact) != limit {
		t.Fatalf("layout of %d bytes, want %d", len(exact), limit)
	}
	rb, n, err := decodeCompressed(deflate(t, exact), 413, limit)
	if err != nil || n != limit || len(rb.Topics) != 1 || len(rb.FilterServerList) != 0 {
		t.Fatalf("sections of exactly the limit: %+v, %d bytes, %v", rb, n, err)
	}
	over := slices.Concat(head, layout("["+pad+" ]"), mappings)
	_, _, err = decodeCompressed(deflate(t, over), 413, limit)
	if err == nil || !strings.Contains(err.Error(), "inflates beyond 65536 bytes") {
		t.Fatalf("sections one byte over the limit: %v", err)
	}
	// A count whose length words alone pass the limit.
	_, _, err = decodeCompressed(deflate(t, layout(`{}`, limit/4)), 409, limit)
	if err == nil || !strings.Contains(err.Error(), "inflates beyond 65536 bytes") {
		t.Fatalf("a count beyond the limit: %v", err)
	}

	// 64 times the limit of padding after the sections: a 1000:1 bomb.
	bomb := deflate(t, append(exact, make([]byte, 64*limit)...))
	if len(bomb) > limit/8 {
		t.Fatalf("bomb is %d bytes, not a bomb", len(bomb))
	}
	rb, n, err = decodeCompressed(bomb, 413, limit)
	if err != nil || n != limit || len(rb.Topics) != 1 {
		t.Fatalf("sections followed by padding: %+v, %d bytes, %v", rb, n, err)
	}
}

// zeroBomb deflates n zero bytes without holding them: all zero is a
// valid empty registration (zero-length data version, no topics, an empty
// filter list, no mappings) followed by padding. BestSpeed builds it in
// half the time of a broker's level 9 at nearly the same ratio.
func zeroBomb(t testing.TB, n int64) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(zw, zeroReader{}, n); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A body of a few hundred kilobytes that inflates to 256 MiB of zeros
// holds a valid empty registration in its first bytes. Java inflates only
// the sections it reads; inflating the whole stream first cost 570 MiB of
// heap per request, enough for one request to bring down a 512 MiB pod.
func TestCompressedPaddingIsNotInflated(t *testing.T) {
	codectest.SkipUnderRace(t) // deflating the bomb takes 20 times as long under it
	bomb := zeroBomb(t, MaxInflated-1024)
	t.Logf("compressed body: %d bytes", len(bomb))
	var rb *RegisterBroker
	var n int
	var err error
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rb, n, err = decodeCompressed(bomb, 409, MaxInflated)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(rb.Topics) != 0 || n != 12 {
		t.Fatalf("decoded %+v from %d inflated bytes, want an empty registration from 12", rb, n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("decoding a %d-byte body allocated %d MiB", len(bomb), alloc>>20)
	}
	// Only a prefix of the input is ever read: the first kilobyte of the
	// stream, cut off there, decodes the same.
	rb, n, err = decodeCompressed(bomb[:1024], 409, MaxInflated)
	if err != nil || len(rb.Topics) != 0 || n != 12 {
		t.Fatalf("the bomb's first kilobyte: %+v, %d bytes, %v", rb, n, err)
	}
}

// The stream is read a little past the last section so that a body that
// ends there, as every broker's does, ends well: its checksum is checked.
// Beyond trailWindow it is not read, as Java does not read it.
func TestCompressedTrailer(t *testing.T) {
	t.Parallel()
	good := layout(`{"counter":1,"timestamp":2}`, 0, `[]`)
	for _, extra := range []int{0, 1, trailWindow - 1} {
		z := deflate(t, append(good, make([]byte, extra)...))
		if _, _, err := decodeCompressed(z, 409, MaxInflated); err != nil {
			t.Fatalf("%d trailing bytes: %v", extra, err)
		}
		bad := bytes.Clone(z)
		bad[len(bad)-1] ^= 0xFF
		if _, _, err := decodeCompressed(bad, 409, MaxInflated); err == nil {
			t.Errorf("%d trailing bytes and a bad checksum: accepted", extra)
		}
		if _, _, err := decodeCompressed(z[:len(z)-1], 409, MaxInflated); err == nil {
			t.Errorf("%d trailing bytes and a cut checksum: accepted", extra)
		}
	}
	// Far past the sections a bad checksum is never reached.
	z := deflate(t, append(good, make([]byte, 4*trailWindow)...))
	z[len(z)-1] ^= 0xFF
	if _, _, err := decodeCompressed(z, 409, MaxInflated); err != nil {
		t.Fatalf("bad checksum far past the sections: %v", err)
	}
}

// A count is a claim the bytes may not back: a body that inflates to n
// bytes must not make the decoder allocate many times n for the slice or
// map the count announces. (64-byte TopicConfigs for 4-byte claims made a
// 256 MiB bomb ask for 4 GiB.)
func TestCompressedCountsDoNotPreallocate(t *testing.T) {
	const limit = 1 << 20
	f := func(name string, head []byte, version int32) {
		t.Helper()
		raw := append(head, make([]byte, limit-len(head))...)
		z := deflate(t, raw)
		// The least of three decodes: the count is the process's, so a
		// lazy initialisation (zlib's tables on the first decode) or
		// another goroutine's allocation adds to a run.
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, _, err := decodeCompressed(z, version, limit)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("%s: accepted", name)
			}
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		// A preallocation by the count would cost 16 times the limit.
		if least > limit/2 {
			t.Fatalf("%s: %d bytes allocated for %d inflated", name, least, limit)
		}
	}
	f("topic count", layout(`{}`, limit/4-16), 409)
	f("mapping count", layout(`{}`, 0, `[]`, limit/4-64, `{"topic":"T"}`), 413)
}
