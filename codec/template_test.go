// Tests of the reply header template: its frames are the encoder's, byte
// for byte, as it is reused and rebuilt.

package codec

import (
	"bytes"
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
