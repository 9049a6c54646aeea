// The FSM adapter: entries applied, corrupt ones refused without a change,
// snapshots that later applies leave alone and that restore elsewhere.

package ctlserver

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rocketns/rocketns/core/controller"
)

func TestFSM(t *testing.T) {
	f := NewFSM(testLogger(t))
	apply := func(index uint64, events ...controller.Event) {
		t.Helper()
		if res := f.Apply(index, controller.EncodeBatch(nil, events)); res != nil {
			t.Fatalf("apply %d: %v", index, res)
		}
	}
	apply(1, controller.Event{Type: controller.EventApplyBrokerID, Cluster: "C", BrokerName: "b", BrokerID: 1, Addr: "a:1", CheckCode: "a:1;1"})
	apply(2, controller.Event{Type: controller.EventElectMaster, BrokerName: "b", Elected: true, BrokerID: 1})
	apply(3) // a barrier
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(snap)

	// A corrupt entry is refused whole, as on every node.
	entry := controller.EncodeBatch(nil, []controller.Event{{Type: controller.EventElectMaster, BrokerName: "b"}})
	entry[len(entry)-1] ^= 1
	res := f.Apply(4, entry)
	if err, ok := res.(error); !ok || !errors.Is(err, controller.ErrCorrupt) {
		t.Fatalf("corrupt entry: %v", res)
	}
	apply(5, controller.Event{Type: controller.EventApplyBrokerID, Cluster: "C", BrokerName: "b", BrokerID: 2, Addr: "a:2", CheckCode: "a:2;1"})
	if !bytes.Equal(snap, kept) {
		t.Fatal("an apply changed an earlier snapshot's bytes")
	}

	g := NewFSM(testLogger(t))
	if err := g.Restore(snap); err != nil {
		t.Fatal(err)
	}
	var got controller.Group
	g.Read(func(st *controller.State) { got, _ = st.Group("b") })
	if !got.HasMaster || got.MasterID != 1 || got.MasterEpoch != 1 || len(got.Brokers) != 1 {
		t.Fatalf("restored %+v", got)
	}
	if err := g.Restore(snap[:len(snap)-1]); err == nil {
		t.Fatal("a truncated snapshot restored")
	}
	g.Read(func(st *controller.State) { got, _ = st.Group("b") })
	if !got.HasMaster || len(got.Brokers) != 1 {
		t.Fatalf("a failed restore changed the state: %+v", got)
	}
	f.Read(func(st *controller.State) { got, _ = st.Group("b") })
	if len(got.Brokers) != 2 || !got.HasMaster {
		t.Fatalf("applied %+v", got)
	}
}
