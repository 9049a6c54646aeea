// regslots_test.go checks the registration slots: small registrations take
// none, a freed slot goes to the cheapest waiter, and large ones are not
// starved.

package server

import (
	"slices"
	"testing"
	"time"
)

func TestPickNext(t *testing.T) {
	w := func(cost, passed int) *regWaiter { return &regWaiter{cost: cost, passed: passed} }
	f := func(want int, ws ...*regWaiter) {
		t.Helper()
		if got := pickNext(ws); got != want {
			t.Fatalf("picked %d, want %d", got, want)
		}
	}
	f(0, w(100, 0))
	f(2, w(900, 0), w(500, 0), w(100, 0))
	f(0, w(100, 0), w(900, 0), w(100, 0)) // the oldest of equals
	f(1, w(100, 0), w(900, maxPassed), w(50, 0))
}

// slotOrder acquires the single slot, queues registrations of the given
// costs one at a time (waiting for each to be queued, so the queue order is
// the list's), then releases and records who got the slot in what order.
func slotOrder(t *testing.T, costs ...int) []int {
	t.Helper()
	q := newRegSlots(1)
	if !q.acquire(nil, smallRegistration) {
		t.Fatal("a large registration took no slot")
	}
	got := make(chan int, len(costs))
	for i, c := range costs {
		go func() {
			q.acquire(nil, c)
			got <- i
		}()
		for end := time.Now().Add(10 * time.Second); q.waitingCount() != i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("registration %d never queued", i)
			}
		}
	}
	var order []int
	for range costs {
		q.release()
		order = append(order, <-got)
	}
	q.release()
	return order
}

func TestRegSlotsServeTheCheapestFirst(t *testing.T) {
	if q := newRegSlots(1); q.acquire(nil, smallRegistration-1) {
		t.Fatal("a small registration took a slot")
	}
	const big, medium = 8 << 20, 100 << 10
	order := slotOrder(t, big, big, medium, big)
	if want := []int{2, 0, 1, 3}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	// A big one queued first is passed over at most maxPassed times.
	costs := []int{big}
	for range maxPassed + 2 {
		costs = append(costs, medium)
	}
	order = slotOrder(t, costs...)
	if pos := slices.Index(order, 0); pos != maxPassed {
		t.Fatalf("the big registration went at position %d (%v), want %d", pos, order, maxPassed)
	}
}
