// The node's figures for /metrics and the status page, and the /readyz test.

package raftnode

import (
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Stats is a point-in-time view of the node.
type Stats struct {
	State        string // "Follower", "Candidate", "Leader" or "Shutdown"
	ReadyLeader  bool
	Term         uint64
	LastLogIndex uint64
	CommitIndex  uint64
	AppliedIndex uint64
	// LastSnapshotIndex is the index the newest snapshot covers (0: none).
	LastSnapshotIndex uint64
	// LastContact is when a follower last heard from its leader (zero if
	// never, or on the leader itself).
	LastContact time.Time
	LeaderID    string // empty when no leader is known
	// LeaderAddr is the leader's broker-facing address (what 1005 names),
	// empty when no leader is known or it is not a configured peer.
	LeaderAddr string
	// Peers are the configured peers, with their health on the leader.
	Peers []PeerStats
	// Voters is the number of voting members in raft's configuration.
	Voters int
	// MembershipMismatch is set when raft's membership differs from the
	// configured peers (last checked at start and on each election won).
	MembershipMismatch bool
	// RefusedConnections counts the raft connections closed before raft
	// saw them: from no member's address, past a cap, or failing the
	// opening exchange (the cluster secret, TLS, a non-member's id).
	RefusedConnections int64
	// RefusedRPCs counts the RPCs the transport guard refused: from a
	// non-member, with an absurd term, a TimeoutNow not from the leader.
	RefusedRPCs int64
}

// Stats returns the node's figures.
func (n *Node) Stats() Stats {
	_, id := n.raft.LeaderWithID()
	st := Stats{
		State:              n.raft.State().String(),
		ReadyLeader:        n.ReadyLeader(),
		Term:               n.raft.CurrentTerm(),
		LastLogIndex:       n.raft.LastIndex(),
		CommitIndex:        n.raft.CommitIndex(),
		AppliedIndex:       n.raft.AppliedIndex(),
		LeaderID:           string(id),
		LeaderAddr:         n.peers[string(id)].ServeAddr,
		MembershipMismatch: n.mismatch.Load(),
		Peers:              n.peerStats(string(id)),
		RefusedRPCs:        n.guard.refused.Load(),
	}
	if n.cfg.Stream != nil {
		st.RefusedConnections = n.cfg.Stream.Stats().Refused
	}
	if n.raft.State() != raft.Leader {
		st.LastContact = n.raft.LastContact()
	}
	// raft keeps these only in its string map.
	m := n.raft.Stats()
	st.LastSnapshotIndex, _ = strconv.ParseUint(m["last_snapshot_index"], 10, 64)
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.Suffrage == raft.Voter {
				st.Voters++
			}
		}
	}
	return st
}
