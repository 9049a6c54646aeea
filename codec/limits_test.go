// Tests of what one hostile header can cost: work on repeated-key checks,
// memory a Command keeps, and frames too large for their length fields.

package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

// longKeyHeader builds a header of n distinct keys of keyLen bytes that
// differ only in their last four: a full comparison of two of them reads
// every byte.
func longKeyHeader(typ byte, n, keyLen int) (frame []byte, keyBytes int) {
	prefix := strings.Repeat("k", keyLen-4)
	c := &Command{Code: GetKVConfig, SerializeType: typ, HasExt: true}
	for i := 0; i < n; i++ {
		k := prefix + fmt.Sprintf("%04d", i)
		c.Ext = append(c.Ext, Field{Key: k, Value: "v"})
		keyBytes += len(k)
	}
	return AppendFrame(nil, c)[4:], keyBytes
}

// The largest frame split into MaxExtEntries keys: compared pairwise, as
// the plain scan does, that is about 8 GB of key bytes read.
func TestLongDistinctKeysAreNotComparedInFull(t *testing.T) {
	codectest.SkipUnderRace(t)
	t.Parallel()
	const n = MaxExtEntries
	keyLen := (DefaultMaxFrame-4096)/n - 8
	for _, typ := range []byte{SerializeRocketMQ, SerializeJSON} {
		frame, keyBytes := longKeyHeader(typ, n, keyLen)
		var c Command
		if err := Decode(frame, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Ext) != n {
			t.Fatalf("type %d: %d entries decoded, want %d", typ, len(c.Ext), n)
		}
		if got := c.compared; got > keyBytes {
			t.Fatalf("type %d: %d key bytes compared for %d key bytes in the header", typ, got, keyBytes)
		}
	}
}

// Real repeats are compared, once each, and the last value wins.
func TestLongRepeatedKeysCostOneComparisonEach(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("r", 16<<10)
	c := &Command{Code: GetKVConfig, SerializeType: SerializeRocketMQ, HasExt: true}
	const repeats = 200
	for i := 0; i < repeats; i++ {
		// Built by hand: SetExt would merge them before they reach the wire.
		c.Ext = append(c.Ext, Field{Key: key, Value: fmt.Sprint(i)}, Field{Key: fmt.Sprint("other", i), Value: "x"})
	}
	var d Command
	if err := Decode(AppendFrame(nil, c)[4:], &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Ext) != repeats+1 || d.Ext[0].Key != key || d.Ext[0].Value != fmt.Sprint(repeats-1) {
		t.Fatalf("%d entries, first %.20q=%q", len(d.Ext), d.Ext[0].Key, d.Ext[0].Value)
	}
	if got, want := d.compared, (repeats-1)*len(key); got > want+repeats*16 {
		t.Fatalf("%d key bytes compared, want about %d (one comparison per repeat)", got, want)
	}
}

// extModel is the plain semantics the index must keep: a put replaces in
// place or appends, a delete removes and keeps the order of the rest.
type extModel []Field

func (m *extModel) put(k, v string) {
	for i := range *m {
		if (*m)[i].Key == k {
			(*m)[i].Value = v
			return
		}
	}
	*m = append(*m, Field{k, v})
}

func (m *extModel) del(k string) {
	for i := range *m {
		if (*m)[i].Key == k {
			*m = append((*m)[:i], (*m)[i+1:]...)
			return
		}
	}
}

// Random puts, nulls and repeats over a small key set, on both sides of
// the plain-scan bounds, decode as the model says, in both encodings.
func TestRepeatedAndNullKeysMatchPlainSemantics(t *testing.T) {
	codectest.SkipUnderRace(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 400; round++ {
		nKeys := 1 + rng.IntN(3*plainExtEntries)
		keys := make([]string, nKeys)
		for i := range keys {
			keys[i] = fmt.Sprint("key", i)
			if rng.IntN(4) == 0 {
				keys[i] += strings.Repeat("L", plainExtKeyLen) // past the plain bound
			}
		}
		var model extModel
		var bin []byte // binary extFields map
		var js strings.Builder
		ops := rng.IntN(MaxExtEntries / 4)
		for i := 0; i < ops; i++ {
			k := keys[rng.IntN(nKeys)]
			v := fmt.Sprint("v", i)
			null := rng.IntN(3) == 0
			if null {
				model.del(k)
				v = ""
			} else {
				model.put(k, v)
			}
			bin = binary.BigEndian.AppendUint16(bin, uint16(len(k)))
			bin = append(bin, k...)
			bin = binary.BigEndian.AppendUint32(bin, uint32(len(v)))
			bin = append(bin, v...)
			if i > 0 {
				js.WriteByte(',')
			}
			if null {
				fmt.Fprintf(&js, "%q:null", k)
			} else {
				fmt.Fprintf(&js, "%q:%q", k, v)
			}
		}
		h := make([]byte, binaryFixedLen)
		binary.BigEndian.PutUint32(h[17:], uint32(len(bin)))
		h = append(h, bin...)
		for _, fr := range [][]byte{
			rawFrame(SerializeRocketMQ, h, nil),
			rawFrame(SerializeJSON, []byte(`{"extFields":{`+js.String()+`}}`), nil),
		} {
			var c Command
			if err := Decode(fr[4:], &c); err != nil {
				t.Fatal(err)
			}
			if len(c.Ext) != len(model) {
				t.Fatalf("round %d: %d entries, want %d", round, len(c.Ext), len(model))
			}
			for i := range model {
				if c.Ext[i] != model[i] {
					t.Fatalf("round %d: entry %d is %q, want %q", round, i, c.Ext[i], model[i])
				}
			}
		}
	}
}

// A second extFields object replaces the first, index included.
func TestRepeatedExtFieldsObjectResetsIndex(t *testing.T) {
	t.Parallel()
	var first strings.Builder
	for i := 0; i < 3*plainExtEntries; i++ {
		fmt.Fprintf(&first, `"a%d":"1",`, i)
	}
	first.WriteString(`"x":"1"`)
	second := `"x":"1","a0":"2","a0":null,"a0":"3","x":"2"`
	h := `{"extFields":{` + first.String() + `},"extFields":{` + second + `}}`
	var c Command
	if err := Decode(rawFrame(SerializeJSON, []byte(h), nil)[4:], &c); err != nil {
		t.Fatal(err)
	}
	if want := []Field{{"x", "2"}, {"a0", "3"}}; len(c.Ext) != 2 || c.Ext[0] != want[0] || c.Ext[1] != want[1] {
		t.Fatalf("got %q, want %q (a0 was deleted and put again)", c.Ext, want)
	}
}

func TestResetDropsLargeBuffers(t *testing.T) {
	t.Parallel()
	var c Command
	// No escapes: the strings alias the header and nothing is copied.
	big := rawFrame(SerializeJSON, []byte(`{"remark":"`+strings.Repeat("a", 1<<20)+`"}`), nil)
	if err := Decode(big[4:], &c); err != nil {
		t.Fatal(err)
	}
	if cap(c.scratch) != 0 {
		t.Fatalf("a header without escapes took %d bytes of scratch", cap(c.scratch))
	}
	big = rawFrame(SerializeJSON, []byte(`{"remark":"`+strings.Repeat(`\n`, 1<<20)+`"}`), nil)
	if err := Decode(big[4:], &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Remark) != 1<<20 || cap(c.scratch) < 1<<20 {
		t.Fatalf("remark %d bytes, scratch %d", len(c.Remark), cap(c.scratch))
	}
	frame, _ := longKeyHeader(SerializeRocketMQ, MaxExtEntries, 100)
	if err := Decode(frame, &c); err != nil {
		t.Fatal(err)
	}
	if cap(c.Ext) < MaxExtEntries {
		t.Fatalf("ext capacity %d", cap(c.Ext))
	}
	small := allocFrames[3].frame[4:] // escaped: scratch is needed again
	if err := Decode(small, &c); err != nil {
		t.Fatal(err)
	}
	if cap(c.scratch) > keptScratch || cap(c.Ext) > keptExtEntries || c.idx != nil {
		t.Fatalf("after a small header the command keeps scratch %d, ext %d, index %v",
			cap(c.scratch), cap(c.Ext), c.idx != nil)
	}
}

// A header on the indexed path is as allocation-free once warm as a small
// one, as long as it stays within what Reset keeps: here as many fields as
// Java's largest header class, with long names.
func TestIndexedHeaderZeroAllocWhenWarm(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	frame, _ := longKeyHeader(SerializeJSON, 40, 2*plainExtKeyLen)
	var c Command
	if err := Decode(frame, &c); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(50, func() {
		if err := Decode(frame, &c); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("decoding the same indexed header again allocates %.1f times", n)
	}
}

func TestEncodeRefusesHeaderBeyondLengthField(t *testing.T) {
	codectest.SkipUnderRace(t)
	// Binary: 21 fixed bytes plus the remark, so the boundary is exact.
	fits := &Command{Code: Success, SerializeType: SerializeRocketMQ, Remark: strings.Repeat("r", maxHeaderLen-binaryFixedLen)}
	frame, err := EncodeFrame(nil, fits)
	if err != nil {
		t.Fatalf("a %d-byte header is refused: %v", maxHeaderLen, err)
	}
	var got Command
	if err := Decode(frame[4:], &got); err != nil || got.Remark != fits.Remark {
		t.Fatalf("largest header does not round trip: %v", err)
	}
	over := *fits
	over.Remark += "r"
	// JSON: each control byte is a 6-byte escape, so a 3 MiB remark is an
	// 18 MiB header.
	overJSON := &Command{Code: Success, Remark: strings.Repeat("\x01", 3<<20)}
	for _, c := range []*Command{&over, overJSON} {
		dst := []byte("queued")
		var out []byte
		allocated := allocatedDuring(func() { out, err = EncodeFramePrefix(dst, c, 0) })
		var ee *EncodeError
		if !errors.As(err, &ee) || ee.HeaderLen <= maxHeaderLen {
			t.Fatalf("type %d: %v, want an EncodeError", c.SerializeType, err)
		}
		if string(out) != "queued" || !strings.Contains(err.Error(), "header-length field") {
			t.Fatalf("type %d: dst %d bytes after refusal, %v", c.SerializeType, len(out), err)
		}
		if want := headerLen(c); ee.HeaderLen != want {
			t.Fatalf("type %d: reported %d bytes, header is %d", c.SerializeType, ee.HeaderLen, want)
		}
		if allocated > 64<<10 {
			t.Fatalf("type %d: refusing took %d bytes of buffer", c.SerializeType, allocated)
		}
		if _, err := EncodeFrame(nil, c); !errors.As(err, &ee) {
			t.Fatalf("type %d: EncodeFrame: %v", c.SerializeType, err)
		}
	}
	// The length prefix: header and body together past 32 bits.
	huge := uint64(math.MaxUint32) // negative where int has 32 bits: refused too
	if _, err := EncodeFramePrefix(nil, &Command{}, int(huge)); err == nil {
		t.Fatal("a frame past the 32-bit length prefix is accepted")
	}
	// What fits is what AppendFramePrefix writes.
	for _, tc := range allocFrames {
		var c Command
		if err := Decode(tc.frame[4:], &c); err != nil {
			t.Fatal(err)
		}
		out, err := EncodeFramePrefix([]byte("x"), &c, 7)
		if err != nil || !bytes.Equal(out, AppendFramePrefix([]byte("x"), &c, 7)) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}

// headerLen must agree with the encoder byte for byte, escapes included,
// since it decides refusals without encoding.
func TestHeaderLenIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "é", "\u2028", "\u2029", "\xe2\x80", "\xe2\x80\xa8", "\x00", "\x1f", "\x7f", `"`, `\`, "\b\t\n\f\r", "/", "\xff"}
	str := func() string {
		var b strings.Builder
		for n := rng.IntN(8); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := 0; i < 2000; i++ {
		c := &Command{Code: rng.Int32() - 1<<30, Flag: rng.Int32(), Opaque: -rng.Int32(), Version: rng.Int32N(1000),
			Language: byte(rng.IntN(20)), Remark: str(), HasExt: rng.IntN(2) == 0, SerializeType: byte(rng.IntN(2))}
		for n := rng.IntN(4); n > 0; n-- {
			c.Ext = append(c.Ext, Field{Key: str(), Value: str()})
		}
		if i%100 == 0 {
			c.Ext = append(c.Ext, Field{Key: strings.Repeat("k", 1<<15), Value: "v"}) // binary skips it
		}
		if got, want := headerLen(c), len(AppendHeader(nil, c)); got != want {
			t.Fatalf("%+v: headerLen %d, encoder wrote %d", c, got, want)
		}
		if headerBound(c) < headerLen(c) {
			t.Fatalf("%+v: bound %d below length %d", c, headerBound(c), headerLen(c))
		}
	}
}

// Reset leaves nothing of the last frame: every field zero but the buffers
// kept for reuse, and no string of the old extFields in their backing array
// (it would pin the released frame).
func TestResetLeavesNothingOfTheFrame(t *testing.T) {
	t.Parallel()
	var c Command
	h := []byte(`{"code":105,"extFields":{"topic":"T","k":"v"},"flag":1,"language":"JAVA","opaque":7,"remark":"r","serializeTypeCurrentRPC":"JSON","version":479}`)
	if err := Decode(rawFrame(SerializeJSON, h, []byte("body"))[4:], &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Ext) != 2 || c.Body == nil || c.Remark == "" {
		t.Fatalf("decoded %+v", c)
	}
	c.Reset()
	for i, f := range c.Ext[:cap(c.Ext)] {
		if f != (Field{}) {
			t.Fatalf("ext entry %d kept %+v", i, f)
		}
	}
	ext, scratch := c.Ext, c.scratch
	c.Ext, c.scratch = nil, nil
	if !reflect.DeepEqual(c, Command{}) || len(ext) != 0 || len(scratch) != 0 {
		t.Fatalf("after Reset: %+v, ext %v, scratch %q", c, ext, scratch)
	}
}
