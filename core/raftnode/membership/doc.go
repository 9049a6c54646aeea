// Package membership reads a controller group's members from the Java
// controller's configuration keys, DLedger style or jRaft style, and checks
// them.
//
// It holds pure functions over a key lookup so the configuration layer can
// call it without a raft engine in sight. The result names, for every peer,
// the raft server id, the address raft traffic goes to and the address
// brokers and mqadmin talk to:
//
//   - DLedger style (controllerDLegerGroup, controllerDLegerPeers,
//     controllerDLegerSelfId): one port per node carries both, so the
//     broker-facing address is the raft address, the one given after the id
//     in controllerDLegerPeers.
//   - jRaft style (controllerType=jRaft, jRaftGroupId, jRaftServerId,
//     jRaftInitConf, jRaftControllerRPCAddr): raft runs on the jRaftInitConf
//     addresses, the i-th jRaftControllerRPCAddr entry is the broker-facing
//     address of the i-th peer, and a peer's id is its jRaftInitConf text, as
//     Java's PeerId prints it in the metadata reply.
//
// Missing keys fail with Java's own messages; every other error names the key
// and the offending value.
package membership
