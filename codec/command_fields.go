// Command accessors: reset for reuse, extFields lookup and update, flag tests.
package codec

// Reset clears c for the next frame. Slices keep their capacity so a
// Command reused per connection stops allocating once warm; the old ext
// strings are cleared so they do not pin a released frame buffer.
func (c *Command) Reset() {
	clear(c.Ext)
	*c = Command{Ext: c.Ext[:0], scratch: c.scratch[:0]}
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

// deleteExt drops key, keeping the order of the rest; a JSON null or a
// binary zero-length value means Java's map holds null there, which every
// header class reads as absent.
func (c *Command) deleteExt(key string) {
	for i := range c.Ext {
		if c.Ext[i].Key == key {
			copy(c.Ext[i:], c.Ext[i+1:])
			c.Ext[len(c.Ext)-1] = Field{}
			c.Ext = c.Ext[:len(c.Ext)-1]
			return
		}
	}
}

// IsResponse reports flag bit 0: the frame answers an earlier request.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports flag bit 1: the sender expects no answer, not even an
// error.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }
