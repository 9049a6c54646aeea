// Event batch and snapshot encodings: round trips, the exact layout of a
// small batch, and refusal of other versions and corrupt input.

package controller

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

var sampleEvents = []Event{
	{Type: EventApplyBrokerID, Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1,
		Addr: "127.0.0.1:30911", CheckCode: "127.0.0.1:30911;1796151354051"},
	{Type: EventElectMaster, BrokerName: "broker-a", Elected: true, BrokerID: 1},
	{Type: EventAlterSyncStateSet, BrokerName: "broker-a", IDs: []int64{1, 2}},
	{Type: EventUpdateBrokerAddress, Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 2, Addr: "127.0.0.1:30922"},
	{Type: EventElectMaster, BrokerName: "broker-a"},
	{Type: EventCleanBrokerData, BrokerName: "broker-a", IDs: []int64{2}},
	{Type: EventCleanBrokerData, BrokerName: "broker-b"},
}

func TestBatchRoundTrip(t *testing.T) {
	t.Parallel()
	b := EncodeBatch(nil, sampleEvents)
	got, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sampleEvents) {
		t.Fatalf("%d events, want %d", len(got), len(sampleEvents))
	}
	for i := range got {
		if got[i].String() != sampleEvents[i].String() {
			t.Errorf("event %d = %v, want %v", i, got[i], sampleEvents[i])
		}
	}
	if again := EncodeBatch(nil, got); !bytes.Equal(again, b) {
		t.Errorf("re-encoded batch differs")
	}
	// Appending keeps what dst held.
	if withPrefix := EncodeBatch([]byte("xy"), sampleEvents); !bytes.Equal(withPrefix[2:], b) {
		t.Errorf("EncodeBatch with a prefix wrote other bytes")
	}
	if empty, err := DecodeBatch(EncodeBatch(nil, nil)); err != nil || len(empty) != 0 {
		t.Errorf("empty batch: %v %v", empty, err)
	}
}

// The layout is the storage format: a change to it must come with a new
// version, so the bytes of one event are pinned here.
func TestBatchLayout(t *testing.T) {
	t.Parallel()
	got := EncodeBatch(nil, []Event{{Type: EventElectMaster, BrokerName: "a", Elected: true, BrokerID: 2}})
	want := []byte{'E', 1, 1, 3, 1, 'a', 1, 4}
	want = binary.BigEndian.AppendUint32(want, crc32.Checksum(want, crcTable))
	if !bytes.Equal(got, want) {
		t.Errorf("batch = % x, want % x", got, want)
	}
}

// reframe rewrites b's checksum after a change, so a test reaches the
// payload checks.
func reframe(b []byte) []byte {
	body := b[:len(b)-trailerLen]
	return binary.BigEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, crcTable))
}

func TestBatchRejects(t *testing.T) {
	t.Parallel()
	good := EncodeBatch(nil, sampleEvents)
	f := func(name string, b []byte, want error) {
		t.Helper()
		events, err := DecodeBatch(b)
		if !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
		if events != nil {
			t.Errorf("%s: returned events with the error", name)
		}
	}
	f("empty", nil, ErrCorrupt)
	f("short", good[:5], ErrCorrupt)
	f("snapshot kind", append([]byte{'S'}, good[1:]...), ErrCorrupt)
	f("version 2", reframe(append([]byte{'E', 2}, good[2:]...)), ErrUnknownVersion)
	f("version 0", append([]byte{'E', 0}, good[2:]...), ErrUnknownVersion)
	flipped := bytes.Clone(good)
	flipped[10] ^= 0x20
	f("flipped bit", flipped, ErrCorrupt)
	f("truncated payload", reframe(good[:len(good)-trailerLen-3]), ErrCorrupt)
	f("trailing byte", reframe(append(bytes.Clone(good[:len(good)-trailerLen]), 0, 0, 0, 0, 0)), ErrCorrupt)
	unknown := EncodeBatch(nil, []Event{{Type: EventElectMaster, BrokerName: "a"}})
	unknown[3] = 4 // the never-produced Read event
	f("unknown type", reframe(unknown), ErrCorrupt)
	badFlag := EncodeBatch(nil, []Event{{Type: EventElectMaster, BrokerName: "a"}})
	badFlag[6] = 2
	f("bad flag", reframe(badFlag), ErrCorrupt)
	huge := []byte{'E', 1, 0xff, 0xff, 0xff, 0xff, 0x0f}
	f("huge count", reframe(append(huge, 0, 0, 0, 0)), ErrCorrupt)
	longStr := []byte{'E', 1, 1, 3, 0xff, 0x7f, 'a'}
	f("string longer than the input", reframe(append(longStr, 0, 0, 0, 0)), ErrCorrupt)

	s := NewState()
	s.Apply(sampleEvents[0])
	before := s.Snapshot()
	if err := s.ApplyEntry(flipped); err == nil {
		t.Errorf("ApplyEntry took a corrupt entry")
	}
	if !bytes.Equal(s.Snapshot(), before) {
		t.Errorf("a refused entry changed the state")
	}
}

func sampleState() *State {
	s := NewState()
	s.Apply(
		Event{Type: EventApplyBrokerID, Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1, Addr: "127.0.0.1:30911", CheckCode: "127.0.0.1:30911;1"},
		Event{Type: EventApplyBrokerID, Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 2, Addr: "127.0.0.1:30921", CheckCode: "127.0.0.1:30921;2"},
		Event{Type: EventElectMaster, BrokerName: "broker-a", Elected: true, BrokerID: 1},
		Event{Type: EventAlterSyncStateSet, BrokerName: "broker-a", IDs: []int64{2, 1}},
		Event{Type: EventApplyBrokerID, Cluster: "Other", BrokerName: "ghost-x", BrokerID: 1, Addr: "", CheckCode: ";x"},
		Event{Type: EventApplyBrokerID, Cluster: "Other", BrokerName: "ghost-x", BrokerID: 5, Addr: "h:1", CheckCode: "h:1;1"},
		Event{Type: EventElectMaster, BrokerName: "ghost-x", Elected: true, BrokerID: 1},
		Event{Type: EventElectMaster, BrokerName: "ghost-x"},
		Event{Type: EventApplyBrokerID, Cluster: "C", BrokerName: "", BrokerID: -7, Addr: "ünïcode", CheckCode: "x"},
	)
	return s
}

func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	s := sampleState()
	snap := s.Snapshot()
	r := NewState()
	r.Apply(Event{Type: EventApplyBrokerID, BrokerName: "stale", BrokerID: 1}) // replaced by Restore
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Snapshot(), snap) {
		t.Fatalf("snapshot of the restored state differs")
	}
	if _, ok := r.Group("stale"); ok {
		t.Errorf("Restore kept a set that was not in the snapshot")
	}
	g, _ := r.Group("ghost-x")
	if g.HasMaster || g.MasterEpoch != 2 || g.SyncStateSetEpoch != 1 || g.NextID != 3 || len(g.Brokers) != 2 {
		t.Errorf("restored ghost-x = %+v", g)
	}
	// Same future: the same event on both gives the same state again.
	ev := Event{Type: EventElectMaster, BrokerName: "broker-a", Elected: true, BrokerID: 2}
	s.Apply(ev)
	r.Apply(ev)
	if !bytes.Equal(r.Snapshot(), s.Snapshot()) {
		t.Errorf("restored state diverged after one more event")
	}
	empty := NewState()
	if err := empty.Restore(NewState().Snapshot()); err != nil || empty.Len() != 0 {
		t.Errorf("empty snapshot: %v, %d sets", err, empty.Len())
	}
}

func TestRestoreRejects(t *testing.T) {
	t.Parallel()
	good := sampleState().Snapshot()
	f := func(name string, b []byte, want error) {
		t.Helper()
		s := sampleState()
		before := s.Snapshot()
		err := s.Restore(b)
		if !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
		if !bytes.Equal(s.Snapshot(), before) {
			t.Errorf("%s: a refused snapshot changed the state", name)
		}
	}
	f("empty", nil, ErrCorrupt)
	f("batch kind", append([]byte{'E'}, good[1:]...), ErrCorrupt)
	f("version 9", reframe(append([]byte{'S', 9}, good[2:]...)), ErrUnknownVersion)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	f("flipped bit", flipped, ErrCorrupt)
	f("truncated", reframe(good[:len(good)-trailerLen-1]), ErrCorrupt)

	// Well-framed payloads that no real state produces.
	frame := func(payload ...byte) []byte {
		b := append([]byte{'S', 1}, payload...)
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	}
	group := func(name string, ids ...int64) []byte {
		b := appendString(nil, name)
		b = appendString(b, "C")
		b = binary.AppendVarint(b, 2)
		b = append(b, 0)
		b = binary.AppendVarint(b, 0)
		b = binary.AppendVarint(b, 0)
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = binary.AppendVarint(b, id)
			b = appendString(b, "a")
			b = appendString(b, "c")
		}
		return appendIDs(b, nil)
	}
	two := func(a, b []byte) []byte { return append(append([]byte{2}, a...), b...) }
	f("no broker", frame(append([]byte{1}, group("a")...)...), ErrCorrupt)
	f("ids out of order", frame(append([]byte{1}, group("a", 2, 1)...)...), ErrCorrupt)
	f("duplicate id", frame(append([]byte{1}, group("a", 1, 1)...)...), ErrCorrupt)
	f("names out of order", frame(two(group("b", 1), group("a", 1))...), ErrCorrupt)
	f("duplicate name", frame(two(group("a", 1), group("a", 1))...), ErrCorrupt)
	if err := NewState().Restore(frame(two(group("a", 1), group("b", 1, 2))...)); err != nil {
		t.Errorf("a valid hand-made snapshot was refused: %v", err)
	}
	bigEpoch := append([]byte{1}, appendString(appendString(nil, "a"), "C")...)
	bigEpoch = binary.AppendVarint(append(binary.AppendVarint(bigEpoch, 2), 0), 1<<40)
	f("epoch out of range", frame(bigEpoch...), ErrCorrupt)
}

// frameAs wraps payload as a well-formed entry of kind, so that fuzzing
// gets past the checksum and exercises the payload decoder.
func frameAs(kind byte, payload []byte) []byte {
	b := append([]byte{kind, 1}, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func FuzzDecodeBatch(f *testing.F) {
	seed := EncodeBatch(nil, sampleEvents)
	f.Add(seed)
	f.Add(seed[2 : len(seed)-trailerLen])
	f.Add(EncodeBatch(nil, nil))
	f.Add([]byte{'E', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, frameAs(kindBatch, b)} {
			events, err := DecodeBatch(in)
			if err != nil {
				continue
			}
			again := EncodeBatch(nil, events)
			if back, err := DecodeBatch(again); err != nil || !bytes.Equal(EncodeBatch(nil, back), again) {
				t.Fatalf("a decoded batch does not round-trip: %v", err)
			}
			// Whatever decodes applies without panicking and leaves a
			// state that snapshots.
			s := sampleState()
			s.Apply(events...)
			if err := NewState().Restore(s.Snapshot()); err != nil {
				t.Fatalf("state after a decoded batch does not snapshot: %v", err)
			}
		}
	})
}

func FuzzRestore(f *testing.F) {
	seed := sampleState().Snapshot()
	f.Add(seed)
	f.Add(seed[2 : len(seed)-trailerLen])
	f.Add(NewState().Snapshot())
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, frameAs(kindSnapshot, b)} {
			s := NewState()
			if err := s.Restore(in); err != nil {
				continue
			}
			snap := s.Snapshot()
			r := NewState()
			if err := r.Restore(snap); err != nil {
				t.Fatalf("a restored state's snapshot is refused: %v", err)
			}
			if !bytes.Equal(r.Snapshot(), snap) {
				t.Fatalf("snapshot is not stable")
			}
			// Every decision works on whatever was restored.
			env := Env{Live: NewLiveness(), Now: 1}
			for _, name := range s.Names() {
				s.ElectMaster(ElectMasterRequest{BrokerName: name, BrokerID: 1}, env)
				s.GetSyncStateData(GetSyncStateDataRequest{Names: []string{name}}, env)
				s.AlterSyncStateSet(AlterSyncStateSetRequest{BrokerName: &name, Body: &body.SyncStateSet{IDs: []int64{1}}}, env)
			}
		}
	})
}
