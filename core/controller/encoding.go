// The binary forms the raft side stores: an event batch (one log entry)
// and a snapshot of the whole state, both versioned and checksummed.

package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Layout, both forms: a kind byte ('E' batch, 'S' snapshot), a version
// byte, the payload, and a big-endian CRC-32C of everything before it.
// Integers are varints (zigzag for signed), strings and lists carry a
// uvarint length first. Version 1 payloads:
//
//	batch:    count, then per event its type byte and the fields the type
//	          uses (see Event), in the order Cluster, BrokerName, BrokerID,
//	          Addr, CheckCode, Elected, IDs.
//	snapshot: count, then per set in name order: name, cluster, nextId,
//	          flags (bit 0: has a master), masterId if any, masterEpoch,
//	          syncStateSetEpoch, brokers (id, addr, checkCode ascending by
//	          id), SyncStateSet ids (ascending).
//
// Decoders check every length against what is left, so a corrupt or
// hostile input can make them fail but not allocate more than its size.
const (
	kindBatch    byte = 'E'
	kindSnapshot byte = 'S'

	// BatchVersion and SnapshotVersion are the versions written; decoders
	// refuse any other.
	BatchVersion    byte = 1
	SnapshotVersion byte = 1

	trailerLen = 4
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Errors the decoders wrap; test with errors.Is.
var (
	ErrUnknownVersion = errors.New("unknown format version")
	ErrCorrupt        = errors.New("corrupt data")
)

// EncodeBatch appends the log-entry form of the events of one request.
func EncodeBatch(dst []byte, events []Event) []byte {
	start := len(dst)
	dst = append(dst, kindBatch, BatchVersion)
	dst = binary.AppendUvarint(dst, uint64(len(events)))
	for i := range events {
		e := &events[i]
		dst = append(dst, byte(e.Type))
		switch e.Type {
		case EventAlterSyncStateSet:
			dst = appendString(dst, e.BrokerName)
			dst = appendIDs(dst, e.IDs)
		case EventApplyBrokerID:
			dst = appendString(dst, e.Cluster)
			dst = appendString(dst, e.BrokerName)
			dst = binary.AppendVarint(dst, e.BrokerID)
			dst = appendString(dst, e.Addr)
			dst = appendString(dst, e.CheckCode)
		case EventElectMaster:
			dst = appendString(dst, e.BrokerName)
			if e.Elected {
				dst = append(dst, 1)
				dst = binary.AppendVarint(dst, e.BrokerID)
			} else {
				dst = append(dst, 0)
			}
		case EventCleanBrokerData:
			dst = appendString(dst, e.BrokerName)
			dst = appendIDs(dst, e.IDs)
		case EventUpdateBrokerAddress:
			dst = appendString(dst, e.Cluster)
			dst = appendString(dst, e.BrokerName)
			dst = binary.AppendVarint(dst, e.BrokerID)
			dst = appendString(dst, e.Addr)
		}
	}
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// DecodeBatch decodes a log entry written by EncodeBatch. It fails, with
// an error wrapping ErrUnknownVersion or ErrCorrupt, on anything else: an
// empty entry, another version, a checksum mismatch, an unknown event type,
// truncated or trailing bytes.
func DecodeBatch(b []byte) ([]Event, error) {
	r, err := openFrame(b, kindBatch, BatchVersion, "event batch")
	if err != nil {
		return nil, err
	}
	n := r.count()
	events := make([]Event, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		e := Event{Type: EventType(r.byte())}
		switch e.Type {
		case EventAlterSyncStateSet:
			e.BrokerName = r.string()
			e.IDs = r.ids()
		case EventApplyBrokerID:
			e.Cluster = r.string()
			e.BrokerName = r.string()
			e.BrokerID = r.varint()
			e.Addr = r.string()
			e.CheckCode = r.string()
		case EventElectMaster:
			e.BrokerName = r.string()
			e.Elected = r.bool()
			if e.Elected {
				e.BrokerID = r.varint()
			}
		case EventCleanBrokerData:
			e.BrokerName = r.string()
			e.IDs = r.ids()
		case EventUpdateBrokerAddress:
			e.Cluster = r.string()
			e.BrokerName = r.string()
			e.BrokerID = r.varint()
			e.Addr = r.string()
		default:
			r.fail(fmt.Errorf("unknown event type %d", uint8(e.Type)))
		}
		events = append(events, e)
	}
	if err := r.done("event batch"); err != nil {
		return nil, err
	}
	return events, nil
}

// ApplyEntry decodes a log entry and applies its events; a corrupt entry
// is refused whole, leaving the state unchanged.
func (s *State) ApplyEntry(b []byte) error {
	events, err := DecodeBatch(b)
	if err != nil {
		return err
	}
	s.Apply(events...)
	return nil
}

// Snapshot encodes the whole state. Equal states give equal bytes.
func (s *State) Snapshot() []byte {
	names := s.Names()
	dst := make([]byte, 0, 64+len(names)*96)
	dst = append(dst, kindSnapshot, SnapshotVersion)
	dst = binary.AppendUvarint(dst, uint64(len(names)))
	for _, name := range names {
		g := s.groups[name]
		dst = appendString(dst, g.Name)
		dst = appendString(dst, g.Cluster)
		dst = binary.AppendVarint(dst, g.NextID)
		if g.HasMaster {
			dst = append(dst, 1)
			dst = binary.AppendVarint(dst, g.MasterID)
		} else {
			dst = append(dst, 0)
		}
		dst = binary.AppendVarint(dst, int64(g.MasterEpoch))
		dst = binary.AppendVarint(dst, int64(g.SyncStateSetEpoch))
		dst = binary.AppendUvarint(dst, uint64(len(g.Brokers)))
		for _, b := range g.Brokers {
			dst = binary.AppendVarint(dst, b.ID)
			dst = appendString(dst, b.Addr)
			dst = appendString(dst, b.CheckCode)
		}
		dst = appendIDs(dst, g.SyncStateSet)
	}
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst, crcTable))
}

// Restore replaces the state with the one encoded in b. On error (wrapping
// ErrUnknownVersion or ErrCorrupt) the state is left as it was. Besides the
// framing it checks what a snapshot of a real state always satisfies: set
// names and ids in strictly ascending order, at least one id per set.
func (s *State) Restore(b []byte) error {
	r, err := openFrame(b, kindSnapshot, SnapshotVersion, "snapshot")
	if err != nil {
		return err
	}
	n := r.count()
	groups := make(map[string]*Group, n)
	prev := ""
	for i := uint64(0); i < n && r.err == nil; i++ {
		g := &Group{Name: r.string(), Cluster: r.string(), NextID: r.varint()}
		if r.bool() {
			g.HasMaster, g.MasterID = true, r.varint()
		}
		g.MasterEpoch = r.int32()
		g.SyncStateSetEpoch = r.int32()
		nb := r.count()
		g.Brokers = make([]Broker, 0, nb)
		for j := uint64(0); j < nb && r.err == nil; j++ {
			g.Brokers = append(g.Brokers, Broker{ID: r.varint(), Addr: r.string(), CheckCode: r.string()})
		}
		g.SyncStateSet = r.ids()
		switch {
		case r.err != nil:
		case i > 0 && g.Name <= prev:
			r.fail(fmt.Errorf("set %q out of order", g.Name))
		case len(g.Brokers) == 0:
			r.fail(fmt.Errorf("set %q has no broker", g.Name))
		case !strictlyAscending(len(g.Brokers), func(i int) int64 { return g.Brokers[i].ID }):
			r.fail(fmt.Errorf("set %q: broker ids out of order", g.Name))
		case !strictlyAscending(len(g.SyncStateSet), func(i int) int64 { return g.SyncStateSet[i] }):
			r.fail(fmt.Errorf("set %q: SyncStateSet out of order", g.Name))
		}
		prev = g.Name
		groups[g.Name] = g
	}
	if err := r.done("snapshot"); err != nil {
		return err
	}
	s.groups = groups
	return nil
}

func strictlyAscending(n int, at func(int) int64) bool {
	for i := 1; i < n; i++ {
		if at(i-1) >= at(i) {
			return false
		}
	}
	return true
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendIDs(dst []byte, ids []int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	for _, id := range ids {
		dst = binary.AppendVarint(dst, id)
	}
	return dst
}

// reader walks a payload; the first failure sticks and later reads return
// zero values.
type reader struct {
	b   []byte
	err error
}

// openFrame checks kind, version and checksum and returns a reader over
// the payload.
func openFrame(b []byte, kind, version byte, what string) (*reader, error) {
	if len(b) < 2+trailerLen {
		return nil, fmt.Errorf("%s: %d bytes: %w", what, len(b), ErrCorrupt)
	}
	if b[0] != kind {
		return nil, fmt.Errorf("%s: kind byte 0x%02x: %w", what, b[0], ErrCorrupt)
	}
	if b[1] != version {
		return nil, fmt.Errorf("%s: version %d (want %d): %w", what, b[1], version, ErrUnknownVersion)
	}
	body := b[:len(b)-trailerLen]
	if got, want := crc32.Checksum(body, crcTable), binary.BigEndian.Uint32(b[len(body):]); got != want {
		return nil, fmt.Errorf("%s: checksum %08x, want %08x: %w", what, got, want, ErrCorrupt)
	}
	return &reader{b: body[2:]}, nil
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w: %w", what, ErrCorrupt, r.err)
	}
	return nil
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail(errors.New("truncated"))
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bool() bool {
	switch c := r.byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail(fmt.Errorf("bad flag byte %d", c))
		return false
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail(fmt.Errorf("epoch %d out of range", v))
		return 0
	}
	return int32(v)
}

// count reads a length whose items take at least one byte each, so it can
// never exceed what is left.
func (r *reader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(fmt.Errorf("count %d exceeds the %d bytes left", n, len(r.b)))
		return 0
	}
	return n
}

func (r *reader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) ids() []int64 {
	n := r.count()
	ids := make([]int64, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		ids = append(ids, r.varint())
	}
	return ids
}
