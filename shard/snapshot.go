// snapshot.go holds snapshot: one shard's contents, a hash table with open
// addressing that is never modified once published.

package shard

// snapshot is a linear-probing hash table of the keys of one shard. A
// writer fills a private copy (clone, put, del) and publishes it; from then
// on it is only read, by any number of goroutines.
//
// Each slot keeps the key's hash with the top bit set (the tag; 0 marks an
// empty slot), so a probe compares strings only when 63 bits of hash agree.
// At most three quarters of the slots are used, so every probe run ends at
// an empty slot.
type snapshot[V any] struct {
	slots []slot[V] // a power of two long
	n     int       // used slots
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
	for size*3 < n*4+1 {
		size <<= 1
	}
	return &snapshot[V]{slots: make([]slot[V], size)}
}

// get returns key's value; h is the key's hash.
func (s *snapshot[V]) get(key string, h uint64) (V, bool) {
	mask := uint64(len(s.slots) - 1)
	tag := h | tagBit
	for i := h & mask; ; i = (i + 1) & mask {
		e := &s.slots[i]
		if e.tag == tag && e.key == key {
			return e.val, true
		}
		if e.tag == 0 {
			var zero V
			return zero, false
		}
	}
}

// clone returns a private copy of s with room for extra more keys.
func (s *snapshot[V]) clone(extra int) *snapshot[V] {
	c := newSnapshot[V](s.n + extra)
	if len(c.slots) == len(s.slots) {
		copy(c.slots, s.slots)
		c.n = s.n
		return c
	}
	for i := range s.slots {
		if e := &s.slots[i]; e.tag != 0 {
			c.insert(*e)
		}
	}
	return c
}

// insert places e, whose key s does not hold, in the first empty slot of
// its probe run.
func (s *snapshot[V]) insert(e slot[V]) {
	mask := uint64(len(s.slots) - 1)
	i := e.tag & mask
	for s.slots[i].tag != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = e
	s.n++
}

// put sets key to v in a snapshot not yet published. The caller made room
// for it (clone's extra).
func (s *snapshot[V]) put(key string, h uint64, v V) {
	mask := uint64(len(s.slots) - 1)
	tag := h | tagBit
	i := h & mask
	for ; s.slots[i].tag != 0; i = (i + 1) & mask {
		if e := &s.slots[i]; e.tag == tag && e.key == key {
			// The latest key string is kept, as a Go map keeps it.
			e.key, e.val = key, v
			return
		}
	}
	s.slots[i] = slot[V]{tag: tag, key: key, val: v}
	s.n++
}

// del removes key from a snapshot not yet published. The entries after it
// in its probe run move back into the hole when their own home slot lets
// them, so that no run is cut short and no tombstones are needed.
func (s *snapshot[V]) del(key string, h uint64) {
	mask := uint64(len(s.slots) - 1)
	tag := h | tagBit
	i := h & mask
	for {
		e := &s.slots[i]
		if e.tag == 0 {
			return
		}
		if e.tag == tag && e.key == key {
			break
		}
		i = (i + 1) & mask
	}
	hole := i
	for j := (i + 1) & mask; s.slots[j].tag != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole when its home slot is not in
		// (hole, j], counted cyclically.
		home := s.slots[j].tag & mask
		if (j-home)&mask >= (j-hole)&mask {
			s.slots[hole] = s.slots[j]
			hole = j
		}
	}
	s.slots[hole] = slot[V]{}
	s.n--
}
