// format.go holds the file's header and the payload's encoding and
// decoding.

package routesnap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

// Version is the format this package writes and reads. A change to the
// payload's layout takes a new number: a server never guesses at a file
// of another version, it starts cold.
const Version uint32 = 1

// magic opens every snapshot file.
const magic = "RNSROUTE"

// headerSize is magic, version (4), taken-at (8), payload length (8) and
// the payload's CRC-32C (4).
const headerSize = len(magic) + 4 + 8 + 8 + 4

// Errors Decode and Load wrap; the caller tells them apart with errors.Is.
var (
	// ErrCorrupt: not a snapshot file, a checksum mismatch, a payload
	// that does not decode.
	ErrCorrupt = errors.New("corrupt route snapshot")
	// ErrTruncated: shorter than its header says.
	ErrTruncated = errors.New("truncated route snapshot")
	// ErrVersion: written in another format version.
	ErrVersion = errors.New("route snapshot of another format version")
	// ErrStale: taken longer ago than the caller accepts (or that far in
	// the future: the clock moved back).
	ErrStale = errors.New("stale route snapshot")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the file's bytes for s.
func Encode(s *route.Snapshot) []byte {
	// A first guess at the size: topic names and queue data dominate.
	n := headerSize + 64*len(s.Groups) + 96*len(s.Brokers) + 24*len(s.Topics) + 6*s.Entries()
	b := make([]byte, headerSize, n)
	e := encoder{b: b}
	e.payload(s)
	b = e.b
	copy(b, magic)
	o := len(magic)
	binary.BigEndian.PutUint32(b[o:], Version)
	binary.BigEndian.PutUint64(b[o+4:], uint64(s.TakenAt))
	binary.BigEndian.PutUint64(b[o+12:], uint64(len(b)-headerSize))
	binary.BigEndian.PutUint32(b[o+20:], crc32c(b[headerSize:]))
	return b
}

// Header is what a file's header says.
type Header struct {
	Version uint32
	TakenAt int64 // unix ms
	Length  uint64
}

// ReadHeader checks b's header: the magic, the version, the length. It
// does not check the payload.
func ReadHeader(b []byte) (Header, error) {
	if len(b) < headerSize {
		if len(b) >= len(magic) && string(b[:len(magic)]) == magic {
			return Header{}, fmt.Errorf("%w: %d bytes, the header alone is %d", ErrTruncated, len(b), headerSize)
		}
		return Header{}, fmt.Errorf("%w: %d bytes, too short for a header", ErrCorrupt, len(b))
	}
	if string(b[:len(magic)]) != magic {
		return Header{}, fmt.Errorf("%w: not a route snapshot (no %q at its start)", ErrCorrupt, magic)
	}
	o := len(magic)
	h := Header{
		Version: binary.BigEndian.Uint32(b[o:]),
		TakenAt: int64(binary.BigEndian.Uint64(b[o+4:])),
		Length:  binary.BigEndian.Uint64(b[o+12:]),
	}
	if h.Version != Version {
		return h, fmt.Errorf("%w: version %d, this server reads %d", ErrVersion, h.Version, Version)
	}
	switch have := uint64(len(b) - headerSize); {
	case have < h.Length:
		return h, fmt.Errorf("%w: %d payload bytes of %d", ErrTruncated, have, h.Length)
	case have > h.Length:
		return h, fmt.Errorf("%w: %d bytes after the payload", ErrCorrupt, have-h.Length)
	}
	return h, nil
}

// Decode checks b whole (header, checksum, payload) and returns its
// snapshot. The snapshot's strings and byte slices are its own, not b's.
func Decode(b []byte) (*route.Snapshot, Header, error) {
	h, err := ReadHeader(b)
	if err != nil {
		return nil, h, err
	}
	o := len(magic) + 20
	if sum := crc32c(b[headerSize:]); sum != binary.BigEndian.Uint32(b[o:]) {
		return nil, h, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	d := decoder{b: b[headerSize:]}
	s := d.payload()
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left after the payload", len(d.b))
	}
	if d.err != nil {
		return nil, h, d.err
	}
	s.TakenAt = h.TakenAt
	return s, h, nil
}

// The payload: sections in a fixed order, each a count then its items.
// Integers are varints, strings and byte slices a uvarint length then the
// bytes. A queue names its broker group by its index in the groups
// section, so a broker name is written once however many topics it
// serves.

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)   { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(s []byte) { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) strs(s []string) {
	e.uint(uint64(len(s)))
	for _, x := range s {
		e.str(x)
	}
}
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) payload(s *route.Snapshot) {
	index := make(map[string]uint64, len(s.Groups))
	e.uint(uint64(len(s.Groups)))
	for i, g := range s.Groups {
		index[g.Name] = uint64(i)
		e.str(g.Cluster)
		e.str(g.Name)
		e.str(g.Zone)
		e.bool(g.ActingMaster)
		e.uint(uint64(len(g.Addrs)))
		for _, a := range g.Addrs {
			e.int(a.ID)
			e.str(a.Addr)
		}
	}
	e.uint(uint64(len(s.Clusters)))
	for _, c := range s.Clusters {
		e.str(c.Name)
		e.strs(c.Brokers)
	}
	e.uint(uint64(len(s.Brokers)))
	for _, b := range s.Brokers {
		e.str(b.Cluster)
		e.str(b.Addr)
		e.str(b.Name)
		e.int(b.ID)
		e.str(b.HAAddr)
		e.int(b.Timeout)
		e.int(b.LastUpdate)
		e.int(b.DataVersion.StateVersion)
		e.int(b.DataVersion.Timestamp)
		e.int(b.DataVersion.Counter)
		e.str(b.Owner)
	}
	e.uint(uint64(len(s.Filters)))
	for _, f := range s.Filters {
		e.str(f.Cluster)
		e.str(f.Addr)
		e.strs(f.Servers)
	}
	e.uint(uint64(len(s.Topics)))
	for _, t := range s.Topics {
		e.str(t.Topic)
		e.uint(uint64(len(t.Queues)))
		for _, q := range t.Queues {
			i, ok := index[q.BrokerName]
			if !ok {
				// Export never makes one; Restore refuses it whole.
				i = math.MaxUint32
			}
			e.uint(i)
			e.int(int64(q.ReadQueueNums))
			e.int(int64(q.WriteQueueNums))
			e.int(int64(q.Perm))
			e.int(int64(q.TopicSysFlag))
		}
	}
	e.uint(uint64(len(s.Mappings)))
	for _, m := range s.Mappings {
		e.str(m.Topic)
		e.uint(uint64(len(m.ByBroker)))
		for _, k := range sortedKeys(m.ByBroker) {
			e.str(k)
			e.bytes(m.ByBroker[k])
		}
	}
}

// decoder reads the payload; its first error stops it and every later
// read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad unsigned varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int32() int32 {
	v := d.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("%d out of int32", v)
		return 0
	}
	return int32(v)
}

// count reads a number of items, each at least min bytes long: a count
// the rest of the payload cannot hold is corrupt, so a bad file never
// makes the decoder allocate more than the file's size.
func (d *decoder) count(min int) int {
	n := d.uint()
	if n > uint64(len(d.b)/min) {
		d.fail("%d items in %d bytes", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) raw() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("%d bytes announced, %d left", n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string   { return string(d.raw()) }
func (d *decoder) bytes() []byte { return append([]byte(nil), d.raw()...) }
func (d *decoder) bool() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail("bad boolean")
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *decoder) strs() []string {
	out := make([]string, d.count(1))
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) payload() *route.Snapshot {
	s := &route.Snapshot{}
	s.Groups = make([]route.GroupState, d.count(6))
	for i := range s.Groups {
		g := &s.Groups[i]
		g.Cluster, g.Name, g.Zone = d.str(), d.str(), d.str()
		g.ActingMaster = d.bool()
		g.Addrs = make([]body.BrokerAddr, d.count(2))
		for j := range g.Addrs {
			g.Addrs[j] = body.BrokerAddr{ID: d.int(), Addr: d.str()}
		}
	}
	s.Clusters = make([]route.ClusterState, d.count(2))
	for i := range s.Clusters {
		s.Clusters[i] = route.ClusterState{Name: d.str(), Brokers: d.strs()}
	}
	s.Brokers = make([]route.BrokerState, d.count(11))
	for i := range s.Brokers {
		b := &s.Brokers[i]
		b.Cluster, b.Addr, b.Name = d.str(), d.str(), d.str()
		b.ID = d.int()
		b.HAAddr = d.str()
		b.Timeout, b.LastUpdate = d.int(), d.int()
		b.DataVersion = body.DataVersion{StateVersion: d.int(), Timestamp: d.int(), Counter: d.int()}
		b.Owner = d.str()
	}
	s.Filters = make([]route.FilterState, d.count(3))
	for i := range s.Filters {
		s.Filters[i] = route.FilterState{Cluster: d.str(), Addr: d.str(), Servers: d.strs()}
	}
	s.Topics = make([]route.TopicState, d.count(2))
	for i := range s.Topics {
		t := &s.Topics[i]
		t.Topic = d.str()
		t.Queues = make([]body.QueueData, d.count(5))
		for j := range t.Queues {
			gi := d.uint()
			if gi >= uint64(len(s.Groups)) {
				d.fail("topic %q: broker group %d of %d", t.Topic, gi, len(s.Groups))
				return s
			}
			t.Queues[j] = body.QueueData{BrokerName: s.Groups[gi].Name, ReadQueueNums: d.int32(),
				WriteQueueNums: d.int32(), Perm: d.int32(), TopicSysFlag: d.int32()}
		}
	}
	s.Mappings = make([]route.MappingState, d.count(2))
	for i := range s.Mappings {
		m := &s.Mappings[i]
		m.Topic = d.str()
		n := d.count(2)
		m.ByBroker = make(map[string][]byte, n)
		for range n {
			k := d.str()
			m.ByBroker[k] = d.bytes()
		}
	}
	return s
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
