// admin_flood_test.go: a crowd of keep-alive connections to the admin
// listener takes no more than its cap of descriptors, and the remoting
// port, the probes and the status page keep answering.

package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

func TestAdminFloodLeavesRemotingServing(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	s, _ := startServer(t, cfg)
	before := openFDs(t)
	// Keep-alive connections that asked once and stay idle: without a
	// cap each would hold a descriptor until the idle timeout (30 s).
	const crowd = 4 * adminhttp.DefaultMaxConns
	conns := make([]net.Conn, 0, crowd)
	for range crowd {
		c, err := net.DialTimeout("tcp", s.AdminAddr(), remotingtest.Hang)
		if err != nil {
			t.Fatalf("dial admin: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(remotingtest.Hang))
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET /healthz: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conns = append(conns, c)
	}
	// The listener closes all but its cap; the test waits until the
	// clients see that.
	closed := make([]bool, crowd)
	n := 0
	buf := make([]byte, 1)
	for end := time.Now().Add(remotingtest.Hang); n < crowd-adminhttp.DefaultMaxConns; {
		if time.Now().After(end) {
			t.Fatalf("%d of %d idle admin connections closed: the admin listener holds more than %d", n, crowd, adminhttp.DefaultMaxConns)
		}
		for i, c := range conns {
			if closed[i] {
				continue
			}
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := c.Read(buf); err != nil {
				var ne net.Error
				if errors.Is(err, io.EOF) || !errors.As(err, &ne) || !ne.Timeout() {
					closed[i] = true
					n++
				}
			}
		}
	}
	// Our crowd's descriptors plus the listener's cap, and a few for the
	// runtime.
	if grew := openFDs(t) - before; grew > crowd+adminhttp.DefaultMaxConns+16 {
		t.Fatalf("descriptors grew by %d for %d admin connections", grew, crowd)
	}
	w := dialWire(t, s.Addr())
	if r := w.Call(request(codec.GetRouteInfoByTopic, 1, "topic", "T")); r.Code != codec.TopicNotExist {
		t.Fatalf("route query during the flood: %d", r.Code)
	}
	for _, path := range []string{"/healthz", "/readyz", "/", "/metrics"} {
		if code, _ := httpGet(t, "http://"+s.AdminAddr()+path); code != 200 {
			t.Fatalf("GET %s during the flood: %d", path, code)
		}
	}
}
