// The 1008 sender: one pooled connection per broker address, reused and
// replaced when broken, a queued notice superseded by a newer one, and a
// refused dial given up.

package ctlserver

import (
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func roleChange(name string, id int64, epoch int32) *controller.RoleChange {
	return &controller.RoleChange{Cluster: "C", BrokerName: name, MasterID: id, MasterAddr: "127.0.0.1:1", HasMasterAddr: true,
		MasterEpoch: epoch, SyncStateSetEpoch: epoch + 1}
}

func testNotifier(t *testing.T) *notifier {
	n := newNotifier(testLogger(t), 2*time.Second, 0)
	t.Cleanup(n.close)
	return n
}

func (n *notifier) idle(t *testing.T) {
	t.Helper()
	remotingtest.WaitFor(t, "the notifier idle", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, p := range n.peers {
			if p.running {
				return false
			}
		}
		return true
	})
}

func TestNotifierPoolsConnections(t *testing.T) {
	k := newSink(t)
	n := testNotifier(t)
	n.send(roleChange("b", 1, 1), []string{k.addr()})
	first := k.next(t)
	n.send(roleChange("b", 2, 2), []string{k.addr()})
	second := k.next(t)
	if first.conn != second.conn {
		t.Fatalf("second notice on connection %d, first on %d: not pooled", second.conn, first.conn)
	}
	if ext(&second.cmd, "masterEpoch") != "2" || second.cmd.Flag&2 == 0 {
		t.Fatalf("second notice %+v", second.cmd)
	}
	n.idle(t)
	if n.pooled() != 1 || n.sent.Load() != 2 {
		t.Fatalf("pooled %d sent %d", n.pooled(), n.sent.Load())
	}

	// The broker drops the connection (a restart, its idle timeout): a
	// later notice goes out on a new one. A write on a connection whose
	// close is not seen yet may be lost, so notices go on until one
	// arrives.
	if !k.srv.CloseConn(first.conn) {
		t.Fatal("the sink's connection is gone already")
	}
	for epoch := int32(3); ; epoch++ {
		n.send(roleChange("b", 1, epoch), []string{k.addr()})
		n.idle(t)
		select {
		case got := <-k.notices:
			if got.conn == first.conn {
				t.Fatal("a notice came on the closed connection")
			}
			return
		default:
		}
		if epoch == 100 {
			t.Fatal("no notice after the pooled connection broke")
		}
	}
}

// A notice still queued for an address is replaced by a newer one for the
// same set; other sets' notices keep their place.
func TestNotifierSupersedes(t *testing.T) {
	k := newSink(t)
	n := testNotifier(t)
	// The address's sender counts as busy, so the notices stay queued.
	p := &notifyPeer{addr: k.addr(), running: true}
	n.peers[k.addr()] = p
	n.send(roleChange("b", 1, 5), []string{k.addr()})
	n.send(roleChange("other", 1, 1), []string{k.addr()})
	n.send(roleChange("b", 2, 6), []string{k.addr()})
	n.send(roleChange("b", 1, 4), []string{k.addr()}) // older than what is queued
	n.wg.Add(1)
	go n.run(p)
	for _, want := range []struct{ name, id, epoch string }{{"b", "2", "6"}, {"other", "1", "1"}} {
		got := k.next(t)
		if ext(&got.cmd, "masterBrokerId") != want.id || ext(&got.cmd, "masterEpoch") != want.epoch {
			t.Fatalf("notice %v, want %+v", got.cmd.Ext, want)
		}
	}
	n.idle(t)
	select {
	case got := <-k.notices:
		t.Fatalf("a superseded notice was sent: %v", got.cmd.Ext)
	default:
	}
}

// A broker port that refuses the connection loses the notice: logged,
// counted, not retried.
func TestNotifierRefusedDial(t *testing.T) {
	addr := remotingtest.FreeAddrs(t, 1)[0]
	n := testNotifier(t)
	n.send(roleChange("b", 1, 1), []string{addr})
	n.idle(t)
	if n.failed.Load() != 1 || n.sent.Load() != 0 || n.pooled() != 0 {
		t.Fatalf("failed %d sent %d pooled %d", n.failed.Load(), n.sent.Load(), n.pooled())
	}
	// One election's notices go to each address independently.
	k := newSink(t)
	n.send(roleChange("b", 2, 2), []string{addr, k.addr()})
	if got := k.next(t); ext(&got.cmd, "masterBrokerId") != "2" {
		t.Fatalf("notice %v", got.cmd.Ext)
	}
	n.idle(t)
	if n.failed.Load() != 2 || n.sent.Load() != 1 {
		t.Fatalf("failed %d sent %d", n.failed.Load(), n.sent.Load())
	}
}
