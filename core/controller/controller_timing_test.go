// Benchmarks: a heartbeat (the per-broker, per-second, per-node cost), the
// decisions brokers ask for most, the log-entry codec and a snapshot.

package controller

import (
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

// benchState has n broker sets of three brokers each, masters elected, all
// alive in the returned table.
func benchState(n int) (*State, *Liveness) {
	s, live := NewState(), NewLiveness()
	for i := range n {
		name := "broker-" + strconv.Itoa(i)
		for id := int64(1); id <= 3; id++ {
			addr := "10.0." + strconv.Itoa(i%250) + "." + strconv.FormatInt(id, 10) + ":30911"
			s.Apply(Event{Type: EventApplyBrokerID, Cluster: "DefaultCluster", BrokerName: name, BrokerID: id, Addr: addr, CheckCode: addr + ";1"})
			hb := Heartbeat{ClusterName: "DefaultCluster", BrokerName: name, BrokerID: id, HasBrokerID: true,
				BrokerAddr: addr, Epoch: 1, MaxOffset: 100, TimeoutMillis: 10000, ElectionPriority: DefaultElectionPriority}
			live.Heartbeat(&hb, uint64(i*4)+uint64(id), 1000)
		}
		s.Apply(Event{Type: EventElectMaster, BrokerName: name, Elected: true, BrokerID: 1},
			Event{Type: EventAlterSyncStateSet, BrokerName: name, IDs: []int64{1, 2, 3}})
	}
	return s, live
}

// BenchmarkHeartbeat is one recorded 904 frame decoded, parsed and
// recorded, for a known broker in a table of 3000.
func BenchmarkHeartbeat(b *testing.B) {
	frame := heartbeatFrame(b)
	_, live := benchState(1000)
	var cmd codec.Command
	var hb Heartbeat
	if err := codec.Decode(frame, &cmd); err != nil {
		b.Fatal(err)
	}
	ParseHeartbeat(&cmd, &hb)
	live.Heartbeat(&hb, 1, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := codec.Decode(frame, &cmd); err != nil {
			b.Fatal(err)
		}
		ParseHeartbeat(&cmd, &hb)
		live.Heartbeat(&hb, 1, int64(1000+i))
	}
}

// BenchmarkHeartbeatUpdate is the liveness update alone.
func BenchmarkHeartbeatUpdate(b *testing.B) {
	_, live := benchState(1000)
	hb := Heartbeat{ClusterName: "DefaultCluster", BrokerName: "broker-500", BrokerID: 2, HasBrokerID: true,
		BrokerAddr: "10.0.0.2:30911", Epoch: 1, MaxOffset: 100, TimeoutMillis: 10000, ElectionPriority: DefaultElectionPriority}
	live.Heartbeat(&hb, 2002, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		hb.MaxOffset = int64(100 + i)
		live.Heartbeat(&hb, 2002, int64(1000+i))
	}
}

func benchDecide(b *testing.B, code int32, f Fields, body []byte) {
	s, live := benchState(1000)
	env := Env{Live: live, Now: 2000}
	if d, ok := s.decide(code, f, body, env); !ok || d.Reply.Code == codec.SystemError {
		b.Fatalf("setup: %+v", d.Reply)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.decide(code, f, body, env)
	}
}

// BenchmarkDecideGetReplicaInfo is the 1004 every broker sends every 5 s.
func BenchmarkDecideGetReplicaInfo(b *testing.B) {
	benchDecide(b, codec.ControllerGetReplicaInfo, MapFields{"brokerName": "broker-500"}, nil)
}

// BenchmarkDecideElectMasterKept is a 1002 answered 2011.
func BenchmarkDecideElectMasterKept(b *testing.B) {
	benchDecide(b, codec.ControllerElectMaster, MapFields{"clusterName": "DefaultCluster", "brokerName": "broker-500",
		"brokerId": "2", "designateElect": "false"}, nil)
}

// BenchmarkDecideElectMasterNew is an admin election that moves the master
// (decided only: the state is not changed, so every round elects again).
func BenchmarkDecideElectMasterNew(b *testing.B) {
	benchDecide(b, codec.ControllerElectMaster, MapFields{"clusterName": "DefaultCluster", "brokerName": "broker-500",
		"brokerId": "3", "designateElect": "true"}, nil)
}

// BenchmarkDecideAlterSyncStateSet is a master's shrink of its set.
func BenchmarkDecideAlterSyncStateSet(b *testing.B) {
	benchDecide(b, codec.ControllerAlterSyncStateSet, MapFields{"brokerName": "broker-500", "masterBrokerId": "1",
		"masterEpoch": "1"}, []byte(`{"syncStateSet":[1,2],"syncStateSetEpoch":2}`))
}

// BenchmarkCommitAlter is what a follower does per write: decode the entry
// and apply it.
func BenchmarkCommitAlter(b *testing.B) {
	s, _ := benchState(1000)
	entry := EncodeBatch(nil, []Event{{Type: EventAlterSyncStateSet, BrokerName: "broker-500", IDs: []int64{1, 2}}})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.ApplyEntry(entry); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot encodes 1000 sets of three brokers.
func BenchmarkSnapshot(b *testing.B) {
	s, _ := benchState(1000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Snapshot()
	}
}

// BenchmarkRestore decodes the same snapshot.
func BenchmarkRestore(b *testing.B) {
	s, _ := benchState(1000)
	snap := s.Snapshot()
	r := NewState()
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := r.Restore(snap); err != nil {
			b.Fatal(err)
		}
	}
}
