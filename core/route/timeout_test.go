// Tests of the heartbeat timeout a broker registers with: capped, and its
// expiry computed without overflow.

package route

import (
	"math"
	"testing"
)

// heartbeatTimeoutMillis near 2^63 overflowed lastUpdate+timeout, so the
// broker expired at the next scan while connected and heartbeating.
func TestHugeHeartbeatTimeoutDoesNotExpireAtOnce(t *testing.T) {
	t.Parallel()
	for _, timeout := range []int64{math.MaxInt64, math.MaxInt64 - 5, 1 << 62} {
		tb, clk := newTable(Options{})
		r := reg("a", "a0:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
		r.HeartbeatTimeoutMillis = timeout
		mustRegister(t, tb, r)
		clk.ms += 1000
		if evs := tb.ScanExpired(); len(evs) != 0 {
			t.Fatalf("timeout %d: evicted at once: %+v", timeout, evs)
		}
		// Capped at the default maximum: gone once that has passed.
		clk.ms += DefaultMaxBrokerTimeout
		if evs := tb.ScanExpired(); len(evs) != 1 {
			t.Fatalf("timeout %d: not evicted after the cap: %+v", timeout, evs)
		}
	}
}

func TestHeartbeatTimeoutCap(t *testing.T) {
	t.Parallel()
	f := func(opts Options, sent, want int64) {
		t.Helper()
		tb, _ := newTable(opts)
		r := reg("a", "a0:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
		r.HeartbeatTimeoutMillis = sent
		mustRegister(t, tb, r)
		if got := tb.live[addrKey{cluster: "c", addr: "a0:1"}].timeout; got != want {
			t.Fatalf("sent %d, cap %d: timeout %d, want %d", sent, opts.MaxBrokerTimeout, got, want)
		}
	}
	f(Options{}, 0, DefaultBrokerTimeout)
	f(Options{}, 10000, 10000)
	f(Options{}, DefaultMaxBrokerTimeout+1, DefaultMaxBrokerTimeout)
	f(Options{MaxBrokerTimeout: 30000}, 60000, 30000)
	// The default for an absent field obeys the cap too.
	f(Options{MaxBrokerTimeout: 30000}, 0, 30000)
}

func TestDeadlineSaturates(t *testing.T) {
	t.Parallel()
	f := func(last, timeout, want int64) {
		t.Helper()
		li := &liveInfo{lastUpdate: last, timeout: timeout}
		if got := li.deadline(); got != want {
			t.Fatalf("deadline(%d, %d) = %d, want %d", last, timeout, got, want)
		}
	}
	f(1000, 500, 1500)
	f(math.MaxInt64-10, 100, math.MaxInt64)
	f(1, math.MaxInt64, math.MaxInt64)
}
