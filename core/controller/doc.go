// Package controller is the RocketMQ 5.x controller's state machine (broker
// sets, their ids, masters, SyncStateSets and epochs), its decisions for
// every leader-only request, the election policy and the broker liveness
// table, as pure logic over an injected clock.
//
// It opens no sockets, starts no goroutines and never reads the wall
// clock: times are milliseconds the caller passes in, connections are
// opaque uint64 ids the caller chooses. The network side (a remoting
// server) and the replication (a raft FSM) are glued to it elsewhere.
//
// # Driving it
//
// Each controller node holds a State, replicated through the raft log, and
// a Liveness table of its own, fed by the heartbeats brokers send to every
// node (as in Java's DLedger mode, liveness is not replicated).
//
//   - BROKER_HEARTBEAT (904), any node: ParseHeartbeat, then
//     Liveness.Heartbeat with the connection id and now. No raft round trip.
//     Answer with HeartbeatReply only if the request is not oneway.
//   - A leader-only request (1001-1004, 1006, 1011-1013) on the leader:
//     the request's Parse*, then the State method of the same name, with
//     Env{Live, Now, Settings}. If the Decision has Events, EncodeBatch
//     them into one log entry, raft-apply it and wait for the commit; every
//     node's FSM applies the entry with State.ApplyEntry. Then send
//     Decision.Reply, and, if Decision.RoleChange is set and
//     notifyBrokerRoleChanged is on, a oneway 1008 (RoleChange.NotifyCommand)
//     to each of RoleChange.Targets. A decision without events (every read,
//     every refusal) is answered at once from the state. On a non-leader
//     these requests get 2007 "The controller is not in leader state" with
//     no extFields, which this package does not build.
//   - A broker becomes inactive (Liveness.ConnClosed when its connection
//     closes, Liveness.Expire from the periodic scan, which also asks the
//     caller to close the expired connections): for each Inactive, if this
//     node is the leader and State.IsMaster(name, id), run
//     State.ControllerElect for the set, retrying up to
//     electMasterMaxRetryCount times until a SUCCESS, each SUCCESS
//     committed and notified like a 1002.
//   - Every scanInactiveMasterInterval the leader runs InactiveMasters and
//     does the same for each set it returns.
//
// FSM Snapshot and Restore map to State.Snapshot and State.Restore; both
// forms (log entry, snapshot) are versioned and checksummed, and their
// decoders refuse unknown versions and corrupt input.
//
// # Ordering and concurrency
//
// A reply predicts the state after its events (1001's new set epoch,
// 1002's epochs + 1), and the next decision must see those events applied:
// two 1013 for the same id would otherwise both be accepted. So the leader
// runs one write at a time, decide -> commit -> apply -> next, as Java's
// single-threaded event scheduler does, and after winning an election it
// commits a barrier before deciding anything (so its state holds every
// entry of earlier terms). Reads may be decided between writes.
//
// Neither State nor Liveness is safe for concurrent use. The simplest glue
// has a write mutex held across decide-commit-apply for writes, and one
// mutex around the State (taken by decisions and by the FSM's Apply,
// Snapshot and Restore) and one around the Liveness (heartbeats, scans,
// and decisions, which read it), taken in the order write -> state ->
// liveness.
//
// # Where it differs from Java 5.3.3
//
// The answers on the wire are Java's, down to the remarks of the
// NullPointerExceptions Java answers for missing fields; the recorded
// exchanges in testdata/vectors are replayed against the decisions. The
// differences are Java defects, none visible in those exchanges:
//
//   - a set is one Group, not two maps that a partial clean can split;
//   - a controller-triggered election that finds no candidate clears the
//     master once, not once per retry (each clearing bumps masterEpoch);
//   - candidates are ranked with plain comparisons, not by subtracting
//     (which overflows);
//   - cleanBrokerMetadata -l with ids removes those ids, not the whole set;
//   - a closed connection drops every broker that heartbeated on it, not
//     the first one found; a heartbeat's connection and address replace
//     the recorded ones (Java keeps the first), so a broker that
//     reconnected is not declared dead when its old connection closes; a
//     new broker's confirmOffset is its first heartbeat's, not 0;
//   - a 1013 retry with the same check code and an unchanged 1003 address
//     replicate nothing.
package controller
