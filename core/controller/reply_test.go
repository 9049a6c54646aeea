// The 1008 notification against the one a Java controller sent after a
// failover, who receives it, and filling a response command.

package controller

import (
	"slices"
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

// The whole 1008 header and body recorded after a failover (reference
// §3.5, ctl-failover.jsonl): master 2 elected, masterEpoch 2, set epoch 3.
const (
	recordedNotifyHeader = `{"code":1008,"extFields":{"masterAddress":"127.0.0.1:30921","masterBrokerId":"2","syncStateSetEpoch":"3","masterEpoch":"2"},"flag":2,"language":"JAVA","opaque":720,"serializeTypeCurrentRPC":"JSON","version":0}`
	recordedNotifyBody   = `{"syncStateSet":[2],"syncStateSetEpoch":3}`
)

func TestNotifyCommandRecorded(t *testing.T) {
	t.Parallel()
	s, live := NewState(), NewLiveness()
	for id := int64(1); id <= 2; id++ {
		addr := "127.0.0.1:309" + strconv.FormatInt(id, 10) + "1"
		s.Apply(Event{Type: EventApplyBrokerID, Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: id, Addr: addr, CheckCode: addr + ";1"})
		hb := Heartbeat{ClusterName: "DefaultCluster", BrokerName: "broker-a", BrokerID: id, HasBrokerID: true, BrokerAddr: addr, TimeoutMillis: 10000}
		live.Heartbeat(&hb, uint64(id), 1000)
	}
	s.Apply(Event{Type: EventElectMaster, BrokerName: "broker-a", Elected: true, BrokerID: 1},
		Event{Type: EventAlterSyncStateSet, BrokerName: "broker-a", IDs: []int64{1, 2}})
	live.ConnClosed(1) // the master is killed
	d := s.ControllerElect("broker-a", Env{Live: live, Now: 2000})
	rc := d.RoleChange
	if d.Reply.Code != codec.Success || rc == nil {
		t.Fatalf("election: %+v", d.Reply)
	}
	if got := rc.Targets(live, 2000); !slices.Equal(got, []string{"127.0.0.1:30921"}) {
		t.Errorf("targets %v, want only the live broker", got)
	}
	c := codec.Command{Ext: []codec.Field{{Key: "stale", Value: "x"}}, Remark: "stale"}
	rc.NotifyCommand(&c)
	c.Opaque, c.Version, c.Language = 720, 0, codec.LanguageJava
	if got := string(codec.AppendHeader(nil, &c)); got != recordedNotifyHeader {
		t.Errorf("header\n got %s\nwant %s", got, recordedNotifyHeader)
	}
	if string(c.Body) != recordedNotifyBody {
		t.Errorf("body %s, want %s", c.Body, recordedNotifyBody)
	}
}

// The announcement of a set's current master is the 1008 of the election
// that named it, with the SyncStateSet as it is now.
func TestMasterRoleChange(t *testing.T) {
	t.Parallel()
	s := NewState()
	if _, ok := s.MasterRoleChange("broker-a"); ok {
		t.Fatal("a role change for an unknown set")
	}
	s.Apply(Event{Type: EventApplyBrokerID, Cluster: "C", BrokerName: "broker-a", BrokerID: 1, Addr: "h:1", CheckCode: "h:1;1"},
		Event{Type: EventApplyBrokerID, Cluster: "C", BrokerName: "broker-a", BrokerID: 2, Addr: "h:2", CheckCode: "h:2;1"})
	if _, ok := s.MasterRoleChange("broker-a"); ok {
		t.Fatal("a role change for a set without a master")
	}
	d := s.ElectMaster(ElectMasterRequest{BrokerName: "broker-a", BrokerID: 2}, Env{})
	s.Apply(d.Events...)
	elected, _ := s.MasterRoleChange("broker-a")
	var want, got codec.Command
	d.RoleChange.NotifyCommand(&want)
	elected.NotifyCommand(&got)
	if string(codec.AppendHeader(nil, &got)) != string(codec.AppendHeader(nil, &want)) || string(got.Body) != string(want.Body) {
		t.Fatalf("announcement %v %s, election's %v %s", got.Ext, got.Body, want.Ext, want.Body)
	}
	s.Apply(Event{Type: EventAlterSyncStateSet, BrokerName: "broker-a", IDs: []int64{1, 2}})
	rc, _ := s.MasterRoleChange("broker-a")
	rc.NotifyCommand(&got)
	if string(got.Body) != `{"syncStateSet":[1,2],"syncStateSetEpoch":2}` || rc.MasterEpoch != 1 || len(rc.Members) != 2 {
		t.Fatalf("after the set grew: %+v body %s", rc, got.Body)
	}
}

func TestRoleChangeTargets(t *testing.T) {
	t.Parallel()
	live := NewLiveness()
	for _, k := range []LiveKey{{"C", "a", 1}, {"C", "a", 2}, {"C", "a", 3}, {"Other", "a", 4}, {"C", "a", 5}} {
		hb := Heartbeat{ClusterName: k.Cluster, BrokerName: k.BrokerName, BrokerID: k.BrokerID, HasBrokerID: true, TimeoutMillis: 100}
		live.Heartbeat(&hb, 1, 1000)
	}
	rc := &RoleChange{Cluster: "C", BrokerName: "a", MasterID: 1, Members: []body.BrokerAddr{
		{ID: 1, Addr: "h:1"}, {ID: 2, Addr: "h:1"}, // two ids on one address: notified once
		{ID: 3, Addr: ""},    // no address to dial
		{ID: 4, Addr: "h:4"}, // alive, but under another cluster
		{ID: 5, Addr: "h:5"},
		{ID: 6, Addr: "h:6"}, // never heartbeated
	}}
	if got := rc.Targets(live, 1100); !slices.Equal(got, []string{"h:1", "h:5"}) {
		t.Errorf("targets %v", got)
	}
	if got := rc.Targets(live, 1101); len(got) != 0 {
		t.Errorf("targets after the timeout %v", got)
	}
	if got := rc.Targets(nil, 0); len(got) != 0 {
		t.Errorf("targets without a liveness table %v", got)
	}
	// Without a recorded address the header has no masterAddress.
	ext := (&RoleChange{MasterID: 9, MasterEpoch: 1, SyncStateSetEpoch: 1}).NotifyExt()
	if len(ext) != 3 || ext[0].Key != "masterBrokerId" {
		t.Errorf("ext without address: %v", ext)
	}
}

func TestReplyFill(t *testing.T) {
	t.Parallel()
	c := codec.Command{Code: 7, Remark: "old", HasExt: true, Ext: []codec.Field{{Key: "a", Value: "b"}}, Body: []byte("x"), Opaque: 5}
	r := Reply{Code: codec.ControllerInvalidCleanBrokerMetadata, Remark: "Broker b is still alive, clean up failure"}
	r.Fill(&c)
	if c.Code != r.Code || c.Remark != r.Remark || c.HasExt || len(c.Ext) != 0 || c.Body != nil || c.Opaque != 5 {
		t.Errorf("filled %+v", c)
	}
	r = Reply{Code: 0, HasExt: true, Ext: []codec.Field{}}
	r.Fill(&c)
	if got := string(codec.AppendHeader(nil, &c)); got != `{"code":0,"extFields":{},"flag":0,"language":"JAVA","opaque":5,"serializeTypeCurrentRPC":"JSON","version":0}` {
		t.Errorf("header %s", got)
	}
}
