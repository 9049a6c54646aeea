// The controller bodies against the bytes a Java 5.3.3 controller and
// broker sent (core/controller/testdata/vectors), and the decoders'
// leniency and refusals.

package body

import (
	"reflect"
	"strings"
	"testing"
)

func TestAppendSyncStateSetRecorded(t *testing.T) {
	t.Parallel()
	f := func(ids []int64, epoch int32, want string) {
		t.Helper()
		if got := string(AppendSyncStateSet([]byte("x"), ids, epoch)); got != "x"+want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f(nil, 0, `{"syncStateSet":[],"syncStateSetEpoch":0}`)
	f([]int64{1}, 1, `{"syncStateSet":[1],"syncStateSetEpoch":1}`)
	f([]int64{1, 2}, 2, `{"syncStateSet":[1,2],"syncStateSetEpoch":2}`)
}

func TestDecodeSyncStateSet(t *testing.T) {
	t.Parallel()
	f := func(in string, want *SyncStateSet) {
		t.Helper()
		got, err := DecodeSyncStateSet([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", in, got, want)
		}
	}
	f(`{"syncStateSet":[1,2],"syncStateSetEpoch":1}`, &SyncStateSet{IDs: []int64{1, 2}, Epoch: 1})
	f(`{"syncStateSet":[],"syncStateSetEpoch":0}`, &SyncStateSet{IDs: []int64{}})
	// Numbers as strings, duplicates, any order, spaces, unknown members,
	// no epoch, a null epoch.
	f(`{"syncStateSet":["2","1",2],"syncStateSetEpoch":"3"}`, &SyncStateSet{IDs: []int64{1, 2}, Epoch: 3})
	f(` { "x" : {"y":[1]} , "syncStateSet" : [ 7 ] } `, &SyncStateSet{IDs: []int64{7}})
	f(`{"syncStateSet":[5],"syncStateSetEpoch":null}`, &SyncStateSet{IDs: []int64{5}})
	f(`null`, nil)

	bad := func(in string) {
		t.Helper()
		if got, err := DecodeSyncStateSet([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %+v", in, got)
		}
	}
	bad(``)
	bad(`{}`)
	bad(`{"syncStateSetEpoch":1}`)
	bad(`{"syncStateSet":null}`)
	bad(`{"syncStateSet":[null]}`)
	bad(`{"syncStateSet":[1.5]}`)
	bad(`{"syncStateSet":["a"]}`)
	bad(`{"syncStateSet":[99999999999999999999]}`)
	bad(`{"syncStateSet":[1],"syncStateSetEpoch":4294967296}`)
	bad(`{"syncStateSet":[1,]}`)
	bad(`{"syncStateSet":[1] 2}`)
	bad(`{"syncStateSet":{"a":1}}`)
	bad(`[1,2]`)
	bad(`{"syncStateSet":[1]`)
}

const (
	recordedElectFirst = `{"brokerMemberGroup":{"brokerAddrs":{1:"127.0.0.1:30911"},"brokerName":"broker-a","cluster":"DefaultCluster"},"syncStateSet":[1]}`
	recordedElectGhost = `{"brokerMemberGroup":{"brokerAddrs":{1:"127.0.0.1:39998",5:"127.0.0.1:39995"},"brokerName":"ghost-x","cluster":"DefaultCluster"},"syncStateSet":[1]}`
	recordedElectKept  = `{"syncStateSet":[1,2]}`
)

func TestElectMasterBodyRecorded(t *testing.T) {
	t.Parallel()
	f := func(g *MemberGroup, sss []int64, want string) {
		t.Helper()
		got := string(AppendElectMasterBody(nil, g, sss))
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		back, err := DecodeElectMasterBody([]byte(got))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, &ElectMasterBody{Group: g, SyncStateSet: sss}) {
			t.Errorf("decoded %+v", back)
		}
	}
	f(&MemberGroup{Cluster: "DefaultCluster", BrokerName: "broker-a", Addrs: []BrokerAddr{{1, "127.0.0.1:30911"}}},
		[]int64{1}, recordedElectFirst)
	// Ids out of order are written in order.
	f(&MemberGroup{Cluster: "DefaultCluster", BrokerName: "ghost-x", Addrs: []BrokerAddr{{1, "127.0.0.1:39998"}, {5, "127.0.0.1:39995"}}},
		[]int64{1}, recordedElectGhost)
	f(nil, []int64{1, 2}, recordedElectKept)
	if got := string(AppendElectMasterBody(nil, &MemberGroup{Cluster: "c", BrokerName: "n",
		Addrs: []BrokerAddr{{5, "b"}, {1, "a"}}}, []int64{5})); !strings.Contains(got, `{1:"a",5:"b"}`) {
		t.Errorf("unsorted addrs written as %s", got)
	}
	// Quoted keys (what Java also accepts) decode the same.
	back, err := DecodeElectMasterBody([]byte(`{"brokerMemberGroup":{"brokerAddrs":{"5":"b","1":"a"},"brokerName":"n","cluster":"c"}}`))
	if err != nil || len(back.Group.Addrs) != 2 || back.Group.Addrs[0].ID != 1 || len(back.SyncStateSet) != 0 {
		t.Errorf("quoted keys: %+v %v", back, err)
	}
	if _, err := DecodeElectMasterBody([]byte(`{"syncStateSet":{}}`)); err == nil {
		t.Errorf("a bad syncStateSet was accepted")
	}
}

// From ctl-errors.jsonl (opaques 130 and 156).
const (
	recordedReplicasA     = `{"replicasInfoTable":{"broker-a":{"inSyncReplicas":[{"alive":true,"brokerAddress":"127.0.0.1:30911","brokerId":1,"brokerName":"broker-a"},{"alive":true,"brokerAddress":"127.0.0.1:30921","brokerId":2,"brokerName":"broker-a"}],"masterAddress":"127.0.0.1:30911","masterBrokerId":1,"masterEpoch":1,"notInSyncReplicas":[],"syncStateSetEpoch":2}}}`
	recordedReplicasGhost = `{"replicasInfoTable":{"ghost-x":{"inSyncReplicas":[{"alive":false,"brokerAddress":"127.0.0.1:39998","brokerId":1,"brokerName":"ghost-x"}],"masterEpoch":2,"notInSyncReplicas":[{"alive":false,"brokerAddress":"127.0.0.1:39995","brokerId":5,"brokerName":"ghost-x"}],"syncStateSetEpoch":1}}}`
)

func TestBrokerReplicasInfoRecorded(t *testing.T) {
	t.Parallel()
	a := ReplicasInfo{
		BrokerName: "broker-a", HasMaster: true, MasterBrokerID: 1, HasMasterAddress: true, MasterAddress: "127.0.0.1:30911",
		MasterEpoch: 1, SyncStateSetEpoch: 2,
		InSync: []ReplicaIdentity{
			{BrokerName: "broker-a", BrokerID: 1, BrokerAddress: "127.0.0.1:30911", Alive: true},
			{BrokerName: "broker-a", BrokerID: 2, BrokerAddress: "127.0.0.1:30921", Alive: true},
		},
		NotInSync: []ReplicaIdentity{},
	}
	ghost := ReplicasInfo{
		BrokerName: "ghost-x", MasterEpoch: 2, SyncStateSetEpoch: 1,
		InSync:    []ReplicaIdentity{{BrokerName: "ghost-x", BrokerID: 1, BrokerAddress: "127.0.0.1:39998"}},
		NotInSync: []ReplicaIdentity{{BrokerName: "ghost-x", BrokerID: 5, BrokerAddress: "127.0.0.1:39995"}},
	}
	f := func(sets []ReplicasInfo, want string) {
		t.Helper()
		got := string(AppendBrokerReplicasInfo(nil, sets))
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		back, err := DecodeBrokerReplicasInfo([]byte(got))
		if err != nil {
			t.Fatal(err)
		}
		if want := sets; len(want) == 0 {
			want = []ReplicasInfo{}
			sets = want
		}
		if !reflect.DeepEqual(back, sets) {
			t.Errorf("decoded %+v\nwant    %+v", back, sets)
		}
	}
	f([]ReplicasInfo{a}, recordedReplicasA)
	f([]ReplicasInfo{ghost}, recordedReplicasGhost)
	f(nil, `{"replicasInfoTable":{}}`)
	f([]ReplicasInfo{a, ghost}, `{"replicasInfoTable":{"broker-a":`+recordedReplicasA[len(`{"replicasInfoTable":{"broker-a":`):len(recordedReplicasA)-2]+
		`,"ghost-x":`+recordedReplicasGhost[len(`{"replicasInfoTable":{"ghost-x":`):])
	if _, err := DecodeBrokerReplicasInfo([]byte(`{"replicasInfoTable":{"a":{"masterEpoch":"x"}}}`)); err == nil {
		t.Errorf("a bad masterEpoch was accepted")
	}
}

func TestBrokerNames(t *testing.T) {
	t.Parallel()
	f := func(in string, want ...string) {
		t.Helper()
		got, err := DecodeBrokerNames([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			return
		}
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	f(`["broker-a"]`, "broker-a")
	f(`["broker-a", "nosuch-x"]`, "broker-a", "nosuch-x") // as recorded
	f(` [ "a,b" ,"\u00e9\"" ] `, "a,b", `é"`)
	f(`[]`)
	bad := func(in string) {
		t.Helper()
		if got, err := DecodeBrokerNames([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %q", in, got)
		}
	}
	bad(``)
	bad(`{"a":1}`)
	bad(`["a",null]`)
	bad(`["a",1]`)
	bad(`["a"`)
	bad(`["a"] x`)
	bad(`["a" "b"]`)
	if got := string(AppendBrokerNames(nil, []string{"broker-a", "b\"c"})); got != `["broker-a","b\"c"]` {
		t.Errorf("AppendBrokerNames = %s", got)
	}
}

// From ctl-mqadmin-reads.jsonl: the master's 1007 reply.
const recordedEpochCache = `{"brokerId":0,"brokerName":"broker-a","clusterName":"DefaultCluster","epochList":[{"endOffset":9223372036854775807,"epoch":1,"startOffset":0}],"maxOffset":0}`

func TestEpochEntryCacheRecorded(t *testing.T) {
	t.Parallel()
	c := &EpochEntryCache{ClusterName: "DefaultCluster", BrokerName: "broker-a", BrokerID: 0,
		EpochList: []EpochEntry{{Epoch: 1, StartOffset: 0, EndOffset: 9223372036854775807}}}
	if got := string(AppendEpochEntryCache(nil, c)); got != recordedEpochCache {
		t.Errorf("got  %s\nwant %s", got, recordedEpochCache)
	}
	back, err := DecodeEpochEntryCache([]byte(recordedEpochCache))
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("decoded %+v, %v", back, err)
	}
	if back, err := DecodeEpochEntryCache([]byte(`{"brokerId":2}`)); err != nil || back.EpochList == nil {
		t.Errorf("no epoch list: %+v, %v", back, err)
	}
	if _, err := DecodeEpochEntryCache([]byte(`{"epochList":3}`)); err == nil {
		t.Errorf("a bad epochList was accepted")
	}
}

func FuzzDecodeControllerBodies(f *testing.F) {
	for _, s := range []string{
		`{"syncStateSet":[1,2],"syncStateSetEpoch":1}`, `{"syncStateSet":["2"],"syncStateSetEpoch":"3"}`,
		recordedElectFirst, recordedElectGhost, recordedElectKept,
		recordedReplicasA, recordedReplicasGhost, `["broker-a", "nosuch-x"]`, recordedEpochCache,
	} {
		f.Add([]byte(s))
	}
	// Each decoded value must encode to bytes that decode again, and be
	// stable from then on (the first round may turn invalid UTF-8 into
	// U+FFFD, as Java's decoding would have).
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeSyncStateSet(b); err == nil && s != nil {
			stable(t, "SyncStateSet", s, func(v *SyncStateSet) (*SyncStateSet, error) {
				return DecodeSyncStateSet(AppendSyncStateSet(nil, v.IDs, v.Epoch))
			})
		}
		if e, err := DecodeElectMasterBody(b); err == nil {
			stable(t, "ElectMasterBody", e, func(v *ElectMasterBody) (*ElectMasterBody, error) {
				return DecodeElectMasterBody(AppendElectMasterBody(nil, v.Group, v.SyncStateSet))
			})
		}
		if sets, err := DecodeBrokerReplicasInfo(b); err == nil {
			stable(t, "BrokerReplicasInfo", sets, func(v []ReplicasInfo) ([]ReplicasInfo, error) {
				return DecodeBrokerReplicasInfo(AppendBrokerReplicasInfo(nil, v))
			})
		}
		if names, err := DecodeBrokerNames(b); err == nil {
			stable(t, "broker names", names, func(v []string) ([]string, error) {
				return DecodeBrokerNames(AppendBrokerNames(nil, v))
			})
		}
		if c, err := DecodeEpochEntryCache(b); err == nil {
			stable(t, "EpochEntryCache", c, func(v *EpochEntryCache) (*EpochEntryCache, error) {
				return DecodeEpochEntryCache(AppendEpochEntryCache(nil, v))
			})
		}
	})
}

func stable[T any](t *testing.T, what string, v T, roundTrip func(T) (T, error)) {
	t.Helper()
	once, err := roundTrip(v)
	if err != nil {
		t.Fatalf("%s %+v: encoded form does not decode: %v", what, v, err)
	}
	twice, err := roundTrip(once)
	if err != nil || !reflect.DeepEqual(once, twice) {
		t.Fatalf("%s is not stable: %+v -> %+v (%v)", what, once, twice, err)
	}
}
