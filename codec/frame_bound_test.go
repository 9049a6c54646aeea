// Tests that a frame's length field alone cannot make the reader allocate.

package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudwego/netpoll"
)

// allocatedDuring returns the bytes allocated while fn ran, the least of
// three runs: the count is the process's, so a lazy initialisation or
// another goroutine's allocation adds to a run, never takes from it.
// Tests that call it are not parallel.
func allocatedDuring(fn func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

func TestReadCommandClaimedLengthDoesNotAllocate(t *testing.T) {
	f := func(name string, claimed uint32, sent int, wantDecodeErr bool) {
		t.Helper()
		stream := binary.BigEndian.AppendUint32(nil, claimed)
		stream = append(stream, make([]byte, sent)...)
		var err error
		n := allocatedDuring(func() {
			r := netpoll.NewReader(bytes.NewReader(stream))
			var c Command
			err = ReadCommand(r, DefaultMaxFrame, &c)
			_ = r.Release()
		})
		if err == nil {
			t.Fatalf("%s: ReadCommand accepted a cut frame", name)
		}
		var de *DecodeError
		if got := errors.As(err, &de); got != wantDecodeErr {
			t.Fatalf("%s: error %v, want a DecodeError: %v", name, err, wantDecodeErr)
		}
		// A few 4 KiB read blocks and the reader itself; nowhere near the
		// claimed size.
		if n > 256<<10 {
			t.Fatalf("%s: %d bytes allocated for %d bytes sent (claimed %d)", name, n, sent, claimed)
		}
	}
	f("largest legal frame, 10 bytes sent", DefaultMaxFrame-4, 10, false)
	f("largest legal frame, 100 KiB sent", DefaultMaxFrame-4, 100<<10, false)
	f("one byte over the limit", DefaultMaxFrame-3, 10, true)
	f("4 GiB claimed", 0xffffffff, 10, true)
}

func TestExtEntriesBounded(t *testing.T) {
	t.Parallel()
	f := func(n int, typ byte, repeatObject bool, wantErr bool) {
		t.Helper()
		c := &Command{SerializeType: typ, HasExt: true}
		for i := 0; i < n; i++ {
			c.Ext = append(c.Ext, Field{Key: "k" + strconv.Itoa(i), Value: "v"})
		}
		frame := AppendFrame(nil, c)[4:]
		if repeatObject {
			// Two extFields objects of n/2 entries each: the bound counts
			// both, though the second replaces the first.
			obj := []byte{'{'}
			for i, fl := range c.Ext[:n/2] {
				if i > 0 {
					obj = append(obj, ',')
				}
				obj = append(obj, `"`+fl.Key+`":"v"`...)
			}
			obj = append(obj, '}')
			h := []byte(`{"extFields":` + string(obj) + `,"extFields":` + string(obj) + `}`)
			frame = binary.BigEndian.AppendUint32(nil, uint32(len(h)))
			frame = append(frame, h...)
		}
		var d Command
		err := Decode(frame, &d)
		if wantErr {
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "extFields entries") {
				t.Fatalf("%d entries (type %d, repeated %v): %v, want a bound error", n, typ, repeatObject, err)
			}
			return
		}
		if err != nil || len(d.Ext) != n {
			t.Fatalf("%d entries (type %d): %d decoded, %v", n, typ, len(d.Ext), err)
		}
	}
	for _, typ := range []byte{SerializeJSON, SerializeRocketMQ} {
		f(MaxExtEntries, typ, false, false)
		f(MaxExtEntries+1, typ, false, true)
	}
	f(MaxExtEntries+2, SerializeJSON, true, true)
}
