// pipeline_test.go checks the request loop over several frames in one
// read: each complete frame is answered without waiting for the next one,
// pipelined frames cost no allocation, and an outsized reply header is
// not kept by the connection.

package remoting

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// Complete requests followed by the start of the next frame, cut inside
// its length prefix or after it: the complete ones are answered while the
// rest of the last frame is still missing, as Java answers each frame.
func TestAnswersAreNotHeldBehindAPartialFrame(t *testing.T) {
	for _, cut := range []int{2, 6} {
		t.Run("cut at "+strconv.Itoa(cut), func(t *testing.T) {
			s, _ := startTiny(t, nil)
			w := dial(t, s)
			var batch []byte
			for opaque := int32(1); opaque <= 2; opaque++ {
				batch = codec.AppendFrame(batch, request(codeEcho, opaque))
			}
			last := codec.AppendFrame(nil, request(codeEcho, 3))
			w.SendRaw(append(batch, last[:cut]...))
			for opaque := int32(1); opaque <= 2; opaque++ {
				r, err := w.Recv()
				if err != nil {
					t.Fatalf("answer %d while the next frame is incomplete: %v", opaque, err)
				}
				if r.Opaque != opaque {
					t.Fatalf("answer with opaque %d, want %d", r.Opaque, opaque)
				}
			}
			w.SendRaw(last[cut:])
			if r := w.MustRecv(); r.Opaque != 3 {
				t.Fatalf("answer to the completed frame has opaque %d, want 3", r.Opaque)
			}
		})
	}
}

// A batch of complete requests buffered at once goes through the
// connection's own loop (the completeness checks, the dispatch, the
// pooled reply bodies, the flush) without allocating, Observe and
// sampling included.
func TestPipelinedRequestsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	o := testOptions(&remotingtest.Logs{})
	o.Routes[3].TimeEvery = 16 // codeBig
	o.Observe = func(int32, int32, time.Duration, uint64) {}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	const frames = 16
	var batch []byte
	for i := int32(1); i <= frames; i++ {
		batch = codec.AppendFrame(batch, request(codeBig, i, "n", "300"))
	}
	p := s.Pipe("bench")
	run := func() {
		if err := p.Send(batch); err != nil {
			t.Fatal(err)
		}
		if !p.Serve() {
			t.Fatal("connection closed")
		}
		if n := p.Drain(); n < frames*300 {
			t.Fatalf("%d reply bytes, want %d answers of 300 bytes and more", n, frames)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(200, run); allocs != 0 {
		t.Fatalf("%.1f allocations per batch of %d pipelined requests, want 0", allocs, frames)
	}
}

// One reply with a huge header (a long remark here) must not leave the
// connection holding a buffer that size; larger-than-usual headers keep
// reusing theirs.
func TestOutsizedReplyHeaderIsNotKept(t *testing.T) {
	const capCode = 7202
	huge := strings.Repeat("r", 4<<20)
	s, _ := startTiny(t, func(o *Options) {
		o.MaxFrame = 16 << 20
		// Reports, from the connection's own goroutine, the capacity of
		// the header buffer the previous reply left behind.
		o.Routes = append(o.Routes, Route{Code: capCode, Handler: func(c *Conn, _, resp *codec.Command) error {
			resp.Remark = strconv.Itoa(cap(c.hdr))
			return nil
		}})
	})
	w := dial(t, s)
	keptCap := func(opaque int32) int {
		t.Helper()
		n, err := strconv.Atoi(w.Call(request(capCode, opaque)).Remark)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	hugeReq := request(codeEcho, 1)
	hugeReq.SetExt("v", huge)
	if r := w.Call(hugeReq); len(r.Remark) != len(huge) {
		t.Fatalf("huge answer carried a %d-byte remark, want %d", len(r.Remark), len(huge))
	}
	if n := keptCap(2); n > maxKeptHeader {
		t.Fatalf("after one %d-byte header the connection keeps a %d-byte header buffer", len(huge), n)
	}
	// Small replies are encoded in the output buffer itself
	// (writeInPlace); one with a larger header goes through the kept
	// buffer, which it leaves for the next such reply.
	medium := strings.Repeat("m", 12<<10)
	mediumReq := request(codeEcho, 3)
	mediumReq.SetExt("v", medium)
	if r := w.Call(mediumReq); r.Remark != medium {
		t.Fatalf("medium answer carried a %d-byte remark, want %d", len(r.Remark), len(medium))
	}
	if n := keptCap(4); n < len(medium) || n > maxKeptHeader {
		t.Fatalf("after a %d-byte header the connection keeps a %d-byte header buffer, want it kept for reuse", len(medium), n)
	}
}

// A reply whose header cannot be framed goes out as a SYSTEM_ERROR, also
// under a frame limit that the header's own length field cannot reach.
func TestUnframeableReplyBecomesSystemError(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) {
		o.MaxFrame = 64 << 20
		o.Routes = append(o.Routes, Route{Code: 7203, Handler: func(_ *Conn, _, resp *codec.Command) error {
			resp.Remark = string(bytes.Repeat([]byte{1}, 3<<20)) // 18 MiB escaped: over the 24-bit header length
			resp.SetExt("k", "v")
			return nil
		}})
	})
	r := dial(t, s).Call(request(7203, 1))
	if r.Code != codec.SystemError || !strings.HasPrefix(r.Remark, "the response cannot be sent") || r.HasExt {
		t.Fatalf("code %d remark %.60q ext %v", r.Code, r.Remark, r.HasExt)
	}
}

// A reply over the frame limit, a handler's or a deferred one, goes out as
// a SYSTEM_ERROR that says so, without its extFields.
func TestReplyOverFrameLimitBecomesSystemError(t *testing.T) {
	pending := make(chan deferred, 1)
	s, logs := startTiny(t, func(o *Options) {
		o.MaxFrame = 64 << 10
		deferOptions(o, pending)
		o.Routes = append(o.Routes, Route{Code: 7204, Handler: func(_ *Conn, _, resp *codec.Command) error {
			resp.Body = bytes.Repeat([]byte{'b'}, 64<<10)
			resp.SetExt("k", "v")
			return nil
		}})
	})
	w := dial(t, s)
	check := func(r *codec.Command, what string) {
		t.Helper()
		if r.Code != codec.SystemError || !strings.Contains(r.Remark, "over frameMaxLength (65536)") || r.HasExt || len(r.Body) != 0 {
			t.Fatalf("%s: code %d remark %.80q ext %v body %d", what, r.Code, r.Remark, r.HasExt, len(r.Body))
		}
	}
	check(w.Call(request(7204, 1)), "handler's reply")
	w.Send(request(codeDefer, 2))
	huge := reply("deferred")
	huge.Body = bytes.Repeat([]byte{'d'}, 64<<10)
	huge.SetExt("k", "v")
	if err := (<-pending).p.Reply(huge); err != nil {
		t.Fatal(err)
	}
	check(w.MustRecv(), "deferred reply")
	// A reply just under the limit goes out as it is.
	if r := w.Call(request(codeEcho, 3, "v", strings.Repeat("e", 30<<10))); r.Code != codec.Success {
		t.Fatalf("a reply that fits: code %d %.60q", r.Code, r.Remark)
	}
	if !strings.Contains(logs.String(), "response over frameMaxLength") {
		t.Fatalf("no log line:\n%s", logs)
	}
}

// encodeReply, the bare function: an oversized reply becomes a small
// SYSTEM_ERROR in either serialize type, and one that fits is written as
// it is.
func TestEncodeReplyAnswersOversizedResponse(t *testing.T) {
	for _, typ := range []byte{codec.SerializeJSON, codec.SerializeRocketMQ} {
		// JSON writes each byte as a 6-byte escape; binary writes it raw.
		n := 3 << 20
		if typ == codec.SerializeRocketMQ {
			n = 17 << 20
		}
		resp := &codec.Command{Code: codec.Success, Flag: codec.FlagResponse, Opaque: 42, Version: codec.ServerVersion,
			SerializeType: typ, Body: []byte("body")}
		resp.SetExt("value", strings.Repeat("\x01", n))
		dst := []byte("queued")
		out, err := encodeReply(dst, resp)
		var ee *codec.EncodeError
		if !errors.As(err, &ee) {
			t.Fatalf("type %d: error %v, want an *codec.EncodeError", typ, err)
		}
		if !bytes.HasPrefix(out, []byte("queued")) || len(out) > 1024 {
			t.Fatalf("type %d: %d bytes queued", typ, len(out))
		}
		if resp.Body != nil || len(resp.Ext) != 0 || resp.HasExt {
			t.Fatalf("type %d: replacement keeps body %d bytes, ext %d", typ, len(resp.Body), len(resp.Ext))
		}
		var got codec.Command
		if err := codec.Decode(out[len("queued")+4:], &got); err != nil {
			t.Fatalf("type %d: replacement does not decode: %v", typ, err)
		}
		if got.Code != codec.SystemError || got.Opaque != 42 || !got.IsResponse() || got.SerializeType != typ ||
			!strings.Contains(got.Remark, "header-length field") {
			t.Fatalf("type %d: replacement %+v", typ, got)
		}
	}
	// A response that fits is written as it is.
	resp := &codec.Command{Code: codec.Success, Flag: codec.FlagResponse, Opaque: 1}
	resp.SetExt("value", "v")
	out, err := encodeReply(nil, resp)
	if err != nil || !bytes.Equal(out, codec.AppendFramePrefix(nil, resp, 0)) {
		t.Fatalf("%v: %q", err, out)
	}
}

// Replies with a body netpoll copies are encoded straight into the output
// buffer (writeInPlace), larger ones take the general path: both give the
// frame the encoder gives, byte for byte, at and around the threshold and
// with extFields and a remark in the header.
func TestReplyFramesAroundTheInPlaceThreshold(t *testing.T) {
	const sizedCode = 7204
	s, _ := startTiny(t, func(o *Options) {
		o.Routes = append(o.Routes, Route{Code: sizedCode, Handler: func(_ *Conn, req, resp *codec.Command) error {
			v, _ := req.ExtValue("n")
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			resp.Body = bytes.Repeat([]byte{'b'}, n)
			resp.Remark, _ = req.ExtValue("r")
			if n%2 == 1 {
				resp.SetExt("k", "v\u2028\"")
			}
			return nil
		}})
	})
	w := dial(t, s)
	for i, n := range []int{0, 1, 501, 4095, 4096, 4097, 70 << 10} {
		for _, remark := range []string{"", "é\x01", strings.Repeat("r", 11<<10)} {
			req := request(sizedCode, int32(1000+i))
			req.SetExt("n", strconv.Itoa(n))
			req.SetExt("r", remark)
			w.Send(req)
			raw, err := w.RecvRaw()
			if err != nil {
				t.Fatal(err)
			}
			var got codec.Command
			if err := codec.Decode(raw[4:], &got); err != nil {
				t.Fatal(err)
			}
			want := codec.AppendFrame(nil, &got)
			if !bytes.Equal(raw, want) {
				t.Fatalf("body %d, remark %d bytes: reply frame\n%q\nis not the encoder's\n%q", n, len(remark), raw[:min(len(raw), 200)], want[:min(len(want), 200)])
			}
			if len(got.Body) != n || got.Remark != remark || got.Opaque != int32(1000+i) {
				t.Fatalf("body %d, remark %q: got body %d, remark %q, opaque %d", n, remark, len(got.Body), got.Remark, got.Opaque)
			}
		}
	}
}
