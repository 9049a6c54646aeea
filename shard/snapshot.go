// snapshot.go holds snapshot: one shard's contents, a hash table with open
// addressing that is never modified once published.

package shard

// snapshot is one shard's keys: their entries side by side, and an index
// of slots probed linearly from the key's hash, each naming an entry. A
// writer fills a private copy (clone, put, del) and publishes it; from then
// on it is only read, by any number of goroutines.
//
// The entries are as many as the keys (a slot of the index is 4 bytes, an
// entry 32), so the index can be kept at most half full, which keeps probe
// runs short for keys that are absent too, for about the memory of a Go
// map. Each entry keeps its key's hash with the top bit set (the tag), so
// a probe compares strings only when 63 bits of hash agree.
type snapshot[V any] struct {
	entries []slot[V]
	index   []uint32 // a power of two long; entry number + 1, 0 when free
}

type slot[V any] struct {
	tag uint64
	key string
	val V
}

const tagBit = 1 << 63

// newSnapshot returns an empty snapshot with room for n keys.
func newSnapshot[V any](n int) *snapshot[V] {
	size := 1
	for size < 2*n+1 {
		size <<= 1
	}
	return &snapshot[V]{entries: make([]slot[V], 0, n), index: make([]uint32, size)}
}

// find returns the index slot of key (h its hash) and whether it is there;
// when it is not, the free slot that ends its probe run.
func (s *snapshot[V]) find(key string, h uint64) (uint64, bool) {
	mask := uint64(len(s.index) - 1)
	tag := h | tagBit
	for i := h & mask; ; i = (i + 1) & mask {
		j := s.index[i]
		if j == 0 {
			return i, false
		}
		if e := &s.entries[j-1]; e.tag == tag && e.key == key {
			return i, true
		}
	}
}

// get returns key's value; h is the key's hash. It is find without the
// slot, small enough for the compiler to inline into Table.Load.
func (s *snapshot[V]) get(key string, h uint64) (V, bool) {
	mask := uint64(len(s.index) - 1)
	tag := h | tagBit
	for i := h & mask; ; i = (i + 1) & mask {
		j := s.index[i]
		if j == 0 {
			var zero V
			return zero, false
		}
		if e := &s.entries[j-1]; e.tag == tag && e.key == key {
			return e.val, true
		}
	}
}

// clone returns a private copy of s with room for extra more keys.
func (s *snapshot[V]) clone(extra int) *snapshot[V] {
	c := newSnapshot[V](len(s.entries) + extra)
	c.entries = append(c.entries, s.entries...)
	if len(c.index) == len(s.index) {
		copy(c.index, s.index)
		return c
	}
	mask := uint64(len(c.index) - 1)
	for j := range c.entries {
		i := c.entries[j].tag & mask
		for c.index[i] != 0 {
			i = (i + 1) & mask
		}
		c.index[i] = uint32(j + 1)
	}
	return c
}

// put sets key to v in a snapshot not yet published. The caller made room
// for it (clone's extra).
func (s *snapshot[V]) put(key string, h uint64, v V) {
	i, ok := s.find(key, h)
	if ok {
		// The latest key string is kept, as a Go map keeps it.
		e := &s.entries[s.index[i]-1]
		e.key, e.val = key, v
		return
	}
	s.entries = append(s.entries, slot[V]{tag: h | tagBit, key: key, val: v})
	s.index[i] = uint32(len(s.entries))
}

// del removes key from a snapshot not yet published. The last entry moves
// into the freed one; in the index, the slots after the freed one in its
// probe run move back into the hole when their own home slot lets them, so
// that no run is cut short and no tombstones are needed.
func (s *snapshot[V]) del(key string, h uint64) {
	hole, ok := s.find(key, h)
	if !ok {
		return
	}
	mask := uint64(len(s.index) - 1)
	j, last := s.index[hole]-1, uint32(len(s.entries)-1)
	if j != last {
		moved := s.entries[last]
		s.entries[j] = moved
		i := moved.tag & mask
		for s.index[i] != last+1 {
			i = (i + 1) & mask
		}
		s.index[i] = j + 1
	}
	s.entries[last] = slot[V]{}
	s.entries = s.entries[:last]
	for k := (hole + 1) & mask; s.index[k] != 0; k = (k + 1) & mask {
		// The slot at k may fill the hole when its home slot is not in
		// (hole, k], counted cyclically.
		home := s.entries[s.index[k]-1].tag & mask
		if (k-home)&mask >= (k-hole)&mask {
			s.index[hole] = s.index[k]
			hole = k
		}
	}
	s.index[hole] = 0
}
