// template.go holds the reply header template: the JSON header of the
// replies a connection sends one after the other differ, as a rule, only
// in their opaque (route answers: the same code, flag, language and
// version, no remark, no extFields), so the text around the opaque is
// encoded once and copied.

package codec

import (
	"bytes"
	"encoding/binary"
)

// HeaderTemplate is the JSON header of one (code, flag, language,
// version) without remark or extFields, split around the opaque's digits.
// The zero value is empty; PrefixLen fills it. It is not safe for
// concurrent use: a connection keeps its own.
type HeaderTemplate struct {
	valid               bool
	code, flag, version int32
	lang                byte
	text                []byte // the header with opaque 0
	opaqueAt            int    // where the 0 stands in text
}

// PrefixLen reports whether c's frame prefix can come from the template
// (a JSON header without remark and extFields; the template is rebuilt
// when c's other fields differ from the last command's) and its exact
// length: what PutPrefix writes and AppendFramePrefix would append.
func (t *HeaderTemplate) PrefixLen(c *Command) (int, bool) {
	if c.SerializeType == SerializeRocketMQ || c.HasExt || c.Remark != "" {
		return 0, false
	}
	if !t.valid || c.Code != t.code || c.Flag != t.flag || c.Version != t.version || c.Language != t.lang {
		t.build(c)
	}
	return 8 + len(t.text) - 1 + intLen(c.Opaque), true
}

func (t *HeaderTemplate) build(c *Command) {
	probe := Command{Code: c.Code, Flag: c.Flag, Version: c.Version, Language: c.Language}
	t.text = appendJSONHeader(t.text[:0], &probe)
	// No remark and no extFields: the key is there once.
	t.opaqueAt = bytes.Index(t.text, []byte(`,"opaque":0`)) + len(`,"opaque":`)
	t.code, t.flag, t.version, t.lang = c.Code, c.Flag, c.Version, c.Language
	t.valid = true
}

// PutPrefix writes c's frame prefix for a body of bodyLen bytes into dst,
// which is exactly as long as the PrefixLen that accepted c. The bytes
// are those AppendFramePrefix appends.
func (t *HeaderTemplate) PutPrefix(dst []byte, c *Command, bodyLen int) {
	h := len(dst) - 8
	binary.BigEndian.PutUint32(dst, uint32(4+h+bodyLen))
	binary.BigEndian.PutUint32(dst[4:], uint32(SerializeJSON)<<24|uint32(h)&maxHeaderLen)
	hdr := dst[8:]
	n := copy(hdr, t.text[:t.opaqueAt])
	u := uint32(c.Opaque)
	if c.Opaque < 0 {
		hdr[n] = '-'
		n++
		u = uint32(-int64(c.Opaque))
	}
	k := uintLen(u)
	putUint(hdr[n:n+k], u)
	copy(hdr[n+k:], t.text[t.opaqueAt+1:])
}
