// Tests of the admin broker snapshot.

package route

import (
	"fmt"
	"strings"
	"testing"
)

func statusString(ss []BrokerStatus) string {
	var sb strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&sb, "%s/%s/%d %s %s", s.Cluster, s.BrokerName, s.ID, s.Addr, s.Role)
		if s.Live {
			fmt.Fprintf(&sb, " up=%d t=%d ha=%s conn=%d", s.LastUpdate, s.Timeout, s.HAServerAddr, s.Conn)
		} else {
			sb.WriteString(" dead")
		}
		if s.Zone != "" {
			sb.WriteString(" @" + s.Zone)
		}
		if s.ActingMaster {
			sb.WriteString(" *")
		}
		if s.ActsAsMaster {
			sb.WriteString(" acts")
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func checkStatus(t *testing.T, tb *Table, want string) {
	t.Helper()
	if got := statusString(tb.BrokerStatus()); got != want {
		t.Fatalf("broker status:\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestBrokerStatusEmpty(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	if got := tb.BrokerStatus(); len(got) != 0 {
		t.Fatalf("empty table: got %v", got)
	}
}

func TestBrokerStatus(t *testing.T) {
	t.Parallel()
	tb, clk := newTable(Options{})

	r := reg("b", "b0", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
	r.Cluster, r.ZoneName, r.Conn = "d", "z1", 9
	mustRegister(t, tb, r)

	clk.ms += 1000
	r = reg("a", "a1", 1, 1)
	r.HeartbeatTimeoutMillis, r.Conn = 30000, 8
	mustRegister(t, tb, r)

	clk.ms += 1000
	r = reg("a", "a0", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
	r.Conn = 7
	mustRegister(t, tb, r)

	// Sorted by cluster, brokerName, id, not by registration order.
	checkStatus(t, tb, ""+
		"c/a/0 a0 master up=1002000 t=120000 ha=ha-a0 conn=7\n"+
		"c/a/1 a1 slave up=1001000 t=30000 ha=ha-a1 conn=8\n"+
		"d/b/0 b0 master up=1000000 t=120000 ha=ha-b0 conn=9 @z1\n")

	// A heartbeat moves only its broker's time.
	clk.ms += 5000
	if !tb.Heartbeat("c", "a1") {
		t.Fatal("heartbeat of a registered broker refused")
	}
	checkStatus(t, tb, ""+
		"c/a/0 a0 master up=1002000 t=120000 ha=ha-a0 conn=7\n"+
		"c/a/1 a1 slave up=1007000 t=30000 ha=ha-a1 conn=8\n"+
		"d/b/0 b0 master up=1000000 t=120000 ha=ha-b0 conn=9 @z1\n")

	// The slave's 30 s timeout runs out first.
	clk.ms = 1007000 + 30001
	if evs := tb.ScanExpired(); len(evs) != 1 || evs[0].BrokerAddr != "a1" {
		t.Fatalf("scan: got %+v, want a1 evicted", evs)
	}
	checkStatus(t, tb, ""+
		"c/a/0 a0 master up=1002000 t=120000 ha=ha-a0 conn=7\n"+
		"d/b/0 b0 master up=1000000 t=120000 ha=ha-b0 conn=9 @z1\n")

	// A closed connection takes its broker away.
	tb.ConnClosed(9)
	checkStatus(t, tb, "c/a/0 a0 master up=1002000 t=120000 ha=ha-a0 conn=7\n")
}

func TestBrokerStatusActingMaster(t *testing.T) {
	t.Parallel()
	f := func(support bool, want string) {
		t.Helper()
		tb, _ := newTable(Options{SupportActingMaster: support})
		mustRegister(t, tb, reg5("a", "a2", 2, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("a", "a1", 1, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("b", "b1", 1, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
		checkStatus(t, tb, want)
	}
	f(true, ""+
		"c/a/1 a1 slave up=1000000 t=120000 ha=ha-a1 conn=0 * acts\n"+
		"c/a/2 a2 slave up=1000000 t=120000 ha=ha-a2 conn=0 *\n"+
		"c/b/1 b1 slave up=1000000 t=120000 ha=ha-b1 conn=0\n")
	f(false, ""+
		"c/a/1 a1 slave up=1000000 t=120000 ha=ha-a1 conn=0 *\n"+
		"c/a/2 a2 slave up=1000000 t=120000 ha=ha-a2 conn=0 *\n"+
		"c/b/1 b1 slave up=1000000 t=120000 ha=ha-b1 conn=0\n")
}

// A group keeps the cluster of its first registration; a later one naming
// another cluster files its live entry there, and the snapshot still finds
// it.
func TestBrokerStatusLiveUnderOtherCluster(t *testing.T) {
	t.Parallel()
	tb, clk := newTable(Options{})
	mustRegister(t, tb, reg("a", "a0", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	clk.ms += 3000
	r := reg("a", "a1", 1, 1)
	r.Cluster = "x"
	mustRegister(t, tb, r)
	checkStatus(t, tb, ""+
		"c/a/0 a0 master up=1000000 t=120000 ha=ha-a0 conn=0\n"+
		"c/a/1 a1 slave up=1003000 t=120000 ha=ha-a1 conn=0\n")
}

// The snapshot is a copy: changing it leaves the table alone.
func TestBrokerStatusIsCopy(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "a0", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	ss := tb.BrokerStatus()
	ss[0].Addr, ss[0].BrokerName = "zz", "zz"
	checkStatus(t, tb, "c/a/0 a0 master up=1000000 t=120000 ha=ha-a0 conn=0\n")
}
