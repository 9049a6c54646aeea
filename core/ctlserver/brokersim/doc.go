// Package brokersim is a simulated RocketMQ 5.3.x broker in controller
// mode, as far as a controller sees one: its start-up sequence, its
// periodic heartbeats, polls and leader refreshes, its role changes, and a
// listening port that receives NOTIFY_BROKER_ROLE_CHANGED.
//
// It follows §3.2 and §3.4 of the controller reference: leader discovery
// with 1005, then 1012 -> 1013 for a broker without an id, 1003, one 904
// to every controller, 1002 if no master is known yet; once running,
// oneway 904 to every controller, 1004 to the leader (adopting a higher
// masterEpoch, asking for an election when the master was cleared) and
// 1005 refreshes. A 1008 is adopted when its masterEpoch is higher, as
// the Java broker does. It stores no messages: offsets are 0, and the
// heartbeat's epoch is the masterEpoch it last adopted (-1 before).
//
// Beside the controller it answers GET_BROKER_EPOCH_CACHE (1007) on its
// port and, given NameServer addresses, registers with them (103) as
// brokerId 0 while master, as a controller-mode Java broker does, so the
// routes a NameServer serves follow the elections.
//
// Tests and benchmarks drive it: Start, Kill (every connection closes at
// once, like kill -9), Start again (the broker keeps its id, as its
// brokerIdentity file does), AlterSyncStateSet as the master, and the
// received notices.
package brokersim
