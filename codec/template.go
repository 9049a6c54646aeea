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
	head, tail          []byte // text before and after the 0
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
	t.head, t.tail = t.text[:t.opaqueAt], t.text[t.opaqueAt+1:]
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
	n := copy(hdr, t.head)
	u := uint32(c.Opaque)
	if c.Opaque < 0 {
		hdr[n] = '-'
		n++
		u = uint32(-int64(c.Opaque))
	}
	// The digits' count is what PrefixLen gave the header beyond the
	// template's text. They are stored a word at a time (eightDigits,
	// shifted past the leading zeros): the tail, which follows and is
	// longer than eight bytes, is copied over whatever a word wrote beyond
	// them.
	k := len(hdr) - n - len(t.tail)
	if k == 1 {
		hdr[n] = byte('0' + u)
		copy(hdr[n+1:], t.tail)
		return
	}
	if k > 8 {
		hi := u / 1e8 // 1 to 42
		u -= hi * 1e8
		if k == 10 {
			hdr[n] = byte('0' + hi/10)
			hi %= 10
			n++
		}
		hdr[n] = byte('0' + hi)
		n++
		k = 8
	}
	binary.LittleEndian.PutUint64(hdr[n:], eightDigits(u)>>(8*(8-k)&63))
	copy(hdr[n+k:], t.tail)
}
