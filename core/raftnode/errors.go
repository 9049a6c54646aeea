// The errors a write can end with, and how raft's own map onto them.

package raftnode

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

var (
	// ErrNotLeader: this node does not serve writes (a follower, a candidate,
	// or a leader whose barrier has not yet committed). The entry was not
	// appended. Every such error is a *NotLeaderError naming the leader
	// known to this node.
	ErrNotLeader = errors.New("not the ready raft leader")
	// ErrLeadershipLost: the entry was appended but this node lost the
	// leadership before it committed. Outcome unknown: the entry may still
	// commit under the next leader, or be dropped; it is never applied twice.
	ErrLeadershipLost = errors.New("raft leadership lost before the entry committed")
	// ErrTimeout: the entry was not committed and applied within the
	// deadline (no quorum, or an overloaded leader). Outcome unknown, as for
	// ErrLeadershipLost.
	ErrTimeout = errors.New("raft apply timed out")
	// ErrShutdown: the node is shut down or shutting down.
	ErrShutdown = errors.New("raft node shut down")
	// ErrDirLocked: another process (or node) holds the data directory.
	ErrDirLocked = errors.New("raft data directory in use")
)

// NotLeaderError is the ErrNotLeader a write gets, with the leader this node
// knows of (empty ids when none is known).
type NotLeaderError struct {
	Leader LeaderInfo
}

func (e *NotLeaderError) Error() string {
	if e.Leader.ID == "" {
		return ErrNotLeader.Error() + ": no leader known"
	}
	if e.Leader.Self {
		return ErrNotLeader.Error() + ": elected, barrier not yet committed"
	}
	return fmt.Sprintf("%s: leader is %s (%s)", ErrNotLeader, e.Leader.ID, e.Leader.ServeAddr)
}

func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// mapApplyError turns raft's future errors into the ones above.
func (n *Node) mapApplyError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return n.notLeader()
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("%w: %v", ErrLeadershipLost, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShutdown
	}
	return fmt.Errorf("raft apply: %w", err)
}
