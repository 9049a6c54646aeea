// The raft log store and stable store on one bbolt file, and the directory lock.

package raftnode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// Names under the data directory.
const (
	dbFile   = "raft.db"
	lockFile = "LOCK"
)

var (
	bucketLogs   = []byte("logs")
	bucketStable = []byte("stable")
)

// errKeyNotFound must read "not found": hashicorp/raft compares the text of
// the StableStore's error to tell a fresh store from a broken one.
var errKeyNotFound = errors.New("not found")

// logFormat is the first byte of every stored entry, so the encoding can
// change later without guessing.
const logFormat = 1

// boltStore keeps raft's log entries (key: the 8-byte big-endian index) and
// its stable values (current term, last vote) in one bbolt file. Every
// update is one bbolt transaction, and bbolt's commit fsyncs (fdatasync on
// Linux) the data and the meta page before returning, so an entry raft was
// told is stored survives a crash of the process or the machine.
type boltStore struct {
	db *bolt.DB
}

func openBoltStore(path string) (*boltStore, error) {
	// The directory lock is taken first, so the timeout only guards against
	// a bbolt file locked by a process that ignores the LOCK file. The
	// freelist is rebuilt on open instead of written with every commit (as
	// etcd runs bbolt): one page less to sync per write, and the database is
	// small enough to scan at start-up.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketLogs, bucketStable} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("init %s: %w", path, err)
	}
	return &boltStore{db: db}, nil
}

func (s *boltStore) Close() error { return s.db.Close() }

func indexKey(i uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], i)
	return k[:]
}

// FirstIndex implements raft.LogStore.
func (s *boltStore) FirstIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().First(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// LastIndex implements raft.LogStore.
func (s *boltStore) LastIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().Last(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// GetLog implements raft.LogStore.
func (s *boltStore) GetLog(index uint64, log *raft.Log) error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLogs).Get(indexKey(index))
		if v == nil {
			return raft.ErrLogNotFound
		}
		if err := decodeLog(v, log); err != nil {
			return fmt.Errorf("log entry %d: %w", index, err)
		}
		log.Index = index
		return nil
	})
}

// StoreLog implements raft.LogStore.
func (s *boltStore) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs implements raft.LogStore: the batch lands in one transaction,
// so it is stored whole or not at all.
func (s *boltStore) StoreLogs(logs []*raft.Log) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		for _, l := range logs {
			if err := b.Put(indexKey(l.Index), encodeLog(l)); err != nil {
				return fmt.Errorf("store log entry %d: %w", l.Index, err)
			}
		}
		return nil
	})
}

// DeleteRange implements raft.LogStore (both ends included).
func (s *boltStore) DeleteRange(min, max uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(indexKey(min)); k != nil; k, _ = c.Next() {
			if binary.BigEndian.Uint64(k) > max {
				break
			}
			if err := c.Delete(); err != nil {
				return fmt.Errorf("delete log entries %d-%d: %w", min, max, err)
			}
		}
		return nil
	})
}

// Set implements raft.StableStore.
func (s *boltStore) Set(key, val []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStable).Put(key, val)
	})
}

// Get implements raft.StableStore.
func (s *boltStore) Get(key []byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketStable).Get(key)
		if v == nil {
			return errKeyNotFound
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// SetUint64 implements raft.StableStore.
func (s *boltStore) SetUint64(key []byte, val uint64) error {
	return s.Set(key, indexKey(val))
}

// GetUint64 implements raft.StableStore; an absent key reads as 0, as in
// raft's own in-memory store.
func (s *boltStore) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if errors.Is(err, errKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("stable key %q: %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// encodeLog lays an entry out as: format byte, type byte, uvarint term,
// varint AppendedAt (Unix ns, 0 for the zero time), uvarint length + data,
// uvarint length + extensions. The index is the key.
func encodeLog(l *raft.Log) []byte {
	buf := make([]byte, 0, 2+3*binary.MaxVarintLen64+len(l.Data)+len(l.Extensions)+binary.MaxVarintLen64)
	buf = append(buf, logFormat, byte(l.Type))
	buf = binary.AppendUvarint(buf, l.Term)
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	buf = binary.AppendVarint(buf, at)
	buf = binary.AppendUvarint(buf, uint64(len(l.Data)))
	buf = append(buf, l.Data...)
	buf = binary.AppendUvarint(buf, uint64(len(l.Extensions)))
	buf = append(buf, l.Extensions...)
	return buf
}

var errBadEntry = errors.New("malformed stored entry")

// decodeLog reverses encodeLog. The slices it fills are copies: bbolt's
// values are valid only inside their transaction.
func decodeLog(b []byte, l *raft.Log) error {
	if len(b) < 2 || b[0] != logFormat {
		return errBadEntry
	}
	*l = raft.Log{Type: raft.LogType(b[1])}
	b = b[2:]
	term, n := binary.Uvarint(b)
	if n <= 0 {
		return errBadEntry
	}
	l.Term, b = term, b[n:]
	at, n := binary.Varint(b)
	if n <= 0 {
		return errBadEntry
	}
	if at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	b = b[n:]
	var err error
	if l.Data, b, err = readBytes(b); err != nil {
		return err
	}
	if l.Extensions, b, err = readBytes(b); err != nil {
		return err
	}
	if len(b) != 0 {
		return errBadEntry
	}
	return nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	size, n := binary.Uvarint(b)
	if n <= 0 || size > uint64(len(b)-n) {
		return nil, nil, errBadEntry
	}
	b = b[n:]
	if size == 0 {
		return nil, b, nil
	}
	return append([]byte(nil), b[:size]...), b[size:], nil
}

// dirLock is an exclusive flock on <dir>/LOCK, held while the node runs, so
// a second process (or a second node in this one) cannot open the same
// store: two raft nodes writing one log would corrupt it silently.
type dirLock struct {
	f *os.File
}

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by process %s", ErrDirLocked, path, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is only for the message above; a stale one is harmless
	// because the kernel drops the flock when its holder dies.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	if l == nil {
		return
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
