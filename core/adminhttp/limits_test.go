// limits_test.go checks each cap of the admin listener: connections (idle
// ones give way, others are refused), requests in flight (probes exempt),
// header size, and the header-read and idle timeouts.

package adminhttp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// limited serves a listener with limits l and a blocking section at
// /block (it waits for release to be closed), shut down at cleanup.
func limited(t *testing.T, l Limits, release chan struct{}, entered chan struct{}) *Server {
	t.Helper()
	s := New(Options{Addr: "127.0.0.1:0", Log: quietLog, Limits: l})
	s.Handle("GET /block", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if entered != nil {
			entered <- struct{}{}
		}
		<-release
		WriteText(w, 200, "released\n")
	}))
	s.Handle("GET /page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { WriteText(w, 200, "page\n") }))
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve("test")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// rawConn is one client connection speaking HTTP/1.1 by hand, so the test
// decides what stays open and idle.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t, nc, bufio.NewReader(nc)}
}

// get sends GET path and reads the answer; err is set when the connection
// closed instead.
func (c *rawConn) get(path string) (int, error) {
	c.nc.SetDeadline(time.Now().Add(time.Minute))
	if _, err := fmt.Fprintf(c.nc, "GET %s HTTP/1.1\r\nHost: admin\r\n\r\n", path); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// closed reports whether the server closed the connection (a read ends
// in EOF or a reset) before a bound that only ends a hang.
func (c *rawConn) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := c.br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func waitOpen(t *testing.T, s *Server, want int) {
	t.Helper()
	remotingtest.WaitFor(t, fmt.Sprintf("%d connections open", want), func() bool { return s.ln.open() == want })
}

// waitIdle waits until the listener counts want connections idle: net/http
// marks a keep-alive connection idle after its answer is written, so the
// client may read the answer before that.
func waitIdle(t *testing.T, s *Server, want int) {
	t.Helper()
	remotingtest.WaitFor(t, fmt.Sprintf("%d idle connections", want), func() bool {
		s.ln.mu.Lock()
		defer s.ln.mu.Unlock()
		n := 0
		for _, in := range s.ln.conns {
			if in.state == http.StateIdle {
				n++
			}
		}
		return n == want
	})
}

// At the cap, a new client closes an idle keep-alive connection instead of
// waiting behind it: thousands of idle connections cannot lock scrapers
// out, nor take more than MaxConns descriptors.
func TestConnectionCapEvictsIdle(t *testing.T) {
	s := limited(t, Limits{MaxConns: 2}, nil, nil)
	a := dial(t, s.Addr())
	waitOpen(t, s, 1)
	b := dial(t, s.Addr())
	for _, c := range []*rawConn{a, b} {
		if code, err := c.get("/page"); code != 200 || err != nil {
			t.Fatalf("GET /page: %d %v", code, err)
		}
	}
	waitIdle(t, s, 2)
	c := dial(t, s.Addr())
	if code, err := c.get("/page"); code != 200 || err != nil {
		t.Fatalf("GET /page beyond the cap with idle connections: %d %v", code, err)
	}
	if !a.closed() {
		t.Fatal("the oldest idle connection was kept for the new one")
	}
	if code, err := b.get("/page"); code != 200 || err != nil {
		t.Fatalf("the newer idle connection was closed: %d %v", code, err)
	}
	if n := s.ln.open(); n > 2 {
		t.Fatalf("%d connections open over a cap of 2", n)
	}
	if s.ln.evicted.Load() != 1 {
		t.Fatalf("evicted %d", s.ln.evicted.Load())
	}
}

// Silent connections (connected, no request) give way to a new one,
// oldest first: a slow client cannot hold the cap until its header
// timeout.
func TestConnectionCapEvictsSilent(t *testing.T) {
	s := limited(t, Limits{MaxConns: 2}, nil, nil)
	first := dial(t, s.Addr())
	waitOpen(t, s, 1)
	second := dial(t, s.Addr())
	waitOpen(t, s, 2)
	if code, err := dial(t, s.Addr()).get("/page"); code != 200 || err != nil {
		t.Fatalf("GET /page beyond the cap with silent connections: %d %v", code, err)
	}
	if !first.closed() {
		t.Fatal("the oldest silent connection was kept")
	}
	if code, err := second.get("/page"); code != 200 || err != nil {
		t.Fatalf("the newer silent connection was closed: %d %v", code, err)
	}
}

// With every connection busy answering, a new one is closed at once, and
// served again once one is done.
func TestConnectionCapRefusesWhenAllBusy(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 2)
	s := limited(t, Limits{MaxConns: 2, MaxInFlight: 4}, release, entered)
	done := make(chan error, 2)
	for range 2 {
		c := dial(t, s.Addr())
		go func() {
			_, err := c.get("/block")
			done <- err
		}()
		<-entered
	}
	over := dial(t, s.Addr())
	if !over.closed() {
		t.Fatal("a connection over the cap was kept")
	}
	if s.ln.refused.Load() == 0 {
		t.Fatal("refusal not counted")
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("a busy connection: %v", err)
		}
	}
	// The two answered connections stay open, idle once net/http marks
	// them so, which can be after the client read the answer: only then
	// may a new one take an idle one's place.
	waitIdle(t, s, 2)
	if code, err := dial(t, s.Addr()).get("/page"); code != 200 || err != nil {
		t.Fatalf("GET /page once the others are done: %d %v", code, err)
	}
}

// Requests beyond MaxInFlight wait QueueWait for a slot and then get 503
// with Retry-After; the probes are answered meanwhile.
func TestInFlightCap(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	s := New(Options{Log: quietLog, Limits: Limits{MaxInFlight: 1, QueueWait: 20 * time.Millisecond}})
	s.Handle("GET /block", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		WriteText(w, 200, "released\n")
	}))
	h := s.Handler()
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/block", nil))
		done <- rec.Code
	}()
	<-entered
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "busy") {
		t.Fatalf("a request over the cap: %d %q %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		if code, _ := get(t, h, probe); code != 200 {
			t.Fatalf("%s with the gate full: %d", probe, code)
		}
	}
	close(release)
	if code := <-done; code != 200 {
		t.Fatalf("the request in flight: %d", code)
	}
	if code, _ := get(t, h, "/metrics"); code != 200 {
		t.Fatalf("metrics after the slot freed: %d", code)
	}
	if s.gate.busy.Load() != 1 {
		t.Fatalf("busy %d", s.gate.busy.Load())
	}
}

// A header over MaxHeaderBytes gets 431 (net/http allows 4 KiB of slack
// beyond it).
func TestHeaderCap(t *testing.T) {
	s := limited(t, Limits{MaxHeaderBytes: 1 << 10}, nil, nil)
	c := dial(t, s.Addr())
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c.nc, "GET /page HTTP/1.1\r\nHost: admin\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 8<<10))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("an 8 KiB header: %d", resp.StatusCode)
	}
	if code, err := dial(t, s.Addr()).get("/page"); code != 200 || err != nil {
		t.Fatalf("a small header: %d %v", code, err)
	}
}

// A client that sends half a header, or goes idle after an answer, is
// closed by the listener's timeouts.
func TestHeaderAndIdleTimeouts(t *testing.T) {
	s := limited(t, Limits{ReadHeaderTimeout: 50 * time.Millisecond}, nil, nil)
	slow := dial(t, s.Addr())
	fmt.Fprintf(slow.nc, "GET /page HTTP/1.1\r\nHost: adm")
	if !slow.closed() {
		t.Fatal("half a header kept the connection past ReadHeaderTimeout")
	}
	waitOpen(t, s, 0)
	// A listener of its own: under a 50 ms header timeout, a client held
	// up that long between connecting and sending would be closed before
	// its request.
	s = limited(t, Limits{IdleTimeout: 50 * time.Millisecond}, nil, nil)
	idle := dial(t, s.Addr())
	if code, err := idle.get("/page"); code != 200 || err != nil {
		t.Fatalf("GET /page: %d %v", code, err)
	}
	if !idle.closed() {
		t.Fatal("an idle keep-alive connection kept past IdleTimeout")
	}
	waitOpen(t, s, 0)
}

func TestLimitsDefaults(t *testing.T) {
	l := Limits{}.withDefaults()
	if l.MaxConns != DefaultMaxConns || l.MaxInFlight != DefaultMaxInFlight || l.MaxHeaderBytes != DefaultMaxHeaderBytes ||
		l.ReadHeaderTimeout != DefaultReadHeaderTimeout || l.ReadTimeout != DefaultReadTimeout ||
		l.IdleTimeout != DefaultIdleTimeout || l.QueueWait != DefaultQueueWait {
		t.Fatalf("defaults %+v", l)
	}
	s := New(Options{Addr: "127.0.0.1:0", Log: quietLog})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve("test")
	defer s.Shutdown(context.Background())
	if s.srv.MaxHeaderBytes != DefaultMaxHeaderBytes || s.srv.ReadHeaderTimeout != DefaultReadHeaderTimeout ||
		s.srv.ReadTimeout != DefaultReadTimeout || s.srv.IdleTimeout != DefaultIdleTimeout || s.srv.WriteTimeout != DefaultWriteTimeout {
		t.Fatalf("http.Server without the limits: %+v", s.srv)
	}
}
