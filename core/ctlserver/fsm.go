// The raft state machine of a controller node: controller.State behind
// the lock every reader and the applier share.

package ctlserver

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/rocketns/rocketns/core/controller"
)

// FSM is raftnode's FSM over a controller.State: Apply decodes one entry's
// event batch and applies it, Snapshot and Restore use the state's
// versioned encodings. raft calls it from one goroutine; everything else
// reads the state through Read.
type FSM struct {
	mu    sync.RWMutex
	state *controller.State
	log   *slog.Logger

	// elected, when set, is told after each applied entry of every set
	// it gave a new master, with the set's masterEpoch then; it runs on
	// raft's goroutine outside the lock and must not block.
	elected func(brokerName string, masterEpoch int32)

	// Test seams, nil in production: before runs ahead of each Apply,
	// outside the lock (a test stalls the log there); after runs once the
	// entry is applied and the lock released.
	before, after func(index uint64)
}

// election is a set given a new master by an applied entry.
type election struct {
	name  string
	epoch int32
}

// NewFSM returns an FSM over an empty state.
func NewFSM(log *slog.Logger) *FSM {
	if log == nil {
		log = slog.Default()
	}
	return &FSM{state: controller.NewState(), log: log}
}

// Apply implements raftnode.FSM. Its result is nil, or the error of an
// entry that does not decode (which changes nothing): the writer waiting
// on the leader answers SYSTEM_ERROR then.
func (f *FSM) Apply(index uint64, data []byte) any {
	if f.before != nil {
		f.before(index)
	}
	events, err := controller.DecodeBatch(data)
	var elections []election
	if err == nil {
		f.mu.Lock()
		f.state.Apply(events...)
		for _, e := range events {
			if e.Type == controller.EventElectMaster && e.Elected {
				if g, ok := f.state.Group(e.BrokerName); ok && g.HasMaster {
					elections = append(elections, election{g.Name, g.MasterEpoch})
				}
			}
		}
		f.mu.Unlock()
	}
	if f.elected != nil {
		for _, e := range elections {
			f.elected(e.name, e.epoch)
		}
	}
	if f.after != nil {
		f.after(index)
	}
	if err != nil {
		// Every node refuses the same entry the same way, so the states
		// stay equal; the entry is lost, which the leader reports.
		f.log.Error("controller: raft entry not applied", "index", index, "err", err)
		return fmt.Errorf("raft entry %d: %w", index, err)
	}
	return nil
}

// Snapshot implements raftnode.FSM; the bytes are a fresh encoding that
// later Applies do not touch.
func (f *FSM) Snapshot() ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.Snapshot(), nil
}

// Restore implements raftnode.FSM. A snapshot that does not decode leaves
// the state as it was and fails the restore.
func (f *FSM) Restore(data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.Restore(data)
}

// Read runs fn with the state, which must not be changed or kept after fn
// returns. Applies wait meanwhile.
func (f *FSM) Read(fn func(*controller.State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}
