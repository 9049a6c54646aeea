// shard.go holds Table: the shards, lock-free snapshot reads and batched
// copy-on-write updates.

package shard

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// DefaultShards is the shard count New uses when asked for none. 256 keeps a
// shard of a 100k-topic table near 400 entries, so the copy a writer makes
// stays small while the shard array still fits a few KiB.
const DefaultShards = 256

// Action is what an update function asks the table to do with a key.
type Action uint8

const (
	// Unchanged leaves the key as it was; a batch in which every key of a
	// shard is Unchanged neither copies nor republishes that shard.
	Unchanged Action = iota
	// Store sets the key to the returned value.
	Store
	// Delete removes the key (a no-op when it is absent).
	Delete
)

// Table maps strings to values of type V. The zero value is not usable; call
// New.
//
// Values are handed to readers as they were stored and may be read by any
// number of goroutines at once, so a V that is a pointer must point to data
// that is not modified after it was stored.
type Table[V any] struct {
	shards []tableShard[V]
	mask   uint64
}

type tableShard[V any] struct {
	mu   sync.Mutex // serialises writers of this shard; readers never take it
	snap atomic.Pointer[map[string]V]
	// Writers dirty mu and snap's line; the pad keeps a writer of one shard
	// from slowing down readers of the next.
	_ [48]byte
}

// New returns an empty table with n shards, rounded up to a power of two;
// n <= 0 means DefaultShards.
func New[V any](n int) *Table[V] {
	if n <= 0 {
		n = DefaultShards
	}
	size := 1
	for size < n {
		size <<= 1
	}
	t := &Table[V]{shards: make([]tableShard[V], size), mask: uint64(size - 1)}
	for i := range t.shards {
		m := map[string]V{}
		t.shards[i].snap.Store(&m)
	}
	return t
}

func (t *Table[V]) shardOf(key string) int {
	return int(xxhash.Sum64String(key) & t.mask)
}

// Load returns the value stored for key. It takes no lock and does not
// allocate.
func (t *Table[V]) Load(key string) (V, bool) {
	v, ok := (*t.shards[t.shardOf(key)].snap.Load())[key]
	return v, ok
}

// Update applies fn to key's current value under the shard's writer lock.
// fn must not call back into the table.
//
// The table stores key itself (Go maps keep the latest key string on every
// assignment), so a caller whose key aliases a reusable buffer must pass a
// copy whenever fn may return Store.
func (t *Table[V]) Update(key string, fn func(old V, ok bool) (nv V, act Action)) {
	s := &t.shards[t.shardOf(key)]
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.snap.Load()
	old, ok := cur[key]
	nv, act := fn(old, ok)
	switch act {
	case Store:
		next := cloneMap(cur, 1)
		next[key] = nv
		s.snap.Store(&next)
	case Delete:
		if ok {
			next := cloneMap(cur, 0)
			delete(next, key)
			s.snap.Store(&next)
		}
	}
}

// UpdateMany applies fn to every keys[i], shard by shard, copying each shard
// it changes once and publishing it when its last key is done. fn receives
// the index into keys (so callers can keep per-key data in a parallel slice)
// and the value as left by earlier keys of the same call: a key listed twice
// sees its first result on the second call. Keys of one shard are visited in
// the order they appear in keys; shards are visited in index order. fn must
// not call back into the table. Key storage is as for Update.
//
// Readers may observe the batch shard by shard: one shard's changes become
// visible before another's.
func (t *Table[V]) UpdateMany(keys []string, fn func(i int, key string, old V, ok bool) (nv V, act Action)) {
	switch len(keys) {
	case 0:
		return
	case 1:
		t.Update(keys[0], func(old V, ok bool) (V, Action) { return fn(0, keys[0], old, ok) })
		return
	}
	// Counting sort of key indexes by shard: two small allocations per call
	// instead of one lock round and map copy per key.
	n := len(t.shards)
	starts := make([]int32, n+1)
	shardIdx := make([]int32, len(keys))
	for i, k := range keys {
		si := int32(t.shardOf(k))
		shardIdx[i] = si
		starts[si+1]++
	}
	for i := 1; i <= n; i++ {
		starts[i] += starts[i-1]
	}
	order := make([]int32, len(keys))
	fill := append([]int32(nil), starts[:n]...)
	for i, si := range shardIdx {
		order[fill[si]] = int32(i)
		fill[si]++
	}
	for si := 0; si < n; si++ {
		lo, hi := starts[si], starts[si+1]
		if lo == hi {
			continue
		}
		t.applyShard(&t.shards[si], keys, order[lo:hi], fn)
	}
}

func (t *Table[V]) applyShard(s *tableShard[V], keys []string, idx []int32, fn func(int, string, V, bool) (V, Action)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.snap.Load()
	var next map[string]V // nil until the first change in this shard
	for _, i := range idx {
		key := keys[i]
		view := cur
		if next != nil {
			view = next
		}
		old, ok := view[key]
		nv, act := fn(int(i), key, old, ok)
		switch act {
		case Store:
			if next == nil {
				next = cloneMap(cur, len(idx))
			}
			next[key] = nv
		case Delete:
			if ok {
				if next == nil {
					next = cloneMap(cur, 0)
				}
				delete(next, key)
			}
		}
	}
	if next != nil {
		s.snap.Store(&next)
	}
}

func cloneMap[V any](m map[string]V, extra int) map[string]V {
	c := make(map[string]V, len(m)+extra)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Range calls fn for every key until fn returns false. It walks the current
// snapshot of each shard without locking: a concurrent writer's changes may
// be seen in some shards and not others, never half-applied within a shard.
func (t *Table[V]) Range(fn func(key string, v V) bool) {
	for i := range t.shards {
		for k, v := range *t.shards[i].snap.Load() {
			if !fn(k, v) {
				return
			}
		}
	}
}

// Len returns the number of keys, summed over the shards' current snapshots.
func (t *Table[V]) Len() int {
	n := 0
	for i := range t.shards {
		n += len(*t.shards[i].snap.Load())
	}
	return n
}
