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
	path string
	cur  atomic.Pointer[table]

	mu   sync.Mutex // serializes writers and the file they write
	prev []byte     // the file's content as last loaded or written; becomes <path>.bak
}

// fileJSON is the file layout Java's KVConfigSerializeWrapper uses. Values are
// pointers because fastjson may write null for a key Java stored as null.
type fileJSON struct {
	ConfigTable map[string]map[string]*string `json:"configTable"`
}

// Open loads the store from path. A missing or empty file is an empty store
// (Java does the same). A file that does not parse is an error, and the file
// is left untouched: starting empty would overwrite the operator's data on
// the first write.
func Open(path string) (*Store, error) {
	s := &Store{path: path}
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
// whole store before returning. The strings are retained; callers holding
// them in reused buffers must clone them first.
func (s *Store) Put(ns, key, value string) error {
	ns, key, value = validUTF8(ns), validUTF8(key), validUTF8(value)
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
	return s.commitLocked(next)
}

// Delete removes key from namespace ns and persists the store, even when
// nothing was removed, as Java does.
func (s *Store) Delete(ns, key string) error {
	ns, key = validUTF8(ns), validUTF8(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.cur.Load()
	next := old
	if _, ok := old[ns][key]; ok {
		next = make(table, len(old))
		for k, m := range old {
			next[k] = m
		}
		m := cloneMap(old[ns])
		delete(m, key)
		next[ns] = m
	}
	return s.commitLocked(next)
}

// PutNull is Java's put of a null value (PUT_KV_CONFIG without a value):
// key leaves namespace ns, which exists afterwards even if it did not, and
// the store is persisted. The key then reads as not found and the
// namespace lists without it, as Java's do.
func (s *Store) PutNull(ns, key string) error {
	ns, key = validUTF8(ns), validUTF8(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.cur.Load()
	next := old
	if _, has := old[ns]; !has || hasKey(old[ns], key) {
		next = make(table, len(old)+1)
		for k, m := range old {
			next[k] = m
		}
		m := cloneMap(old[ns])
		delete(m, key)
		next[ns] = m
	}
	return s.commitLocked(next)
}

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// Flush writes the current store to disk.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitLocked(*s.cur.Load())
}

// commitLocked persists t and, only if that worked, publishes it.
func (s *Store) commitLocked(t table) error {
	data, err := encode(t)
	if err != nil {
		return fmt.Errorf("kv: encode: %w", err)
	}
	replaced, err := atomicfile.Replace(s.path, data, s.prev)
	if err != nil {
		err = fmt.Errorf("kv: %w", err)
	}
	if replaced {
		// The file holds the new content even if making the rename durable
		// failed, so memory follows it; the error still reaches the caller.
		s.prev = data
		s.cur.Store(&t)
	}
	return err
}

// encode writes Java's layout, compact, with keys sorted so the file is
// stable. HTML characters are not escaped, matching fastjson.
func encode(t table) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		ConfigTable table `json:"configTable"`
	}{t}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
