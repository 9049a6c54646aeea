// deferred_test.go checks deferred replies: they go out when completed,
// after the replies to later requests, from any goroutine, exactly once,
// and completing one is safe against the connection closing and against
// Shutdown. Run it with -race.

package remoting

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/tlstest"
)

const codeDefer int32 = 50

// deferred is a Pending with what its completion needs, copied out of the
// request as a handler must.
type deferred struct {
	p     *Pending
	value string
	conn  ConnID
}

// deferOptions adds codeDefer to the tiny table: its handler defers and
// hands the Pending to the test; "fail" in extFields v makes it return an
// error after deferring.
func deferOptions(o *Options, pending chan<- deferred) {
	o.Routes = append(o.Routes, Route{Code: codeDefer, Handler: func(c *Conn, req, resp *codec.Command) error {
		v, _ := req.ExtValue("v")
		p := c.Defer()
		if p2 := c.Defer(); p2 != p {
			return errors.New("a second Defer gave another Pending")
		}
		if v == "fail" {
			return Refuse(codec.SystemBusy, "busy")
		}
		pending <- deferred{p: p, value: strings.Clone(v), conn: c.ID()}
		return nil
	}})
}

func reply(remark string) *codec.Command {
	return &codec.Command{Code: codec.Success, Remark: remark}
}

// A deferred reply goes out when completed; requests that came after it,
// oneway ones included, are served meanwhile.
func TestDeferredReplyComesAfterLaterRequests(t *testing.T) {
	pending := make(chan deferred, 4)
	observed := make(chan string, 16)
	s, _ := startTiny(t, func(o *Options) {
		deferOptions(o, pending)
		o.Observe = func(code, resp int32, took time.Duration, weight uint64) {
			observed <- strconv.Itoa(int(code)) + "/" + strconv.Itoa(int(resp)) + "/" + strconv.FormatUint(weight, 10)
		}
	})
	w := dial(t, s)
	w.Send(request(codeDefer, 1, "v", "slow"))
	d := <-pending
	if d.value != "slow" {
		t.Fatalf("handler copied %q", d.value)
	}
	heartbeat := request(codeEcho, 2)
	heartbeat.Flag = codec.FlagOneway
	w.Send(heartbeat)
	if r := w.Call(request(codeEcho, 3, "v", "fast")); r.Remark != "fast" {
		t.Fatalf("request after the deferred one: %+v", r)
	}
	if got := []string{<-observed, <-observed}; got[0] != "1/0/1" || got[1] != "1/0/1" {
		t.Fatalf("observed %q before the deferred reply", got)
	}
	if err := d.p.Reply(reply("done " + d.value)); err != nil {
		t.Fatal(err)
	}
	r := w.MustRecv()
	if r.Opaque != 1 || r.Remark != "done slow" || !r.IsResponse() || r.Version != 479 {
		t.Fatalf("deferred reply %+v", r)
	}
	if got := <-observed; got != "50/0/1" {
		t.Fatalf("deferred reply observed as %q", got)
	}
	if err := d.p.Reply(reply("again")); !errors.Is(err, ErrReplied) {
		t.Fatalf("second Reply: %v, want ErrReplied", err)
	}
}

// Many deferred replies completed from many goroutines, interleaved with
// the connection's own replies: each request is answered exactly once,
// with its own opaque, in whatever order.
func TestDeferredRepliesFromManyGoroutines(t *testing.T) {
	const deferredN, syncN = 200, 200
	pending := make(chan deferred, deferredN)
	s, _ := startTiny(t, func(o *Options) { deferOptions(o, pending) })
	w := dial(t, s)
	var completers sync.WaitGroup
	const completerN = 8
	for range completerN {
		completers.Add(1)
		go func() {
			defer completers.Done()
			for d := range pending {
				if d.p == nil {
					return // the end
				}
				if err := d.p.Reply(reply(d.value)); err != nil {
					t.Errorf("Reply: %v", err)
				}
			}
		}()
	}
	sent := make(chan error, 1)
	go func() {
		var batch []byte
		for i := int32(0); i < deferredN+syncN; i++ {
			code := codeEcho
			if i%2 == 0 {
				code = codeDefer
			}
			batch = codec.AppendFrame(batch, request(code, i, "v", strconv.Itoa(int(i))))
			if len(batch) > 4<<10 {
				if _, err := w.NC.Write(batch); err != nil {
					sent <- err
					return
				}
				batch = batch[:0]
			}
		}
		_, err := w.NC.Write(batch)
		sent <- err
	}()
	seen := map[int32]bool{}
	for len(seen) < deferredN+syncN {
		r, err := w.Recv()
		if err != nil {
			t.Fatalf("after %d replies: %v", len(seen), err)
		}
		if seen[r.Opaque] || r.Remark != strconv.Itoa(int(r.Opaque)) {
			t.Fatalf("reply %d twice or with remark %q", r.Opaque, r.Remark)
		}
		seen[r.Opaque] = true
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	// Ended by sends, not by closing the channel: the handlers' sends
	// happened before their replies arrived, but the race detector does
	// not see an order the network gave.
	for range completerN {
		pending <- deferred{}
	}
	completers.Wait()
}

// A oneway request's Pending sends nothing.
func TestDeferredOnewaySendsNothing(t *testing.T) {
	pending := make(chan deferred, 1)
	s, _ := startTiny(t, func(o *Options) { deferOptions(o, pending) })
	w := dial(t, s)
	ow := request(codeDefer, 1, "v", "x")
	ow.Flag = codec.FlagOneway
	w.Send(ow)
	if err := (<-pending).p.Reply(reply("never")); err != nil {
		t.Fatalf("oneway Reply: %v", err)
	}
	if r := w.Call(request(codeEcho, 2)); r.Opaque != 2 {
		t.Fatalf("a reply to the oneway request came first: %+v", r)
	}
}

// A handler error after Defer answers at once; the Pending is void.
func TestDeferredThenErrorAnswersNow(t *testing.T) {
	pending := make(chan deferred, 1)
	s, _ := startTiny(t, func(o *Options) { deferOptions(o, pending) })
	if r := dial(t, s).Call(request(codeDefer, 1, "v", "fail")); r.Code != codec.SystemBusy || r.Remark != "busy" {
		t.Fatalf("reply %+v", r)
	}
}

func TestDeferredReplyError(t *testing.T) {
	pending := make(chan deferred, 2)
	s, _ := startTiny(t, func(o *Options) { deferOptions(o, pending) })
	w := dial(t, s)
	w.Send(request(codeDefer, 1))
	w.Send(request(codeDefer, 2))
	d1, d2 := <-pending, <-pending
	d1.p.ReplyError(Refuse(2012, "Failed to elect a new master"))
	d2.p.ReplyError(errors.New("lost leadership"))
	for range 2 {
		r := w.MustRecv()
		switch {
		case r.Opaque == 1 && r.Code == 2012 && r.Remark == "Failed to elect a new master" && !r.HasExt:
		case r.Opaque == 2 && r.Code == codec.SystemError && r.Remark == "lost leadership":
		default:
			t.Fatalf("reply %+v", r)
		}
	}
}

// A binary request deferred gets a binary reply, unless the listener
// answers in JSON only.
func TestDeferredReplySerializeType(t *testing.T) {
	for _, jsonOnly := range []bool{false, true} {
		pending := make(chan deferred, 1)
		s, _ := startTiny(t, func(o *Options) {
			deferOptions(o, pending)
			o.JSONReplies = jsonOnly
			o.Version = 0
		})
		w := dial(t, s)
		req := request(codeDefer, 9)
		req.SerializeType = codec.SerializeRocketMQ
		w.Send(req)
		(<-pending).p.Reply(reply("x"))
		r := w.MustRecv()
		want := codec.SerializeRocketMQ
		if jsonOnly {
			want = codec.SerializeJSON
		}
		if r.SerializeType != want || r.Opaque != 9 || r.Version != 0 {
			t.Fatalf("JSONReplies %v: reply %+v", jsonOnly, r)
		}
	}
}

// Completing after the connection closed is refused, never a panic; so is
// completing while it closes, which this repeats to give the race detector
// a chance.
func TestDeferredReplyAfterTheConnectionCloses(t *testing.T) {
	pending := make(chan deferred, 64)
	closed := make(chan ConnID, 64)
	s, _ := startTiny(t, func(o *Options) {
		deferOptions(o, pending)
		o.ConnClosed = func(id ConnID) { closed <- id }
	})
	w := dial(t, s)
	w.Send(request(codeDefer, 1))
	d := <-pending
	w.NC.Close()
	<-closed
	if err := d.p.Reply(reply("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reply after close: %v, want ErrClosed", err)
	}
	for i := range 20 {
		w := dial(t, s)
		w.Send(request(codeDefer, int32(i)))
		d := <-pending
		done := make(chan error, 1)
		go func() { done <- d.p.Reply(reply("racing")) }()
		w.NC.Close()
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("Reply racing the close: %v", err)
		}
		<-closed
	}
}

// A reply completed after Shutdown is dropped; Shutdown is not held by
// replies still pending.
func TestDeferredReplyAfterShutdown(t *testing.T) {
	pending := make(chan deferred, 1)
	o := testOptions(&remotingtest.Logs{})
	deferOptions(&o, pending)
	s := newServer(t, o, nil)
	w := dial(t, s)
	w.Send(request(codeDefer, 1))
	d := <-pending
	ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a reply pending: %v", err)
	}
	if err := d.p.Reply(reply("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reply after Shutdown: %v, want ErrClosed", err)
	}
	if !w.ClosedByPeer() {
		t.Fatal("connection open after Shutdown")
	}
}

// Deferred replies over TLS share the TLS connection's output the same
// way.
func TestDeferredReplyOverTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	pending := make(chan deferred, 1)
	s, _ := startTiny(t, func(o *Options) {
		deferOptions(o, pending)
		o.TLS = tlsOption(t, ca, false)
	})
	w, err := dialTLS(t, s, ca)
	if err != nil {
		t.Fatal(err)
	}
	w.Send(request(codeDefer, 1, "v", "tls"))
	d := <-pending
	if r := w.Call(request(codeEcho, 2, "v", "sync")); r.Remark != "sync" {
		t.Fatalf("sync reply %+v", r)
	}
	if err := d.p.Reply(reply(d.value)); err != nil {
		t.Fatal(err)
	}
	if r := w.MustRecv(); r.Opaque != 1 || r.Remark != "tls" {
		t.Fatalf("deferred reply over TLS %+v", r)
	}
}

// A deferred reply too large to frame goes out as SYSTEM_ERROR.
func TestDeferredReplyTooLargeToFrame(t *testing.T) {
	pending := make(chan deferred, 1)
	s, _ := startTiny(t, func(o *Options) { deferOptions(o, pending) })
	w := dial(t, s)
	w.Send(request(codeDefer, 1))
	huge := reply(strings.Repeat("\x01", 3<<20))
	huge.SetExt("k", "v")
	if err := (<-pending).p.Reply(huge); err != nil {
		t.Fatal(err)
	}
	if r := w.MustRecv(); r.Code != codec.SystemError || !strings.HasPrefix(r.Remark, "the response to UNKNOWN would be") || r.HasExt {
		t.Fatalf("reply %d %.60q", r.Code, r.Remark)
	}
}
