// The state machine interface the controller implements, its raft.FSM
// adapter and the versioned snapshot envelope.

package raftnode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/hashicorp/raft"
)

// FSM is the replicated state machine. raft calls it from one goroutine, in
// log order, on every node; none of its methods may block on the network.
type FSM interface {
	// Apply applies one committed entry. The result is handed to the Apply
	// caller on the leader (and dropped elsewhere), so it can carry the
	// answer the leader replies with.
	Apply(index uint64, data []byte) any
	// Snapshot returns the whole state as bytes. It runs between two Apply
	// calls, so the bytes are consistent; they must not alias state that
	// later Applies change.
	Snapshot() ([]byte, error)
	// Restore replaces the whole state with one a Snapshot produced (on this
	// node or another). The envelope is already checked.
	Restore(data []byte) error
}

// The snapshot envelope: magic, format version, payload length and the
// CRC-32C of the payload, all big-endian, then the payload.
const (
	snapshotMagic      = "RNSS"
	snapshotVersion    = 1
	snapshotHeaderSize = 4 + 4 + 8 + 4
	// maxSnapshotSize bounds what Restore reads into memory. The controller's
	// state is kilobytes per broker group, so this is far above real use and
	// only stops a corrupt length from allocating the machine away.
	maxSnapshotSize = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrBadSnapshot is wrapped by every envelope check that fails on restore.
var ErrBadSnapshot = errors.New("bad snapshot")

func encodeSnapshotHeader(payload []byte) []byte {
	h := make([]byte, snapshotHeaderSize)
	copy(h, snapshotMagic)
	binary.BigEndian.PutUint32(h[4:], snapshotVersion)
	binary.BigEndian.PutUint64(h[8:], uint64(len(payload)))
	binary.BigEndian.PutUint32(h[16:], crc32.Checksum(payload, crcTable))
	return h
}

// readSnapshot reads and checks one envelope from r and returns its payload.
func readSnapshot(r io.Reader) ([]byte, error) {
	var h [snapshotHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadSnapshot, err)
	}
	if string(h[:4]) != snapshotMagic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrBadSnapshot, h[:4], snapshotMagic)
	}
	if v := binary.BigEndian.Uint32(h[4:]); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrBadSnapshot, v, snapshotVersion)
	}
	size := binary.BigEndian.Uint64(h[8:])
	if size > maxSnapshotSize {
		return nil, fmt.Errorf("%w: length %d over the %d limit", ErrBadSnapshot, size, maxSnapshotSize)
	}
	payload := make([]byte, size)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, fmt.Errorf("%w: payload of %d bytes: %v", ErrBadSnapshot, size, err)
	}
	if sum, want := crc32.Checksum(payload, crcTable), binary.BigEndian.Uint32(h[16:]); sum != want {
		return nil, fmt.Errorf("%w: crc %08x, header says %08x", ErrBadSnapshot, sum, want)
	}
	var extra [1]byte
	if n, _ := r.Read(extra[:]); n != 0 {
		return nil, fmt.Errorf("%w: bytes after the %d-byte payload", ErrBadSnapshot, size)
	}
	return payload, nil
}

// fsmAdapter turns an FSM into a raft.FSM.
type fsmAdapter struct {
	fsm FSM
	// applied, when set, gets each entry's extensions and result so the
	// Apply call waiting on this node can return.
	applied func(ext []byte, result any)
}

func (a *fsmAdapter) Apply(l *raft.Log) any {
	res := a.fsm.Apply(l.Index, l.Data)
	if a.applied != nil {
		a.applied(l.Extensions, res)
	}
	return res
}

func (a *fsmAdapter) Snapshot() (raft.FSMSnapshot, error) {
	data, err := a.fsm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("fsm snapshot: %w", err)
	}
	return &fsmSnapshot{data: data}, nil
}

func (a *fsmAdapter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	if err := a.fsm.Restore(data); err != nil {
		return fmt.Errorf("fsm restore: %w", err)
	}
	return nil
}

// fsmSnapshot writes the bytes the FSM gave, in the envelope. raft runs
// Persist concurrently with later Applies, which is why FSM.Snapshot must
// return bytes that do not alias live state.
type fsmSnapshot struct {
	data []byte
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(encodeSnapshotHeader(s.data)); err != nil {
		sink.Cancel()
		return fmt.Errorf("write snapshot header: %w", err)
	}
	if _, err := sink.Write(s.data); err != nil {
		sink.Cancel()
		return fmt.Errorf("write snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}
