// Tests of the reply header template: its frames are the encoder's, byte
// for byte, as it is reused and rebuilt.

package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestHeaderTemplateWritesTheEncodersFrames(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	ints := []int32{0, 1, 9, 10, 99, 100, 479, 1<<31 - 1, -1, -10, -1 << 31}
	pick := func() int32 {
		if rng.IntN(2) == 0 {
			return ints[rng.IntN(len(ints))]
		}
		return rng.Int32() - 1<<30
	}
	var tmpl HeaderTemplate
	c := Command{Code: 0, Flag: 1, Version: 479, Language: LanguageJava}
	for i := 0; i < 5000; i++ {
		// Mostly the opaque changes, as on a connection; now and then
		// the rest, a remark, extFields or the binary layout.
		c.Opaque = pick()
		switch rng.IntN(20) {
		case 0:
			c.Code, c.Flag, c.Version = pick(), pick(), pick()
		case 1:
			c.Language = byte(rng.IntN(20))
		case 2:
			c.Remark = "r"
		case 3:
			c.SetExt("k", "v")
		case 4:
			c.SerializeType = SerializeRocketMQ
		case 5:
			c.Remark, c.HasExt, c.Ext, c.SerializeType = "", false, nil, SerializeJSON
		}
		bodyLen := rng.IntN(5000)
		want := AppendFramePrefix(nil, &c, bodyLen)
		n, ok := tmpl.PrefixLen(&c)
		if wantOK := c.SerializeType != SerializeRocketMQ && !c.HasExt && c.Remark == ""; ok != wantOK {
			t.Fatalf("%+v: template took it %v, want %v", c, ok, wantOK)
		}
		if !ok {
			continue
		}
		if n != len(want) {
			t.Fatalf("%+v: PrefixLen %d, encoder wrote %d", c, n, len(want))
		}
		got := make([]byte, n)
		tmpl.PutPrefix(got, &c, bodyLen)
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: template wrote\n%q\nencoder\n%q", c, got, want)
		}
	}
}

// Every length of opaque, at the edges of each power of ten and between,
// with either sign: the digits the template stores a word at a time are
// the encoder's.
func TestHeaderTemplateOpaqueOfEveryLength(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	var tmpl HeaderTemplate
	c := Command{Code: 0, Flag: 1, Version: 479, Language: LanguageJava}
	var ops []int64
	for p := int64(1); p <= 1e10; p *= 10 {
		ops = append(ops, p-1, p, p+1, p+rng.Int64N(9*p))
	}
	for _, op := range ops {
		for _, v := range []int64{op, -op} {
			if v > 1<<31-1 || v < -1<<31 {
				continue
			}
			c.Opaque = int32(v)
			want := AppendFramePrefix(nil, &c, 10)
			n, ok := tmpl.PrefixLen(&c)
			if !ok || n != len(want) {
				t.Fatalf("opaque %d: PrefixLen %d %v, encoder wrote %d", v, n, ok, len(want))
			}
			got := make([]byte, n)
			tmpl.PutPrefix(got, &c, 10)
			if !bytes.Equal(got, want) {
				t.Fatalf("opaque %d: template wrote\n%q\nencoder\n%q", v, got, want)
			}
		}
	}
}

func TestEightDigits(t *testing.T) {
	t.Parallel()
	check := func(u uint32) {
		var got [8]byte
		binary.LittleEndian.PutUint64(got[:], eightDigits(u))
		if want := fmt.Sprintf("%08d", u); string(got[:]) != want {
			t.Fatalf("eightDigits(%d) = %q, want %q", u, got, want)
		}
	}
	for u := uint32(0); u < 100000; u++ {
		check(u)
	}
	for u := uint32(100000); u < 1e8; u += 997 {
		check(u)
	}
	check(1e8 - 1)
}
