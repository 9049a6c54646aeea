// bufpool_test.go checks the reply-buffer pool: what it keeps after large
// answers, and that connections give back what they were lent.

package remoting

import "testing"

// After a burst of large answers the pool keeps no buffer larger than
// 1 MiB and no more than 8 MiB in all: an attack's buffers go to the
// collector once its connections are gone.
func TestReplyPoolKeepsLittleAfterLargeAnswers(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.newConn("127.0.0.1:1", nil, nil)
	// 24 buffers, 30 MiB in all: past the 8 MiB the pool may keep.
	for i := range 24 {
		size := 512 << 10
		if i%2 == 0 {
			size = 2 << 20
		}
		buf := c.Buffer()
		buf.B = append(buf.B, make([]byte, size)...)
	}
	c.releaseHeld()
	kept := 0
	for range 2048 {
		b := c.Buffer()
		if cap(b.B) > 1<<20 {
			t.Fatalf("a buffer of %d bytes was kept", cap(b.B))
		}
		kept += cap(b.B)
	}
	c.dropHeld()
	if kept > 8<<20 {
		t.Fatalf("the pool kept %d MiB", kept>>20)
	}
	if st := s.Stats().Pool; st.Lent != 0 {
		t.Fatalf("%d buffers still lent after every one was released or dropped", st.Lent)
	}
}

// Buffers go back, or are counted gone, however a connection ends: after
// a batch answered over a pipe, and after connections whose replies could
// not be sent closed, nothing is lent and the pool keeps at most 8 MiB.
func TestReplyPoolLentReturnsToZero(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.newConn("127.0.0.1:1", nil, nil)
	for range 10 {
		c.Buffer()
	}
	if st := s.Stats().Pool; st.Lent != 10 {
		t.Fatalf("%d lent, want 10", st.Lent)
	}
	c.releaseHeld()
	for range 3 {
		b := c.Buffer()
		b.B = append(b.B, make([]byte, 4<<20)...)
	}
	s.onClose(c) // a connection that ends with replies it never flushed
	if st := s.Stats().Pool; st.Lent != 0 || st.IdleBytes > 8<<20 {
		t.Fatalf("pool %+v after the connection closed, want nothing lent and at most 8 MiB idle", st)
	}
}
