// helpers.go holds small test helpers shared by the listener's and the
// servers' tests: frames padded to an exact size, polling a condition, and
// loopback addresses free to listen on.

package remotingtest

import (
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// Padded is req framed with a body that makes the whole frame size bytes
// long (req.Body is replaced).
func Padded(t testing.TB, req *codec.Command, size int) []byte {
	t.Helper()
	req.Body = nil
	head := len(codec.AppendFrame(nil, req))
	if size < head {
		t.Fatalf("frame of %d bytes asked, the header alone takes %d", size, head)
	}
	req.Body = make([]byte, size-head)
	f := codec.AppendFrame(nil, req)
	if len(f) != size {
		t.Fatalf("frame of %d bytes, want %d", len(f), size)
	}
	return f
}

// Hang bounds every wait of these helpers. It only ends a test that would
// otherwise hang, so it is long enough that a slow answer on a loaded
// machine under -race never reaches it: no verdict depends on it.
const Hang = time.Minute

// WaitFor polls cond every 5 ms until it holds; the deadline (Hang) is not
// a timing assertion.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(Hang); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// FreeAddrs returns n loopback addresses that were free a moment ago, for
// a server whose address must be known before it listens (a raft peer in
// its group's membership, a process started with a fixed port).
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}
