// Command accessors: reset for reuse, extFields lookup and update, flag tests.

package codec

// Buffers a Command keeps across Reset, at most: far more than any header
// Java sends needs, so normal traffic reuses them and never allocates, while
// one unusually large header does not leave a connection holding megabytes
// for as long as it stays open.
const (
	keptScratch    = 64 << 10
	keptExtEntries = 128
)

// Reset clears c for the next frame. Slices keep their capacity, up to the
// bounds above, so a Command reused per connection stops allocating once
// warm; the old ext strings are cleared so they do not pin a released frame
// buffer.
func (c *Command) Reset() {
	clearFields(c.Ext)
	ext, scratch, idx := c.Ext[:0], c.scratch[:0], c.idx
	if cap(ext) > keptExtEntries {
		ext = nil
	}
	if cap(scratch) > keptScratch {
		scratch = nil
	}
	if idx != nil && cap(idx.meta) > keptExtEntries {
		idx = nil // its slots grow with meta
	}
	// Zeroed in place, then the kept fields put back: assigning a literal
	// with them builds the whole struct apart and copies it with write
	// barriers, several times the cost on every request.
	*c = Command{}
	c.Ext, c.scratch, c.idx = ext, scratch, idx
}

// clearFields empties the strings of f, so that they do not pin the frame
// they point into. Field by field: clear(f) goes through memclrHasPointers
// and its bulk write barrier, several times the cost for the one or two
// entries of a usual request.
func clearFields(f []Field) {
	for i := range f {
		f[i].Key, f[i].Value = "", ""
	}
}

// ExtValue returns the extFields value stored under key. A linear scan beats
// a map for the handful of fields a header carries, and allocates nothing.
func (c *Command) ExtValue(key string) (string, bool) {
	for i := range c.Ext {
		if c.Ext[i].Key == key {
			return c.Ext[i].Value, true
		}
	}
	return "", false
}

// SetExt replaces the value of key or appends it, keeping wire order for the
// others, and marks the command as having extFields (so an encoded JSON
// header carries the object).
func (c *Command) SetExt(key, value string) {
	c.HasExt = true
	for i := range c.Ext {
		if c.Ext[i].Key == key {
			c.Ext[i].Value = value
			return
		}
	}
	c.Ext = append(c.Ext, Field{Key: key, Value: value})
}

// IsResponse reports flag bit 0: the frame answers an earlier request.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports flag bit 1: the sender expects no answer, not even an
// error.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }
