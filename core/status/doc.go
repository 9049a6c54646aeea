// Package status renders the human status pages: the NameServer's
// (clusters, brokers with their addresses, roles and heartbeat ages, topic
// counts, and a topic's route on request) and a controller node's (its raft
// view, and each broker set with its master, SyncStateSet, epochs and
// members). Server-rendered HTML, no JavaScript.
package status
