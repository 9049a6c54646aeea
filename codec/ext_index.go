// Repeated extFields keys while a header is decoded: last wins, as Java's
// HashMap.put and fastjson do, without comparing every key to every other.

package codec

import "hash/maphash"

// Below these bounds a header's keys are matched by a plain scan: comparing
// a few short keys costs less than hashing them, and every header Java
// sends (the largest class has fewer than 40 fields, named in a few words)
// stays on this path. A longer key or a longer header switches to the index.
const (
	plainExtEntries = 16
	plainExtKeyLen  = 64
)

// extSeed is random per process, so a peer cannot choose keys that land in
// one probe chain or share a hash.
var extSeed = maphash.MakeSeed()

// extIndex finds a decoded key among the earlier ones in expected O(1) once
// a header leaves the plain path: keys are compared in full only when their
// hashes are equal, so the cost is one hash per key plus one comparison per
// real repeat, O(total key bytes) in all. A Command allocates one the first
// time a header needs it and reuses it for later frames.
type extIndex struct {
	// meta is parallel to Command.Ext while the Command is indexed.
	meta []extMeta
	// slots is an open-addressing table, a power of two at most half full:
	// 0 is empty, i+1 names Ext[i], the newest entry for its key (it may be
	// dead: a put then appends, as after a plain delete).
	slots []int32
	// dead counts the entries a null removed; they are dropped in one pass
	// when the header is done, since shifting Ext on every delete would be
	// quadratic again.
	dead int
}

type extMeta struct {
	hash uint64
	dead bool
}

// extPlain reports whether key is matched by the plain scan. Decoders then
// call extPutPlain, else extPutIndexed: both together are SetExt without
// touching HasExt. The test and the plain put are small enough to be
// inlined into the header loops, which is most of what the plain path saves.
func (c *Command) extPlain(key string) bool {
	return !c.indexed && len(key) <= plainExtKeyLen && len(c.Ext) < plainExtEntries
}

func (c *Command) extPutPlain(key, value string) {
	c.compared += len(c.Ext) * len(key) // at most
	for i := range c.Ext {
		if c.Ext[i].Key == key {
			c.Ext[i].Value = value
			return
		}
	}
	c.Ext = append(c.Ext, Field{Key: key, Value: value})
}

func (c *Command) extPutIndexed(key, value string) {
	if !c.indexed {
		c.indexExt()
	}
	x := c.idx
	h := maphash.String(extSeed, key)
	at := c.findExt(key, h)
	if e := x.slots[at]; e != 0 && !x.meta[e-1].dead {
		c.Ext[e-1].Value = value
		return
	}
	c.Ext = append(c.Ext, Field{Key: key, Value: value})
	x.meta = append(x.meta, extMeta{hash: h})
	x.slots[at] = int32(len(c.Ext))
	if 2*len(c.Ext) > len(x.slots) {
		x.rehash(2 * len(x.slots))
	}
}

// extDelete drops key, keeping the order of the rest: a JSON null or a
// binary zero-length value means Java's map holds null there, which every
// header class reads as absent.
func (c *Command) extDelete(key string) {
	if !c.indexed {
		// Every key here is short, so a long one fails on its length.
		for i := range c.Ext {
			if c.Ext[i].Key == key {
				copy(c.Ext[i:], c.Ext[i+1:])
				c.Ext[len(c.Ext)-1] = Field{}
				c.Ext = c.Ext[:len(c.Ext)-1]
				return
			}
		}
		return
	}
	x := c.idx
	at := c.findExt(key, maphash.String(extSeed, key))
	if e := x.slots[at]; e != 0 && !x.meta[e-1].dead {
		x.meta[e-1].dead = true
		x.dead++
	}
}

// extClear empties extFields, for a JSON header that sets them again.
func (c *Command) extClear() {
	clearFields(c.Ext)
	c.Ext = c.Ext[:0]
	c.indexed = false
}

// extDone drops the entries deleted while the Command was indexed. The
// index is not needed after the header; a later put would rebuild it.
func (c *Command) extDone() {
	if !c.indexed || c.idx.dead == 0 {
		return
	}
	x := c.idx
	n := 0
	for i := range c.Ext {
		if !x.meta[i].dead {
			c.Ext[n] = c.Ext[i]
			n++
		}
	}
	clear(c.Ext[n:])
	c.Ext = c.Ext[:n]
	c.indexed = false
}

// indexExt leaves the plain path: the entries so far have distinct keys.
func (c *Command) indexExt() {
	if c.idx == nil {
		c.idx = new(extIndex)
	}
	x := c.idx
	c.indexed = true
	x.dead = 0
	x.meta = x.meta[:0]
	for i := range c.Ext {
		x.meta = append(x.meta, extMeta{hash: maphash.String(extSeed, c.Ext[i].Key)})
	}
	n := 64
	for n < 2*(len(c.Ext)+1) {
		n *= 2
	}
	x.rehash(n)
}

// rehash rebuilds slots with n entries from the live keys, which are
// distinct, so no key is compared.
func (x *extIndex) rehash(n int) {
	if cap(x.slots) >= n {
		x.slots = x.slots[:n]
		clear(x.slots)
	} else {
		x.slots = make([]int32, n)
	}
	mask := uint64(n - 1)
	for i := range x.meta {
		if x.meta[i].dead {
			continue
		}
		at := x.meta[i].hash & mask
		for x.slots[at] != 0 {
			at = (at + 1) & mask
		}
		x.slots[at] = int32(i + 1)
	}
}

// findExt returns the slot holding key, or the empty slot where it would go.
func (c *Command) findExt(key string, h uint64) int {
	x := c.idx
	mask := uint64(len(x.slots) - 1)
	at := h & mask
	for {
		e := x.slots[at]
		if e == 0 {
			return int(at)
		}
		if x.meta[e-1].hash == h {
			c.compared += len(key)
			if c.Ext[e-1].Key == key {
				return int(at)
			}
		}
		at = (at + 1) & mask
	}
}
