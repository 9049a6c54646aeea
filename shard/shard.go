// shard.go holds Table: the shards, lock-free snapshot reads and batched
// copy-on-write updates.

package shard

import (
	"math/bits"
	"math/rand/v2"
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
//
// A key is hashed once per Load: the same hash picks the shard (bits 32 and
// up) and the slot in the shard's snapshot (the low bits), where a Go map per
// shard would hash the key a second time. The hash is the key's xxhash mixed
// with a seed random per table (hash), so which keys share a shard or a
// probe run cannot be chosen from outside (by the topic names a broker
// registers, say) short of full 64-bit xxhash collisions.
type Table[V any] struct {
	shards []tableShard[V]
	mask   uint64
	// seed and mul key the mix in hash; random per table.
	seed, mul uint64
}

type tableShard[V any] struct {
	mu   sync.Mutex // serialises writers of this shard; readers never take it
	snap atomic.Pointer[snapshot[V]]
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
	t := &Table[V]{shards: make([]tableShard[V], size), mask: uint64(size - 1),
		seed: rand.Uint64(), mul: rand.Uint64() | 1}
	empty := newSnapshot[V](0)
	for i := range t.shards {
		t.shards[i].snap.Store(empty)
	}
	return t
}

// hash is the xxhash of key folded through a keyed multiply (wyhash's
// mum: the two halves of the 128-bit product of the xxhash xored with
// seed by the odd mul, xored together): keys whose xxhashes differ get
// hashes whose low bits (the probe run) and high bits (the shard) cannot
// be predicted without the table's keys.
func (t *Table[V]) hash(key string) uint64 {
	hi, lo := bits.Mul64(xxhash.Sum64String(key)^t.seed, t.mul)
	return hi ^ lo
}

func (t *Table[V]) shardOf(key string) int { return t.shardOfHash(t.hash(key)) }

// shardOfHash takes the shard from the bits above those the snapshots'
// slots use, so the keys of one shard still spread over its slots.
func (t *Table[V]) shardOfHash(h uint64) int { return int(h >> 32 & t.mask) }

// Load returns the value stored for key. It takes no lock and does not
// allocate.
func (t *Table[V]) Load(key string) (V, bool) {
	h := t.hash(key)
	return t.shards[t.shardOfHash(h)].snap.Load().get(key, h)
}

// Update applies fn to key's current value under the shard's writer lock.
// fn must not call back into the table.
//
// The table stores key itself (the latest key string on every Store), so a
// caller whose key aliases a reusable buffer must pass a copy whenever fn
// may return Store.
func (t *Table[V]) Update(key string, fn func(old V, ok bool) (nv V, act Action)) {
	h := t.hash(key)
	s := &t.shards[t.shardOfHash(h)]
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.snap.Load()
	old, ok := cur.get(key, h)
	nv, act := fn(old, ok)
	switch act {
	case Store:
		next := cur.clone(1)
		next.put(key, h, nv)
		s.snap.Store(next)
	case Delete:
		if ok {
			next := cur.clone(0)
			next.del(key, h)
			s.snap.Store(next)
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
	// Counting sort of key indexes by shard: a few small allocations per
	// call instead of one lock round and snapshot copy per key. The hashes
	// are kept for the shards' own lookups.
	n := len(t.shards)
	starts := make([]int32, n+1)
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		h := t.hash(k)
		hashes[i] = h
		starts[t.shardOfHash(h)+1]++
	}
	for i := 1; i <= n; i++ {
		starts[i] += starts[i-1]
	}
	order := make([]int32, len(keys))
	fill := append([]int32(nil), starts[:n]...)
	for i, h := range hashes {
		si := t.shardOfHash(h)
		order[fill[si]] = int32(i)
		fill[si]++
	}
	for si := 0; si < n; si++ {
		lo, hi := starts[si], starts[si+1]
		if lo == hi {
			continue
		}
		t.applyShard(&t.shards[si], keys, hashes, order[lo:hi], fn)
	}
}

func (t *Table[V]) applyShard(s *tableShard[V], keys []string, hashes []uint64, idx []int32, fn func(int, string, V, bool) (V, Action)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.snap.Load()
	var next *snapshot[V] // nil until the first change in this shard
	for _, i := range idx {
		key, h := keys[i], hashes[i]
		view := cur
		if next != nil {
			view = next
		}
		old, ok := view.get(key, h)
		nv, act := fn(int(i), key, old, ok)
		switch act {
		case Store:
			if next == nil {
				next = cur.clone(len(idx))
			}
			next.put(key, h, nv)
		case Delete:
			if ok {
				if next == nil {
					// Room for every key of the batch, as above: a
					// later key of it may be a Store, and no put grows
					// the copy.
					next = cur.clone(len(idx))
				}
				next.del(key, h)
			}
		}
	}
	if next != nil {
		s.snap.Store(next)
	}
}

// Range calls fn for every key until fn returns false. It walks the current
// snapshot of each shard without locking: a concurrent writer's changes may
// be seen in some shards and not others, never half-applied within a shard.
func (t *Table[V]) Range(fn func(key string, v V) bool) {
	for i := range t.shards {
		for _, e := range t.shards[i].snap.Load().entries {
			if !fn(e.key, e.val) {
				return
			}
		}
	}
}

// Len returns the number of keys, summed over the shards' current snapshots.
func (t *Table[V]) Len() int {
	n := 0
	for i := range t.shards {
		n += len(t.shards[i].snap.Load().entries)
	}
	return n
}
