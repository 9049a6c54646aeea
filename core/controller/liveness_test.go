// liveness_test.go checks the liveness table's arithmetic at the edges of
// int64, where a broker-supplied timeout must not turn a live broker dead.

package controller

import (
	"math"
	"testing"
)

func TestLivenessHugeTimeoutStaysAlive(t *testing.T) {
	t.Parallel()
	l := NewLiveness()
	hb := &Heartbeat{ClusterName: "c", BrokerName: "b", BrokerAddr: "127.0.0.1:10911",
		BrokerID: 1, HasBrokerID: true, Epoch: -1, MaxOffset: -1, ConfirmOffset: -1,
		TimeoutMillis: math.MaxInt64 - 5}
	const now = 1_700_000_000_000
	l.Heartbeat(hb, 7, now)
	k := LiveKey{Cluster: "c", BrokerName: "b", BrokerID: 1}
	if !l.Alive(k, now+1000) {
		t.Fatal("a broker with a timeout near 2^63 is reported dead a second after its heartbeat")
	}
	if n := l.CountAlive(now + 1000); n != 1 {
		t.Fatalf("CountAlive = %d, want 1", n)
	}
	if out := l.Expire(now + 1000); len(out) != 0 {
		t.Fatalf("Expire removed %v", out)
	}
}

func TestLivenessTimeoutBoundary(t *testing.T) {
	t.Parallel()
	l := NewLiveness()
	hb := &Heartbeat{ClusterName: "c", BrokerName: "b", BrokerID: 0, HasBrokerID: true, TimeoutMillis: 100}
	l.Heartbeat(hb, 1, 1000)
	k := LiveKey{Cluster: "c", BrokerName: "b", BrokerID: 0}
	if !l.Alive(k, 1100) || l.Alive(k, 1101) {
		t.Fatal("alive must hold up to lastUpdate+timeout inclusive, as Java")
	}
}
