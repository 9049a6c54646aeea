// Package ctlserver is a RocketMQ 5.x controller node on the network: the
// broker-facing remoting port, the raft node replicating the controller
// state machine, broker liveness with the elections it triggers, and the
// role-change notices to brokers.
//
// It glues three packages: core/controller (the pure state machine, its
// decisions and the liveness table), core/raftnode (replication) and
// core/remoting (the listener). A node is built with New from a Config,
// started with Start and stopped with Shutdown.
//
// # Ports
//
// DLedger style (the Java default) serves the controller protocol and raft
// on one port, the self peer's in controllerDLegerPeers: raft connections
// open with raftnode.Preamble, which the listener's sniffer hands to the
// raft stream layer, so brokers' controllerAddr lists work unchanged.
// jRaft style serves brokers on the node's jRaftControllerRPCAddr port and
// raft on its jRaftServerId port. Embedded in the NameServer, the node
// runs in the same process on its own port, exactly as standalone.
//
// # Running it
//
// Standalone and embedded runs are the same calls: the node's settings
// from the configuration keys (config.Config.Controller, which parses the
// membership too; DefaultConfig for Java's defaults), the process's TLS
// material and policy added, then New, Start, and Shutdown on the way out.
// Embedded in the NameServer the node answers with codec.ServerVersion
// (479), as Java does; start it after the NameServer's own listener: the
// two share nothing but the process. WriteMetrics and Readiness
// (RegisterAdmin adds both to an adminhttp listener) serve /metrics and
// /readyz; Stats and Groups feed them and the status page. 1009 and 1010
// follow config's rules for 318 and 319 (config.Controller.RuntimeUpdate,
// PersistUpdate, Properties); cmd/namesrv runs the node.
//
// # Who answers what
//
// The code table (codes.go) says it for each code, by its class:
//
//   - 904 heartbeats, on every node, into that node's liveness table (as
//     Java's DLedger mode; liveness is never replicated, jRaft style
//     included). 1005 on every node from its raft view. 1009 and 1010 on
//     every node from its own settings.
//   - 1001-1004, 1006, 1011-1013 on the ready leader only (elected, and its
//     barrier applied); any other node answers 2007. Reads (1004, 1006,
//     1012) are decided at once from the leader's state (behind an empty
//     raft entry when processReadEvent is on). Writes (1001, 1002, 1003,
//     1011, 1013) are queued for one writer goroutine, which decides one
//     at a time, commits the decision's events as one raft entry, waits
//     until this node's FSM has applied it, and only then answers, through
//     remoting's deferred replies so the connection keeps serving (its
//     heartbeats above all) meanwhile. A commit that fails is answered 2007
//     (never appended) or 1 SYSTEM_ERROR (leadership lost, timeout,
//     shutdown: the outcome is unknown, and the next decision waits for a
//     barrier so it cannot contradict the entry if it commits).
//   - Everything else: 3 REQUEST_CODE_NOT_SUPPORTED.
//
// # Who may ask
//
// Config.Auth is the NameServer's authorization policy (core/auth), and
// the code table (codes.go) gives each request its class: what brokers
// send in their run (904, 1001, 1003, 1013, a broker's own 1002) is a
// broker code, an operator's 1002 (designateElect), 1009 and 1011 are
// admin codes, 1010 a config read, and 1004, 1005, 1006, 1012 stay open. A refusal is the
// NameServer's NO_PERMISSION and changes nothing. Apart from the policy, a
// 904 never takes over a broker another connection holds unless it comes
// from the same host, the broker's heartbeats expired, or an account that
// owns the broker signed it (controller.Liveness.Record); and the state
// is bounded (MaxBrokerSets, MaxBrokersPerSet, MaxLiveBrokers,
// controller.MaxFieldBytes). Refusals are counted by reason (refusals.go).
//
// # Liveness and elections
//
// A broker leaves a node's table when its connection closes (all brokers
// of that connection at once) or when the expiry scan (every
// scanNotActiveBrokerInterval, on every node) finds its heartbeats
// expired, which also closes its connection. On the ready leader, losing a
// set's master queues a controller-triggered election (brokerId -1) for
// the writer at once: reacting to the close, not the timeout, is what
// makes failover take milliseconds. While it is the ready leader a node
// also runs the inactive-master scan (every scanInactiveMasterInterval,
// first one interval after becoming ready, so the table is warm). Every
// election that names a new master, whatever its trigger, is followed by a
// oneway 1008 to the live members' recorded addresses, if
// notifyBrokerRoleChanged: in parallel, over one pooled connection per
// address that stays open, a newer notice replacing a queued older one.
// An election whose commit timed out or lost the leadership may still
// have committed, with no notice sent: the leader announces such a master
// once its state is known to hold every committed entry (after the next
// barrier, and on becoming the ready leader, for elections applied in the
// last 30 s), which brokers ignore when they knew already.
//
// # Locks
//
// One discipline, in this order, never the reverse:
//
//  1. the writer goroutine: the only one that decides a write or an
//     election and applies it through raft, so decide -> commit -> apply
//     -> next is serial. It holds no lock across a raft Apply or any I/O.
//  2. FSM.mu (read-write) guards the controller.State: raft's goroutine
//     takes it to apply, snapshot and restore; decisions, reads, Stats and
//     Groups take it shared.
//  3. Server.liveMu guards the controller.Liveness: heartbeats, connection
//     closes and scans take it briefly; decisions take it inside FSM.mu
//     (they read both).
//
// Leaf locks (the notifier's, the election set's, the leadership scan's)
// are taken alone. ConnClosed hooks and scans never block: elections are
// queued, notices handed to their own goroutines.
//
// # Differences from Java 5.3.3
//
// A controller-triggered election retries only a failed commit (Java
// retries any answer but SUCCESS, which here would repeat the same
// decision); a closed connection drops every broker that heartbeated on
// it; UPDATE_CONTROLLER_CONFIG is all or nothing; the authorization,
// heartbeat and bound refusals above are not Java's (its controller has
// none). The other answers on the wire are Java's.
package ctlserver
