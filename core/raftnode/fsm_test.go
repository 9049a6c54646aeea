// The snapshot envelope: a round trip and every check on restore.

package raftnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func envelope(payload []byte) []byte {
	return append(encodeSnapshotHeader(payload), payload...)
}

func TestSnapshotEnvelope(t *testing.T) {
	for _, p := range [][]byte{nil, []byte("state"), bytes.Repeat([]byte{0xab}, 70000)} {
		got, err := readSnapshot(bytes.NewReader(envelope(p)))
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("round trip of %d bytes: %d bytes, %v", len(p), len(got), err)
		}
	}
	good := envelope([]byte("payload"))
	f := func(b []byte) {
		t.Helper()
		if _, err := readSnapshot(bytes.NewReader(b)); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("readSnapshot(%x): %v", b, err)
		}
	}
	mod := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	f(nil)
	f(good[:10])                    // short header
	f(mod(0, 'X'))                  // magic
	f(mod(7, 2))                    // version
	f(mod(len(good)-1, 'X'))        // payload changed: crc
	f(mod(16, good[16]^1))          // crc changed
	f(good[:len(good)-1])           // truncated payload
	f(append(bytes.Clone(good), 0)) // trailing byte
	huge := bytes.Clone(good)
	binary.BigEndian.PutUint64(huge[8:], maxSnapshotSize+1)
	f(huge)
}

// The adapter hands Restore exactly the payload and passes Apply the index.
func TestFSMAdapter(t *testing.T) {
	rec := &recFSM{}
	a := &fsmAdapter{fsm: rec}
	rec.Apply(1, []byte("a"))
	rec.Apply(2, []byte("b"))
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil || !sink.closed {
		t.Fatalf("persist: %v, closed %v", err, sink.closed)
	}
	other := &recFSM{}
	if err := (&fsmAdapter{fsm: other}).Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if got := other.list(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("restored %v", got)
	}
	bad := sink.Bytes()
	bad[len(bad)-1] ^= 1
	if err := (&fsmAdapter{fsm: other}).Restore(io.NopCloser(bytes.NewReader(bad))); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("restore of a corrupt snapshot: %v", err)
	}
	if got := other.list(); len(got) != 2 {
		t.Fatalf("a rejected snapshot changed the state: %v", got)
	}
}

type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
