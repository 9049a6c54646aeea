// Randomized tests of UpdateMany against a plain map, and of concurrent
// writers of overlapping keys.

package shard

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// Random batches, duplicate keys and every action included, applied to the
// table and, key by key in batch order, to a map: fn must see the value as
// left by the earlier keys of its batch, and the table must end as the map.
func TestUpdateManyMatchesMapModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		tb := New[int](1 << rng.IntN(4))
		ref := map[string]int{}
		for range 200 {
			n := rng.IntN(6)
			keys := make([]string, n)
			acts := make([]Action, n)
			vals := make([]int, n)
			for j := range keys {
				keys[j] = "k" + strconv.Itoa(rng.IntN(12))
				acts[j] = Action(rng.IntN(3))
				vals[j] = rng.IntN(1000)
			}
			type seen struct {
				v  int
				ok bool
			}
			got := make([]seen, n)
			tb.UpdateMany(keys, func(j int, _ string, old int, ok bool) (int, Action) {
				got[j] = seen{old, ok}
				return vals[j], acts[j]
			})
			for j, k := range keys {
				v, ok := ref[k]
				if got[j] != (seen{v, ok}) {
					t.Fatalf("seed %d: fn saw %s = %+v, want %v %v", seed, k, got[j], v, ok)
				}
				switch acts[j] {
				case Store:
					ref[k] = vals[j]
				case Delete:
					delete(ref, k)
				}
			}
			if tb.Len() != len(ref) {
				t.Fatalf("seed %d: Len %d, want %d", seed, tb.Len(), len(ref))
			}
			all := map[string]int{}
			tb.Range(func(k string, v int) bool {
				all[k] = v
				return true
			})
			if !maps.Equal(all, ref) {
				t.Fatalf("seed %d: table %v, want %v", seed, all, ref)
			}
			for k, v := range ref {
				if g, ok := tb.Load(k); !ok || g != v {
					t.Fatalf("seed %d: Load(%s) = %d %v, want %d", seed, k, g, ok, v)
				}
			}
		}
	}
}

// Writers whose batches span shards and share keys serialise per shard:
// no increment is lost, while readers walk and load throughout.
func TestConcurrentWritersLoseNoUpdate(t *testing.T) {
	t.Parallel()
	const writers, batches = 4, 3000
	tb := New[int](4)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				keys := []string{"a" + strconv.Itoa(i%7), "b" + strconv.Itoa(i%5), "c"}
				tb.UpdateMany(keys, func(_ int, _ string, old int, _ bool) (int, Action) { return old + 1, Store })
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range batches {
				tb.Range(func(string, int) bool { return true })
				tb.Load("c")
			}
		}()
	}
	wg.Wait()
	if v, _ := tb.Load("c"); v != writers*batches {
		t.Fatalf("c = %d, want %d", v, writers*batches)
	}
	sum := 0
	tb.Range(func(_ string, v int) bool {
		sum += v
		return true
	})
	if sum != 3*writers*batches {
		t.Fatalf("sum %d, want %d", sum, 3*writers*batches)
	}
}
