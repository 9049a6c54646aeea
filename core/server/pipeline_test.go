// pipeline_test.go checks the request loop over several frames in one
// read: each complete frame is answered without waiting for the next one,
// pipelined frames cost no allocation, and an outsized response header is
// not kept by the connection.
package server

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

// Complete requests followed by the start of the next frame, cut inside
// its length prefix or after it: the complete ones are answered while the
// rest of the last frame is still missing, as Java answers each frame.
func TestAnswersAreNotHeldBehindAPartialFrame(t *testing.T) {
	for _, cut := range []int{2, 6} {
		t.Run("cut at "+strconv.Itoa(cut), func(t *testing.T) {
			s, _ := startServer(t, testConfig(t), nil)
			w := dialWire(t, s.Addr())
			var batch []byte
			for opaque := int32(1); opaque <= 2; opaque++ {
				batch = codec.AppendFrame(batch, request(codec.GetBrokerClusterInfo, opaque))
			}
			last := codec.AppendFrame(nil, request(codec.GetBrokerClusterInfo, 3))
			w.sendRaw(append(batch, last[:cut]...))
			for opaque := int32(1); opaque <= 2; opaque++ {
				r, err := w.recv()
				if err != nil {
					t.Fatalf("answer %d while the next frame is incomplete: %v", opaque, err)
				}
				if r.Opaque != opaque {
					t.Fatalf("answer with opaque %d, want %d", r.Opaque, opaque)
				}
			}
			w.sendRaw(last[cut:])
			if r := w.mustRecv(); r.Opaque != 3 {
				t.Fatalf("answer to the completed frame has opaque %d, want 3", r.Opaque)
			}
		})
	}
}

// A batch of complete route queries buffered at once goes through the
// connection's own loop (the completeness checks, the dispatch, the flush)
// without allocating.
func TestPipelinedRouteQueriesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	const frames = 16
	w := newRouteWalk(t, 479)
	one := w.once(t)
	cl := &countCloser{}
	w.c.closer = cl
	batch := bytes.Repeat(w.frame, frames)
	run := func() {
		if _, err := w.in.WriteBinary(batch); err != nil {
			t.Fatal(err)
		}
		w.in.Flush()
		if !w.s.serveBuffered(w.c, w.in) {
			t.Fatalf("connection closed (%d closes)", cl.n.Load())
		}
		if n := w.out.Len(); n != frames*one {
			t.Fatalf("%d response bytes flushed, want %d", n, frames*one)
		}
		w.out.Skip(w.out.Len())
		w.out.Release()
	}
	run()
	if allocs := testing.AllocsPerRun(200, run); allocs != 0 {
		t.Fatalf("%.1f allocations per batch of %d pipelined route queries, want 0", allocs, frames)
	}
}

// One response with a huge header (a long remark here) must not leave the
// connection holding a buffer that size; ordinary headers keep reusing
// theirs.
func TestOutsizedResponseHeaderIsNotKept(t *testing.T) {
	const hugeCode, capCode = 7201, 7202
	huge := strings.Repeat("r", 4<<20)
	s, _ := startServer(t, testConfig(t), map[int32]handler{
		hugeCode: func(_ *Server, _ *conn, _, resp *codec.Command) error {
			resp.Remark = huge
			return nil
		},
		// Reports, from the connection's own goroutine, the capacity of
		// the header buffer the previous response left behind.
		capCode: func(_ *Server, c *conn, _, resp *codec.Command) error {
			resp.Remark = strconv.Itoa(cap(c.hdr))
			return nil
		},
	})
	w := dialWire(t, s.Addr())
	keptCap := func(opaque int32) int {
		t.Helper()
		n, err := strconv.Atoi(w.call(request(capCode, opaque)).Remark)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if r := w.call(request(hugeCode, 1)); len(r.Remark) != len(huge) {
		t.Fatalf("huge answer carried a %d-byte remark, want %d", len(r.Remark), len(huge))
	}
	if n := keptCap(2); n > maxKeptHeader {
		t.Fatalf("after one %d-byte header the connection keeps a %d-byte header buffer", len(huge), n)
	}
	if n := keptCap(3); n == 0 {
		t.Fatal("an ordinary header's buffer is not kept for reuse")
	}
}
