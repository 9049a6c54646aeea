// encode.go holds the store's limits and the file's encoding, kept per
// entry between writes so that a write re-encodes only the entry it changes.

package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Limits bound what the store holds. Sizes of a namespace and of the store
// are counted as kvConfig.json writes them (compact JSON, escapes
// included), so they also bound the ORDER_TOPIC_CONFIG table a
// registration reply carries and the file every write rewrites.
type Limits struct {
	MaxKeyBytes       int // a key, and a namespace's name
	MaxValueBytes     int // a value
	MaxNamespaceBytes int // a namespace: "name":{...}
	MaxTotalBytes     int // the whole file
}

// DefaultLimits are config's defaults (kvMaxKeyBytes and the others).
func DefaultLimits() Limits {
	return Limits{MaxKeyBytes: 1024, MaxValueBytes: 64 << 10, MaxNamespaceBytes: 2 << 20, MaxTotalBytes: 8 << 20}
}

// Option changes how Open builds a store.
type Option func(*Store)

// WithLimits sets the store's limits; a field of 0 or less keeps its
// default.
func WithLimits(l Limits) Option {
	return func(s *Store) {
		d := DefaultLimits()
		pick := func(v, def int) int {
			if v > 0 {
				return v
			}
			return def
		}
		s.limits = Limits{
			MaxKeyBytes:       pick(l.MaxKeyBytes, d.MaxKeyBytes),
			MaxValueBytes:     pick(l.MaxValueBytes, d.MaxValueBytes),
			MaxNamespaceBytes: pick(l.MaxNamespaceBytes, d.MaxNamespaceBytes),
			MaxTotalBytes:     pick(l.MaxTotalBytes, d.MaxTotalBytes),
		}
	}
}

// ErrTooLarge is what a LimitError is.
var ErrTooLarge = errors.New("kv: over the size limits")

// LimitError is a write refused by the limits. It names no file: it is
// meant to be answered to the peer as it is.
type LimitError struct {
	What  string // "key", "namespace name", "value", "namespace", "the store"
	Name  string // the namespace, for a namespace that would grow too large
	Size  int    // bytes it has, or would have after the write
	Limit int
	Key   string // the configuration key of the limit
	Would bool   // Size is what the write would make it
}

func (e *LimitError) Error() string {
	what := e.What
	if e.Name != "" {
		what += " " + e.Name
	}
	if e.Would {
		return fmt.Sprintf("kv: %s would be %d bytes, over %s (%d)", what, e.Size, e.Key, e.Limit)
	}
	return fmt.Sprintf("kv: %s of %d bytes exceeds %s (%d)", what, e.Size, e.Key, e.Limit)
}

func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// checkNames checks the lengths of a namespace's name and a key.
func (l Limits) checkNames(ns, key string) error {
	if len(key) > l.MaxKeyBytes {
		return &LimitError{What: "key", Size: len(key), Limit: l.MaxKeyBytes, Key: "kvMaxKeyBytes"}
	}
	if len(ns) > l.MaxKeyBytes {
		return &LimitError{What: "namespace name", Size: len(ns), Limit: l.MaxKeyBytes, Key: "kvMaxKeyBytes"}
	}
	return nil
}

// File layout: {"configTable":{"ns":{"k":"v",...},...}}.
const (
	fileHead = `{"configTable":{`
	fileTail = `}}`
)

// writer is the file as encoded pieces: per namespace its encoded name and
// per entry its encoded "key":"value", with the names and keys in the
// order the file lists them (byte order, as encoding/json sorts map keys),
// and the sizes they add up to. It is only used under Store.mu.
//
// Encoding the whole table on every write cost a small PUT beside three
// 6 MiB values 76 ms, 60% of it in encoding/json; now a write encodes one
// entry and copies the rest.
type writer struct {
	names []string
	ns    map[string]*nsEnc
	sumNS int // sum of ns[*].size
	total int // bytes of the file

	buf bytes.Buffer
	enc *json.Encoder
}

type nsEnc struct {
	name     []byte // "ns":
	keys     []string
	frags    map[string][]byte // key -> "key":"value"
	sumFrags int
	size     int // "ns":{...}
}

// change is one write: key of namespace ns set to frag's entry, or removed
// when frag is nil (the namespace exists afterwards either way). check
// fills the sizes it leads to.
type change struct {
	ns, key string
	frag    []byte

	nsSize, total int
}

func nsSize(nameLen, sumFrags, keys int) int {
	return nameLen + 2 + sumFrags + max(0, keys-1)
}

func fileSize(sumNS, names int) int {
	return len(fileHead) + sumNS + max(0, names-1) + len(fileTail)
}

// str is s as encoding/json writes it without HTML escaping.
func (w *writer) str(dst []byte, s string) []byte {
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	w.buf.Reset()
	_ = w.enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))...)
}

// entry is "key":"value", encoded.
func (w *writer) entry(key, value string) []byte {
	b := w.str(nil, key)
	b = append(b, ':')
	return w.str(b, value)
}

func (w *writer) nameOf(ns string) []byte { return append(w.str(nil, ns), ':') }

// load builds the encoding of t.
func (w *writer) load(t table) {
	w.names = w.names[:0]
	w.ns = make(map[string]*nsEnc, len(t))
	w.sumNS = 0
	for ns, m := range t {
		e := &nsEnc{name: w.nameOf(ns), frags: make(map[string][]byte, len(m)), keys: make([]string, 0, len(m))}
		for k, v := range m {
			f := w.entry(k, v)
			e.frags[k] = f
			e.keys = append(e.keys, k)
			e.sumFrags += len(f)
		}
		sort.Strings(e.keys)
		e.size = nsSize(len(e.name), e.sumFrags, len(e.keys))
		w.ns[ns] = e
		w.names = append(w.names, ns)
		w.sumNS += e.size
	}
	sort.Strings(w.names)
	w.total = fileSize(w.sumNS, len(w.names))
}

// check computes the sizes ch leads to and refuses a change that makes a
// namespace or the store larger than its limit. A change that does not
// make them larger passes even over the limit: a file loaded over the
// limits can still be cleaned up.
func (w *writer) check(ch *change, l Limits) error {
	e := w.ns[ch.ns]
	var nameLen, sumFrags, keys, oldSize, names int
	names = len(w.names)
	if e != nil {
		nameLen, sumFrags, keys, oldSize = len(e.name), e.sumFrags, len(e.keys), e.size
		if f, ok := e.frags[ch.key]; ok {
			sumFrags -= len(f)
			keys--
		}
	} else {
		nameLen = len(w.nameOf(ch.ns))
		names++
	}
	if ch.frag != nil {
		sumFrags += len(ch.frag)
		keys++
	}
	ch.nsSize = nsSize(nameLen, sumFrags, keys)
	ch.total = fileSize(w.sumNS-oldSize+ch.nsSize, names)
	if ch.nsSize > l.MaxNamespaceBytes && ch.nsSize > oldSize {
		return &LimitError{What: "namespace", Name: ch.ns, Size: ch.nsSize, Limit: l.MaxNamespaceBytes,
			Key: "kvMaxNamespaceBytes", Would: true}
	}
	if ch.total > l.MaxTotalBytes && ch.total > w.total {
		return &LimitError{What: "the store", Size: ch.total, Limit: l.MaxTotalBytes, Key: "kvMaxTotalBytes", Would: true}
	}
	return nil
}

// render appends the file with ch (checked; nil for none) applied to dst.
func (w *writer) render(dst []byte, ch *change) []byte {
	size := w.total
	if ch != nil {
		size = ch.total
	}
	dst = slices.Grow(dst[:0], size)
	dst = append(dst, fileHead...)
	first := true
	writeNS := func(name string, e *nsEnc) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if e != nil {
			dst = append(dst, e.name...)
		} else {
			dst = append(dst, w.nameOf(name)...)
		}
		dst = append(dst, '{')
		var keys []string
		if e != nil {
			keys = e.keys
		}
		if ch == nil || ch.ns != name {
			for i, k := range keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, e.frags[k]...)
			}
		} else {
			n := 0
			put := func(f []byte) {
				if n > 0 {
					dst = append(dst, ',')
				}
				n++
				dst = append(dst, f...)
			}
			done := ch.frag == nil
			for _, k := range keys {
				if !done && ch.key <= k {
					put(ch.frag)
					done = true
					if ch.key == k {
						continue
					}
				}
				if k == ch.key {
					continue // removed
				}
				put(e.frags[k])
			}
			if !done {
				put(ch.frag)
			}
		}
		dst = append(dst, '}')
	}
	inserted := ch == nil || w.ns[ch.ns] != nil
	for _, name := range w.names {
		if !inserted && ch.ns < name {
			writeNS(ch.ns, nil)
			inserted = true
		}
		writeNS(name, w.ns[name])
	}
	if !inserted {
		writeNS(ch.ns, nil)
	}
	return append(dst, fileTail...)
}

// apply records ch, which the file now holds.
func (w *writer) apply(ch *change) {
	if ch == nil {
		return
	}
	e := w.ns[ch.ns]
	if e == nil {
		e = &nsEnc{name: w.nameOf(ch.ns), frags: make(map[string][]byte)}
		w.ns[ch.ns] = e
		i, _ := slices.BinarySearch(w.names, ch.ns)
		w.names = slices.Insert(w.names, i, ch.ns)
	}
	i, found := slices.BinarySearch(e.keys, ch.key)
	if old, ok := e.frags[ch.key]; ok {
		e.sumFrags -= len(old)
	}
	switch {
	case ch.frag != nil:
		if !found {
			e.keys = slices.Insert(e.keys, i, ch.key)
		}
		e.frags[ch.key] = ch.frag
		e.sumFrags += len(ch.frag)
	case found:
		e.keys = slices.Delete(e.keys, i, i+1)
		delete(e.frags, ch.key)
	}
	w.sumNS -= e.size
	e.size = nsSize(len(e.name), e.sumFrags, len(e.keys))
	w.sumNS += e.size
	w.total = fileSize(w.sumNS, len(w.names))
}

// overLimits describes what is beyond l, for OverLimits.
func (w *writer) overLimits(t table, l Limits) []string {
	var out []string
	if w.total > l.MaxTotalBytes {
		out = append(out, fmt.Sprintf("the store is %d bytes, over kvMaxTotalBytes (%d)", w.total, l.MaxTotalBytes))
	}
	for _, ns := range w.names {
		e := w.ns[ns]
		if e.size > l.MaxNamespaceBytes {
			out = append(out, fmt.Sprintf("namespace %s is %d bytes, over kvMaxNamespaceBytes (%d)", ns, e.size, l.MaxNamespaceBytes))
		}
		if len(ns) > l.MaxKeyBytes {
			out = append(out, fmt.Sprintf("namespace %.64q... has a name of %d bytes, over kvMaxKeyBytes (%d)", ns, len(ns), l.MaxKeyBytes))
		}
		keys, values := 0, 0
		for k, v := range t[ns] {
			if len(k) > l.MaxKeyBytes {
				keys++
			}
			if len(v) > l.MaxValueBytes {
				values++
			}
		}
		if keys > 0 {
			out = append(out, fmt.Sprintf("namespace %s has %d keys over kvMaxKeyBytes (%d)", ns, keys, l.MaxKeyBytes))
		}
		if values > 0 {
			out = append(out, fmt.Sprintf("namespace %s has %d values over kvMaxValueBytes (%d)", ns, values, l.MaxValueBytes))
		}
	}
	return out
}
