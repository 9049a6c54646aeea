// server_test.go drives a listener over real loopback connections: the
// reply rules and their options, unknown codes, handler errors and panics,
// oneway and response-flagged frames, broken frames, idle connections, the
// connection's id, its close hook and CloseConn, and several listeners side
// by side.

package remoting

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestReplyEchoesTheRequest(t *testing.T) {
	s, _ := startTiny(t, nil)
	w := dial(t, s)
	resp := w.Call(request(codeEcho, 7, "v", "hello"))
	if !resp.IsResponse() || resp.Opaque != 7 || resp.Version != 479 || resp.Code != codec.Success ||
		resp.Remark != "hello" || resp.Language != codec.LanguageJava || resp.SerializeType != codec.SerializeJSON {
		t.Fatalf("reply %+v", resp)
	}
}

// The default answer to an unknown code is the one both Java servers give.
func TestUnknownCodeAnswersNotSupported(t *testing.T) {
	s, _ := startTiny(t, nil)
	resp := dial(t, s).Call(request(9999, 7))
	if resp.Code != codec.RequestCodeNotSupported || resp.Remark != " request type 9999 not supported" || resp.HasExt {
		t.Fatalf("got code %d remark %q ext %v", resp.Code, resp.Remark, resp.HasExt)
	}
}

func TestUnknownHandlerOption(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) {
		o.Unknown = func(_ *Conn, req, resp *codec.Command) error {
			return Refuse(codec.SystemError, "no code "+strconv.Itoa(int(req.Code)))
		}
	})
	if resp := dial(t, s).Call(request(42, 1)); resp.Code != codec.SystemError || resp.Remark != "no code 42" {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
}

// A listener stamps its own version; a standalone Java controller's is 0.
func TestVersionOption(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.Version = 0 })
	if resp := dial(t, s).Call(request(codeEcho, 1)); resp.Version != 0 {
		t.Fatalf("version %d, want 0", resp.Version)
	}
}

// A binary request gets a binary reply, unless the listener answers in
// JSON only (as Java's controller does).
func TestReplySerializeType(t *testing.T) {
	f := func(jsonOnly bool, want byte) {
		t.Helper()
		s, _ := startTiny(t, func(o *Options) { o.JSONReplies = jsonOnly })
		w := dial(t, s)
		req := request(codeWho, 3)
		req.SerializeType = codec.SerializeRocketMQ
		resp := w.Call(req)
		if resp.SerializeType != want || resp.Code != codec.Success {
			t.Fatalf("JSONReplies %v: reply in serialize type %d code %d, want type %d", jsonOnly, resp.SerializeType, resp.Code, want)
		}
		if _, ok := resp.ExtValue("peer"); !ok {
			t.Fatalf("JSONReplies %v: extFields lost: %+v", jsonOnly, resp.Ext)
		}
		// The next JSON request on the same connection is answered in JSON.
		if resp := w.Call(request(codeEcho, 4)); resp.SerializeType != codec.SerializeJSON {
			t.Fatalf("JSON request after a binary one answered in type %d", resp.SerializeType)
		}
	}
	f(false, codec.SerializeRocketMQ)
	f(true, codec.SerializeJSON)
}

func TestHandlerErrorsBecomeReplies(t *testing.T) {
	refused := make(chan string, 4)
	s, logs := startTiny(t, nil)
	w := dial(t, s)
	if resp := w.Call(request(codeRefuse, 1)); resp.Code != codec.TopicNotExist || resp.Remark != "refused" {
		t.Fatalf("refusal: code %d remark %q", resp.Code, resp.Remark)
	}
	if resp := w.Call(request(codeFail, 2)); resp.Code != codec.SystemError || resp.Remark != "failed" {
		t.Fatalf("plain error: code %d remark %q", resp.Code, resp.Remark)
	}
	if !strings.Contains(logs.String(), "request refused") {
		t.Fatalf("no default log line for a refusal:\n%s", logs)
	}
	// With a Refused hook the hook sees each refusal as answered.
	s2, _ := startTiny(t, func(o *Options) {
		o.Refused = func(c *Conn, req, resp *codec.Command, err error) {
			refused <- strconv.Itoa(int(req.Code)) + "/" + strconv.Itoa(int(resp.Code)) + "/" + err.Error()
		}
	})
	dial(t, s2).Call(request(codeRefuse, 3))
	if got := <-refused; got != "5/17/refused" {
		t.Fatalf("Refused saw %q", got)
	}
}

func TestHandlerPanicBecomesSystemErrorAndListenerKeepsServing(t *testing.T) {
	s, logs := startTiny(t, nil)
	w := dial(t, s)
	resp := w.Call(request(codePanic, 1))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "boom") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	if resp := w.Call(request(codeEcho, 2, "v", "after")); resp.Remark != "after" {
		t.Fatalf("after panic: %+v", resp)
	}
	if !strings.Contains(logs.String(), "handler panic") {
		t.Fatalf("no log line for the panic: %s", logs)
	}
}

// A oneway request is handled (Observe sees it) and gets no reply: the
// next reply on the connection is the next request's.
func TestOnewayIsHandledWithoutReply(t *testing.T) {
	seen := make(chan int32, 4)
	s, _ := startTiny(t, func(o *Options) {
		o.Observe = func(code, _ int32, _ time.Duration, _ uint64) { seen <- code }
	})
	w := dial(t, s)
	ow := request(codeEcho, 1, "v", "oneway")
	ow.Flag = codec.FlagOneway
	w.Send(ow)
	if resp := w.Call(request(codeEcho, 2, "v", "two")); resp.Remark != "two" {
		t.Fatalf("reply %+v", resp)
	}
	if a, b := <-seen, <-seen; a != codeEcho || b != codeEcho {
		t.Fatalf("observed %d, %d", a, b)
	}
}

func TestResponseFlaggedFrameIsIgnored(t *testing.T) {
	s, _ := startTiny(t, nil)
	w := dial(t, s)
	stray := request(codeEcho, 1)
	stray.Flag = codec.FlagResponse
	w.Send(stray)
	if resp := w.Call(request(codeEcho, 2)); resp.Opaque != 2 {
		t.Fatalf("opaque %d", resp.Opaque)
	}
}

func TestBrokenFramesCloseOnlyThatConnection(t *testing.T) {
	rejected := make(chan string, 16)
	s, logs := startTiny(t, func(o *Options) {
		o.Events.FrameRejected = func(reason string) { rejected <- reason }
	})
	good := dial(t, s)
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	json := []byte(`{"code":1,"flag":0,"opaque":1}`)
	f := func(name string, frame []byte, reason string) {
		t.Run(name, func(t *testing.T) {
			w := dial(t, s)
			w.SendRaw(frame)
			if !w.ClosedByPeer() {
				t.Fatalf("connection left open")
			}
			if !strings.Contains(logs.String(), reason) {
				t.Fatalf("no log line with reason %q:\n%s", reason, logs)
			}
			if got := <-rejected; got != reason {
				t.Fatalf("FrameRejected saw %q, want %q", got, reason)
			}
			// Another connection does not notice.
			if resp := good.Call(request(codeEcho, 5)); resp.Code != codec.Success {
				t.Fatalf("good connection got %d", resp.Code)
			}
		})
	}
	f("length over the frame limit", cat(be32(1<<30), be32(4)), "frame_too_large")
	f("length shorter than the header word", cat(be32(2), []byte{0, 0}), "frame_too_short")
	f("header length beyond the frame", cat(be32(4+uint32(len(json))), be32(uint32(len(json))+10), json), "bad_header_length")
	f("unknown serialize type", cat(be32(4+uint32(len(json))), be32(7<<24|uint32(len(json))), json), "unknown_serialize_type")
	bad := []byte(`{"code":1,"flag":`)
	f("truncated json header", cat(be32(4+uint32(len(bad))), be32(uint32(len(bad))), bad), "bad_json_header")
	bin := []byte{0, 106, 0, 1, 223, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0, 0}
	f("binary remark length beyond header", cat(be32(4+uint32(len(bin))), be32(1<<24|uint32(len(bin))), bin), "bad_binary_header")
}

// MaxFrame is the listener's own bound.
func TestMaxFrameOption(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.MaxFrame = 1 << 10 })
	w := dial(t, s)
	w.Call(request(codeEcho, 1, "v", strings.Repeat("x", 900)))
	w.Send(request(codeEcho, 2, "v", strings.Repeat("x", 1100)))
	if !w.ClosedByPeer() {
		t.Fatal("frame over MaxFrame served")
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	s, _ := startTiny(t, nil)
	w := dial(t, s)
	w.Call(request(codeEcho, 1))
	// Age every connection past the idle limit, then run the check the
	// one-second ticker runs.
	for _, c := range s.snapshotConns() {
		c.lastActive.Store(s.now.Load() - s.limits.idle.Milliseconds() - 1)
	}
	s.tick()
	if !w.ClosedByPeer() {
		t.Fatal("idle connection left open")
	}
}

// A handler learns its connection's id and peer, and ConnClosed reports
// the same id once the connection is gone.
func TestConnIDAndCloseHook(t *testing.T) {
	closed := make(chan ConnID, 4)
	s, _ := startTiny(t, func(o *Options) { o.ConnClosed = func(id ConnID) { closed <- id } })
	w1, w2 := dial(t, s), dial(t, s)
	who := func(w interface {
		Call(*codec.Command) *codec.Command
	}, opaque int32) (string, string) {
		resp := w.Call(request(codeWho, opaque))
		id, _ := resp.ExtValue("id")
		peer, _ := resp.ExtValue("peer")
		return id, peer
	}
	id1, peer1 := who(w1, 1)
	id2, _ := who(w2, 2)
	if id1 == id2 || id1 == "0" {
		t.Fatalf("ids %s and %s", id1, id2)
	}
	if peer1 != w1.NC.LocalAddr().String() {
		t.Fatalf("peer %s, want %s", peer1, w1.NC.LocalAddr())
	}
	if again, _ := who(w1, 3); again != id1 {
		t.Fatalf("id changed on the same connection: %s then %s", id1, again)
	}
	if s.ConnCount() != 2 {
		t.Fatalf("ConnCount %d, want 2", s.ConnCount())
	}
	w1.NC.Close()
	select {
	case id := <-closed:
		if strconv.FormatUint(uint64(id), 10) != id1 {
			t.Fatalf("ConnClosed reported %d, want %s", id, id1)
		}
	case <-time.After(remotingtest.Hang):
		t.Fatal("ConnClosed not called")
	}
}

// CloseConn closes the named connection only, which ConnClosed then
// reports; an unknown or already closed id is not found.
func TestCloseConn(t *testing.T) {
	closed := make(chan ConnID, 4)
	s, _ := startTiny(t, func(o *Options) { o.ConnClosed = func(id ConnID) { closed <- id } })
	w1, w2 := dial(t, s), dial(t, s)
	idOf := func(w *remotingtest.Wire, opaque int32) ConnID {
		v, _ := w.Call(request(codeWho, opaque)).ExtValue("id")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return ConnID(n)
	}
	id1 := idOf(w1, 1)
	idOf(w2, 2)
	if !s.CloseConn(id1) {
		t.Fatal("CloseConn did not find an open connection")
	}
	if !w1.ClosedByPeer() {
		t.Fatal("the connection is still open")
	}
	select {
	case id := <-closed:
		if id != id1 {
			t.Fatalf("ConnClosed reported %d, want %d", id, id1)
		}
	case <-time.After(remotingtest.Hang):
		t.Fatal("ConnClosed not called")
	}
	if r := w2.Call(request(codeEcho, 3, "v", "alive")); r.Remark != "alive" {
		t.Fatalf("the other connection: %+v", r)
	}
	if s.CloseConn(id1) || s.CloseConn(ConnID(1<<40)) {
		t.Fatal("CloseConn found a closed or unknown connection")
	}
}

// Two listeners in one process keep their own tables, options and hooks.
func TestSeveralListeners(t *testing.T) {
	closedA := make(chan ConnID, 1)
	a, _ := startTiny(t, func(o *Options) { o.ConnClosed = func(id ConnID) { closedA <- id } })
	b, _ := startTiny(t, func(o *Options) {
		o.Version = 0
		o.JSONReplies = true
		o.Routes = []Route{{Code: codeEcho, Handler: func(_ *Conn, _, resp *codec.Command) error {
			resp.Remark = "from b"
			return nil
		}}}
	})
	wa, wb := dial(t, a), dial(t, b)
	if r := wa.Call(request(codeEcho, 1, "v", "from a")); r.Remark != "from a" || r.Version != 479 {
		t.Fatalf("a: %+v", r)
	}
	if r := wb.Call(request(codeEcho, 1, "v", "ignored")); r.Remark != "from b" || r.Version != 0 {
		t.Fatalf("b: %+v", r)
	}
	if r := wb.Call(request(codeWho, 2)); r.Code != codec.RequestCodeNotSupported {
		t.Fatalf("b served a's code: %+v", r)
	}
	wb.NC.Close()
	select {
	case id := <-closedA:
		t.Fatalf("a's hook saw b's connection %d close", id)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestNewRefusesBadTables(t *testing.T) {
	h := func(*Conn, *codec.Command, *codec.Command) error { return nil }
	f := func(routes []Route, want string) {
		t.Helper()
		_, err := New(Options{Addr: "127.0.0.1:0", Routes: routes})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v, want %q", err, want)
		}
	}
	f([]Route{{Code: 1, Handler: h}, {Code: 1, Handler: h}}, "code 1 routed twice")
	f([]Route{{Code: 90001, Handler: h}, {Code: 90001, Handler: h}}, "code 90001 routed twice")
	f([]Route{{Code: 2}}, "code 2 has no handler")
}

// Codes beyond the dense table are routed too (the controller's are above
// 1000, DLedger's above 50000).
func TestSparseCodes(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) {
		o.Routes = append(o.Routes, Route{Code: 51001, Handler: func(_ *Conn, _, resp *codec.Command) error {
			resp.Remark = "vote"
			return nil
		}}, Route{Code: -5, Handler: func(_ *Conn, _, resp *codec.Command) error {
			resp.Remark = "negative"
			return nil
		}})
	})
	w := dial(t, s)
	if r := w.Call(request(51001, 1)); r.Remark != "vote" {
		t.Fatalf("51001: %+v", r)
	}
	if r := w.Call(request(-5, 2)); r.Remark != "negative" {
		t.Fatalf("-5: %+v", r)
	}
}

// Observe times a sampled code's first request on a connection and then
// one in TimeEvery, weighted by what each sample stands for.
func TestObserveSampling(t *testing.T) {
	type obs struct {
		code   int32
		weight uint64
	}
	seen := make(chan obs, 64)
	s, _ := startTiny(t, func(o *Options) {
		o.Routes[0].TimeEvery = 4 // codeEcho
		o.Observe = func(code, _ int32, took time.Duration, weight uint64) {
			if (weight == 0) != (took == 0) {
				t.Errorf("code %d: weight %d with duration %v", code, weight, took)
			}
			seen <- obs{code, weight}
		}
	})
	w := dial(t, s)
	for i := int32(1); i <= 9; i++ {
		w.Call(request(codeEcho, i))
	}
	w.Call(request(codeWho, 10))
	var weights []uint64
	for i := 0; i < 9; i++ {
		o := <-seen
		weights = append(weights, o.weight)
	}
	if got, want := weights, []uint64{1, 0, 0, 0, 4, 0, 0, 0, 4}; !slices.Equal(got, want) {
		t.Fatalf("weights %v, want %v", got, want)
	}
	if o := <-seen; o.code != codeWho || o.weight != 1 {
		t.Fatalf("unsampled code observed %+v, want weight 1", o)
	}
}
