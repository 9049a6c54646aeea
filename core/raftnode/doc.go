// Package raftnode replicates an opaque state machine over a raft group
// built on hashicorp/raft, with its log in a bbolt file, its snapshots in
// raft's file snapshot store and its traffic on a TCP stream layer that can
// share a port with another protocol.
//
// It knows nothing of what it replicates: the FSM interface takes committed
// entries as bytes and returns the state as bytes. What it adds to raft:
//
//   - Writes: Node.Apply returns only after the entry is committed and
//     applied by the local FSM, within a deadline, with typed errors
//     (ErrNotLeader carrying the known leader, ErrLeadershipLost,
//     ErrTimeout, ErrShutdown). The last two mean "outcome unknown".
//   - The leader barrier: a newly elected leader commits a barrier and waits
//     for its FSM to apply everything before it; only then is it
//     ReadyLeader and told through Config.OnLeadership. Until then its
//     state may lack entries a previous leader committed, so it must not
//     decide writes (raft's IsLeader is already true then).
//   - Leader lookup with the broker-facing address from the configured
//     peers (ServeAddr), which need not be the raft address.
//   - The transport: every raft connection starts with Preamble. A listener
//     shared with the remoting protocol recognises it and hands the
//     connection to StreamLayer.Handoff; a layer made with
//     StreamOptions.Bind owns a port of its own instead. Either way a
//     connection is accepted only from a member's address (the hosts of the
//     configured peers and of raft's membership, resolved as connections
//     come, so late-resolving names work) and only after the opening
//     exchange of handshake.go: the acknowledgement, which the dialer waits
//     for before raft sends anything (a listener that sniffs the preamble
//     may take the connection off its poller, and bytes in flight at that
//     moment could be lost), each side's id, which must be a member's, and,
//     when configured, a cluster secret proven both ways and mutual TLS.
//     The own listener caps its connections; an accepted connection silent
//     for DefaultIdleTimeout is closed, and a dialed one raft kept pooled
//     is replaced before it could meet that close. The connections of a
//     removed member are closed within half a second of the change
//     reaching the node's log.
//   - The transport guard (guard.go): raft reads RPCs through a wrapper that
//     refuses, from any sender, a term that would wrap or jump absurdly, an
//     RPC from a non-member, and a TimeoutNow not from the current leader.
//   - Bootstrap and membership: a node whose store is empty bootstraps the
//     configured peers (every member may, with the same list); a node with
//     state keeps raft's membership from its log and logs any difference
//     from the configuration. Config.ApplyMembershipChanges lets the ready
//     leader apply the difference with single-server changes. A new member
//     started with the new list bootstraps itself with it, which is
//     harmless: the existing members reject its votes (it is not in their
//     membership) until a leader adds it.
//
// Storage under Config.Dir: raft.db (bbolt: the log and raft's term and
// vote), snapshots/ (raft's FileSnapshotStore, each snapshot's state file
// fsynced before it is renamed into place) and LOCK (an flock held while the
// node runs, so a second process cannot open the same directory). Every log
// or stable-store update is one bbolt transaction and bbolt fsyncs it before
// the commit returns, so what raft counts as stored (and so every entry in
// a quorum's acknowledgement) survives a kill -9 or a power cut.
//
// Snapshots are the FSM's bytes in an envelope: magic "RNSS", a format
// version, the payload length and its CRC-32C, all checked on restore.
// After a snapshot raft compacts the log to the last TrailingLogs entries.
//
// Why a store of our own on go.etcd.io/bbolt rather than
// hashicorp/raft-boltdb: raft-boltdb/v2 v2.3.1 (its latest) imports
// github.com/hashicorp/go-metrics/compat, which go-metrics v0.7.0 (required
// by raft v1.8.0) no longer has, so the two do not build together. Pairing
// it with raft v1.7.x would build, but drags in the archived
// github.com/boltdb/bolt (for raft-boltdb's v1 migration code),
// github.com/armon/go-metrics and bbolt v1.3.5 from 2020, and pins raft
// behind its current release. The store here is two bbolt buckets
// (big-endian index to entry, key to value) with raft-boltdb's
// semantics, current bbolt (the engine etcd itself runs on) and no other
// dependency; its tests cover the LogStore contract, a corrupt entry and
// restarts.
package raftnode
