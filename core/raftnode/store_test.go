// The bbolt log and stable store against raft's LogStore contract, its
// encoding, restarts and the directory lock.

package raftnode

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

func openTestStore(t *testing.T, dir string) *boltStore {
	t.Helper()
	s, err := openBoltStore(filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBoltStoreLogs(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)
	idx := func(wantFirst, wantLast uint64) {
		t.Helper()
		first, err1 := s.FirstIndex()
		last, err2 := s.LastIndex()
		if err1 != nil || err2 != nil || first != wantFirst || last != wantLast {
			t.Fatalf("first/last = %d/%d (%v %v), want %d/%d", first, last, err1, err2, wantFirst, wantLast)
		}
	}
	idx(0, 0)
	var l raft.Log
	if err := s.GetLog(1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog on an empty store: %v", err)
	}
	at := time.Unix(1700000000, 123456789)
	var batch []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		batch = append(batch, &raft.Log{Index: i, Term: i / 3, Type: raft.LogCommand, Data: []byte{byte(i), 0, 0xff}, AppendedAt: at})
	}
	batch[4].Extensions = []byte("ext")
	batch[5].Data = nil
	batch[6].Type = raft.LogConfiguration
	batch[7].AppendedAt = time.Time{}
	if err := s.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(&raft.Log{Index: 11, Term: 4, Type: raft.LogNoop}); err != nil {
		t.Fatal(err)
	}
	idx(1, 11)
	for _, want := range batch {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatal(err)
		}
		if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type || string(got.Data) != string(want.Data) ||
			string(got.Extensions) != string(want.Extensions) || !got.AppendedAt.Equal(want.AppendedAt) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", want.Index, got, *want)
		}
	}
	// Conflicting entries are overwritten in place, as raft does on a follower.
	if err := s.StoreLog(&raft.Log{Index: 11, Term: 5, Data: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(11, &l); err != nil || l.Term != 5 || string(l.Data) != "new" {
		t.Fatalf("overwritten entry: %+v %v", l, err)
	}
	// Compaction from the front and truncation from the back.
	if err := s.DeleteRange(1, 4); err != nil {
		t.Fatal(err)
	}
	idx(5, 11)
	if err := s.DeleteRange(9, 11); err != nil {
		t.Fatal(err)
	}
	idx(5, 8)
	if err := s.GetLog(4, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("deleted entry: %v", err)
	}

	// Stable values.
	if _, err := s.Get([]byte("k")); err == nil || err.Error() != "not found" {
		t.Fatalf("Get of an absent key: %v (raft needs the text \"not found\")", err)
	}
	if v, err := s.GetUint64([]byte("term")); v != 0 || err != nil {
		t.Fatalf("GetUint64 of an absent key: %d %v", v, err)
	}
	if err := s.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("term"), 1<<40+7); err != nil {
		t.Fatal(err)
	}
	// Everything survives a reopen.
	s.Close()
	s = openTestStore(t, dir)
	defer s.Close()
	idx(5, 8)
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get after reopen: %q %v", v, err)
	}
	if v, err := s.GetUint64([]byte("term")); err != nil || v != 1<<40+7 {
		t.Fatalf("GetUint64 after reopen: %d %v", v, err)
	}
	if err := s.GetLog(5, &l); err != nil || string(l.Extensions) != "ext" {
		t.Fatalf("entry after reopen: %+v %v", l, err)
	}
	// A stable value of the wrong size is an error, not a wrong term.
	s.Set([]byte("bad"), []byte{1, 2})
	if _, err := s.GetUint64([]byte("bad")); err == nil {
		t.Fatal("GetUint64 of a 2-byte value succeeded")
	}
}

func TestBoltStoreCorruptEntry(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	good := encodeLog(&raft.Log{Index: 1, Term: 2, Data: []byte("abc"), Extensions: []byte("x")})
	f := func(v []byte) {
		t.Helper()
		err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketLogs).Put(indexKey(1), v) })
		if err != nil {
			t.Fatal(err)
		}
		var l raft.Log
		if err := s.GetLog(1, &l); !errors.Is(err, errBadEntry) {
			t.Fatalf("GetLog of %x: %v", v, err)
		}
	}
	f(nil)
	f([]byte{9})
	f(append([]byte{2}, good[1:]...)) // unknown format
	f(good[:len(good)-1])             // truncated
	f(append(good, 0))                // trailing byte
	f([]byte{1, 0, 0x80})             // bad term varint
	f([]byte{1, 0, 1, 0, 0x7f})       // data length past the end
}

func TestDirLock(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(dir); !errors.Is(err, ErrDirLocked) {
		t.Fatalf("second lock: %v", err)
	}
	// A node refuses the directory too.
	cfg := Config{ID: "a", Peers: []Peer{{ID: "a", RaftAddr: "a"}}, Dir: dir}
	_, tr := raft.NewInmemTransport("a")
	cfg.Transport = tr
	if _, err := New(cfg, &recFSM{}); !errors.Is(err, ErrDirLocked) {
		t.Fatalf("New on a locked directory: %v", err)
	}
	l.release()
	l2, err := lockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.release()
}

func TestConfigValidation(t *testing.T) {
	_, tr := raft.NewInmemTransport("a")
	base := func() Config {
		return Config{ID: "a", Peers: []Peer{{ID: "a", RaftAddr: "a"}, {ID: "b", RaftAddr: "b"}}, InMemory: true, Transport: tr}
	}
	f := func(mutate func(*Config)) {
		t.Helper()
		c := base()
		mutate(&c)
		if n, err := New(c, &recFSM{}); err == nil {
			n.Close()
			t.Fatalf("New(%+v) succeeded", c)
		}
	}
	f(func(c *Config) { c.ID = "" })
	f(func(c *Config) { c.ID = "z" })
	f(func(c *Config) { c.Peers = nil })
	f(func(c *Config) { c.Peers[1].ID = "a" })
	f(func(c *Config) { c.Peers[1].RaftAddr = "a" })
	f(func(c *Config) { c.Peers[1].RaftAddr = "" })
	f(func(c *Config) { c.InMemory = false })
	f(func(c *Config) { c.Transport = nil })
	f(func(c *Config) { c.HeartbeatTimeout, c.ElectionTimeout = time.Second, time.Millisecond })
	f(func(c *Config) { c.LeaderLeaseTimeout, c.HeartbeatTimeout = time.Second, 100*time.Millisecond })
}
