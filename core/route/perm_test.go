// perm_test.go checks the per-group write permission count.

package route

import "testing"

func TestGroupWritePermCount(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	// a's topics: T perm 7, A/UNIT/SUB/BOTH perm 6, all writable.
	if w, n := tb.WritePerm("a"); w != 5 || n != 5 {
		t.Fatalf("a: %d of %d writable", w, n)
	}
	tb.WipeWritePerm("a")
	if w, n := tb.WritePerm("a"); w != 0 || n != 5 {
		t.Fatalf("a wiped: %d of %d writable", w, n)
	}
	if w, n := tb.WritePerm("b"); w != 2 || n != 2 {
		t.Fatalf("b: %d of %d writable", w, n)
	}
	if w, n := tb.WritePerm("nope"); w != 0 || n != 0 {
		t.Fatalf("unknown group: %d of %d", w, n)
	}
}
