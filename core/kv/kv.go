// kv.go holds Store: its lock-free reads, its writes and its file.

package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rocketns/rocketns/core/atomicfile"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// table maps namespace -> key -> value. A published table is never modified:
// writers build a new one, so readers need no lock.
type table map[string]map[string]string

// Store is safe for concurrent use. Reads are lock-free loads of an immutable
// snapshot; writes are serialized and each one is on disk before it becomes
// visible.
//
// Failure policy: Java changes its table first and only logs a failed write,
// so memory and disk drift apart until the next successful write. Here a
// write that cannot be persisted returns an error and the change is not
// applied, so memory and disk always agree.
type Store struct {
	path   string
	limits Limits
	cur    atomic.Pointer[table]

	mu    sync.Mutex // serializes writers and the file they write
	prev  []byte     // the file's content as last loaded or written; becomes <path>.bak
	spare []byte     // the buffer of the content before prev, reused for the next file
	w     writer     // the file's encoding, kept per entry (encode.go)
}

// fileJSON is the file layout Java's KVConfigSerializeWrapper uses. Values are
// pointers because fastjson may write null for a key Java stored as null.
type fileJSON struct {
	ConfigTable map[string]map[string]*string `json:"configTable"`
}

// Open loads the store from path. A missing or empty file is an empty store
// (Java does the same). A file that does not parse is an error, and the file
// is left untouched: starting empty would overwrite the operator's data on
// the first write. A file over the limits is loaded whole (see OverLimits).
func Open(path string, opts ...Option) (*Store, error) {
	s := &Store{path: path, limits: DefaultLimits()}
	for _, o := range opts {
		o(s)
	}
	t := table{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("kv: read %s: %w", path, err)
	case len(bytes.TrimSpace(data)) == 0:
		s.prev = data
	default:
		var f fileJSON
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("kv: parse %s: %w", path, err)
		}
		for ns, kvs := range f.ConfigTable {
			// A null namespace would make Java fail later; an empty map is
			// the closest meaning.
			m := make(map[string]string, len(kvs))
			for k, v := range kvs {
				if v != nil { // Java drops null values when it next writes
					m[k] = *v
				}
			}
			t[ns] = m
		}
		s.prev = data
	}
	// A kill between a write's temporary file and its rename leaves the
	// temporary file behind; the real file is intact, so it can go.
	if err := atomicfile.RemoveStale(path); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	s.w.load(t)
	s.cur.Store(&t)
	return s, nil
}

// Path is the file the store persists to.
func (s *Store) Path() string { return s.path }

// Get returns the value of key in namespace ns.
func (s *Store) Get(ns, key string) (string, bool) {
	ns, key = validUTF8(ns), validUTF8(key)
	v, ok := (*s.cur.Load())[ns][key]
	return v, ok
}

// Namespace returns a copy of namespace ns. A namespace whose keys were all
// deleted still exists (empty), as in Java, which never removes a namespace.
func (s *Store) Namespace(ns string) (map[string]string, bool) {
	m, ok := (*s.cur.Load())[validUTF8(ns)]
	if !ok {
		return nil, false
	}
	return cloneMap(m), true
}

// Snapshot returns a copy of the whole store.
func (s *Store) Snapshot() map[string]map[string]string {
	t := *s.cur.Load()
	out := make(map[string]map[string]string, len(t))
	for ns, m := range t {
		out[ns] = cloneMap(m)
	}
	return out
}

// Len is the number of keys over all namespaces.
func (s *Store) Len() int {
	n := 0
	for _, m := range *s.cur.Load() {
		n += len(m)
	}
	return n
}

// validUTF8 replaces each invalid UTF-8 sequence with U+FFFD. Requests may
// carry any bytes (binary headers, raw JSON strings), but the file is JSON,
// which holds only Unicode: storing the bytes as they came would make the
// value read back after a restart differ from the one acknowledged. Java
// reaches the same strings by decoding the request bytes as UTF-8 with
// replacement, so its keys match ours.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// Put sets key in namespace ns (creating the namespace) and persists the
// whole store before returning. A key, namespace or value over the limits,
// or a change that makes its namespace or the store larger than theirs, is
// an *LimitError (ErrTooLarge) and changes nothing. The strings are
// retained; callers holding them in reused buffers must clone them first.
func (s *Store) Put(ns, key, value string) error {
	ns, key, value = validUTF8(ns), validUTF8(key), validUTF8(value)
	if err := s.limits.checkNames(ns, key); err != nil {
		return err
	}
	if len(value) > s.limits.MaxValueBytes {
		return &LimitError{What: "value", Size: len(value), Limit: s.limits.MaxValueBytes, Key: "kvMaxValueBytes"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.cur.Load()
	next := make(table, len(old)+1)
	for k, m := range old {
		next[k] = m
	}
	m := make(map[string]string, len(old[ns])+1)
	for k, v := range old[ns] {
		m[k] = v
	}
	m[key] = value
	next[ns] = m
	return s.commitLocked(next, &change{ns: ns, key: key, frag: s.w.entry(key, value)})
}

// Delete removes key from namespace ns and persists the store, even when
// nothing was removed, as Java does.
func (s *Store) Delete(ns, key string) error {
	ns, key = validUTF8(ns), validUTF8(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.cur.Load()
	next := old
	var ch *change
	if _, ok := old[ns][key]; ok {
		next = make(table, len(old))
		for k, m := range old {
			next[k] = m
		}
		m := cloneMap(old[ns])
		delete(m, key)
		next[ns] = m
		ch = &change{ns: ns, key: key}
	}
	return s.commitLocked(next, ch)
}

// PutNull is Java's put of a null value (PUT_KV_CONFIG without a value):
// key leaves namespace ns, which exists afterwards even if it did not, and
// the store is persisted. The key then reads as not found and the
// namespace lists without it, as Java's do.
func (s *Store) PutNull(ns, key string) error {
	ns, key = validUTF8(ns), validUTF8(key)
	if err := s.limits.checkNames(ns, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.cur.Load()
	next := old
	var ch *change
	if _, has := old[ns]; !has || hasKey(old[ns], key) {
		next = make(table, len(old)+1)
		for k, m := range old {
			next[k] = m
		}
		m := cloneMap(old[ns])
		delete(m, key)
		next[ns] = m
		ch = &change{ns: ns, key: key}
	}
	return s.commitLocked(next, ch)
}

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// Flush writes the current store to disk.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitLocked(*s.cur.Load(), nil)
}

// OverLimits describes what the store holds beyond its limits: only what a
// file loaded at Open brought (writes never go over), so it is reported
// once at start. Empty when within them.
func (s *Store) OverLimits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.overLimits(*s.cur.Load(), s.limits)
}

// commitLocked persists t, which is the current table with ch applied (nil:
// nothing changed), and only if that worked publishes it. The file is
// rendered from the kept encodings with ch substituted; they take ch only
// once the file holds it.
func (s *Store) commitLocked(t table, ch *change) error {
	if ch != nil {
		if err := s.w.check(ch, s.limits); err != nil {
			return err
		}
	}
	data := s.w.render(s.spare[:0], ch)
	prev := s.prev
	if prev != nil && linkBackup(s.path) == nil {
		prev = nil // the backup is already in place
	}
	replaced, err := atomicfile.Replace(s.path, data, prev)
	if err != nil {
		err = fmt.Errorf("kv: %w", err)
	}
	if replaced {
		// The file holds the new content even if making the rename durable
		// failed, so memory follows it; the error still reaches the caller.
		s.spare = s.prev
		if cap(s.spare) > 2*cap(data) {
			s.spare = nil // after a large shrink, let the old buffer go
		}
		s.prev = data
		s.w.apply(ch)
		s.cur.Store(&t)
	} else {
		s.spare = data
	}
	return err
}

// linkBackup makes <path>.bak the file as it is now, by a hard link: the
// rename that follows gives path a new file and leaves the old one to the
// link, so the backup costs no copy. Rewriting the backup from memory
// doubled the bytes each write put on disk. On an error (a file system
// without hard links, a file the operator removed) the caller writes the
// backup from memory as before.
func linkBackup(path string) error {
	bak := path + ".bak"
	if err := os.Remove(bak); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Link(path, bak)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
