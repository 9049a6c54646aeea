// Tests of Table: update semantics, batching, and lock-free reads under a
// concurrent writer.

package shard

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
)

func TestNewRoundsShards(t *testing.T) {
	t.Parallel()
	f := func(n, want int) {
		t.Helper()
		if got := len(New[int](n).shards); got != want {
			t.Fatalf("New(%d): %d shards, want %d", n, got, want)
		}
	}
	f(0, DefaultShards)
	f(-3, DefaultShards)
	f(1, 1)
	f(3, 4)
	f(64, 64)
	f(65, 128)
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	tb := New[int](4)
	put := func(k string, v int) {
		tb.Update(k, func(int, bool) (int, Action) { return v, Store })
	}
	put("a", 1)
	put("b", 2)
	put("a", 3)
	if v, ok := tb.Load("a"); !ok || v != 3 {
		t.Fatalf("a = %d,%v; want 3,true", v, ok)
	}
	if _, ok := tb.Load("zz"); ok {
		t.Fatalf("zz found")
	}
	tb.Update("a", func(old int, ok bool) (int, Action) {
		if !ok || old != 3 {
			t.Fatalf("fn saw %d,%v; want 3,true", old, ok)
		}
		return 0, Delete
	})
	if _, ok := tb.Load("a"); ok {
		t.Fatalf("a still present after Delete")
	}
	tb.Update("missing", func(int, bool) (int, Action) { return 0, Delete })
	if tb.Len() != 1 {
		t.Fatalf("Len = %d, want 1", tb.Len())
	}
}

func TestUnchangedDoesNotRepublish(t *testing.T) {
	t.Parallel()
	tb := New[int](1)
	tb.Update("a", func(int, bool) (int, Action) { return 1, Store })
	before := tb.shards[0].snap.Load()
	tb.Update("a", func(int, bool) (int, Action) { return 9, Unchanged })
	tb.UpdateMany([]string{"a", "b"}, func(int, string, int, bool) (int, Action) { return 9, Unchanged })
	tb.UpdateMany([]string{"x", "y"}, func(int, string, int, bool) (int, Action) { return 0, Delete })
	if tb.shards[0].snap.Load() != before {
		t.Fatalf("shard republished by a batch that changed nothing")
	}
	if v, _ := tb.Load("a"); v != 1 {
		t.Fatalf("a = %d, want 1", v)
	}
}

func TestUpdateManyCopiesEachShardOnce(t *testing.T) {
	t.Parallel()
	tb := New[int](8)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	snaps := func() map[*snapshot[int]]bool {
		m := map[*snapshot[int]]bool{}
		for i := range tb.shards {
			m[tb.shards[i].snap.Load()] = true
		}
		return m
	}
	before := snaps()
	calls := 0
	tb.UpdateMany(keys, func(i int, key string, old int, ok bool) (int, Action) {
		calls++
		if key != keys[i] {
			t.Fatalf("fn(%d) got key %q, want %q", i, key, keys[i])
		}
		return i, Store
	})
	if calls != len(keys) {
		t.Fatalf("fn called %d times, want %d", calls, len(keys))
	}
	after := snaps()
	for p := range after {
		if before[p] {
			t.Fatalf("a shard was not republished")
		}
	}
	if tb.Len() != len(keys) {
		t.Fatalf("Len = %d, want %d", tb.Len(), len(keys))
	}
	for i, k := range keys {
		if v, ok := tb.Load(k); !ok || v != i {
			t.Fatalf("%s = %d,%v; want %d", k, v, ok, i)
		}
	}

	// Change only keys of one shard: the others keep their snapshots.
	target := tb.shardOf("k0")
	var oneShard []string
	for _, k := range keys {
		if tb.shardOf(k) == target {
			oneShard = append(oneShard, k)
		}
	}
	before = snaps()
	tb.UpdateMany(keys, func(i int, key string, old int, ok bool) (int, Action) {
		if tb.shardOf(key) == target {
			return old + 1, Store
		}
		return old, Unchanged
	})
	for i := range tb.shards {
		republished := !before[tb.shards[i].snap.Load()]
		if republished != (i == target) {
			t.Fatalf("shard %d republished=%v, target %d", i, republished, target)
		}
	}
	if v, _ := tb.Load(oneShard[0]); v != 1 {
		t.Fatalf("%s = %d, want 1", oneShard[0], v)
	}
}

func TestUpdateManyDuplicateKeysSeeEarlierResult(t *testing.T) {
	t.Parallel()
	tb := New[int](4)
	var seen []string
	tb.UpdateMany([]string{"a", "b", "a", "a"}, func(i int, key string, old int, ok bool) (int, Action) {
		seen = append(seen, fmt.Sprintf("%d:%s:%d:%v", i, key, old, ok))
		if key == "a" && i == 3 {
			return 0, Delete
		}
		return old + 10, Store
	})
	if _, ok := tb.Load("a"); ok {
		t.Fatalf("a survived its delete")
	}
	if v, _ := tb.Load("b"); v != 10 {
		t.Fatalf("b = %d, want 10", v)
	}
	sort.Strings(seen) // shards are visited in index order, not key order
	want := []string{"0:a:0:false", "1:b:0:false", "2:a:10:true", "3:a:20:true"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("fn calls %v, want %v", seen, want)
	}
}

func TestRange(t *testing.T) {
	t.Parallel()
	tb := New[int](4)
	want := map[string]int{}
	keys := []string{}
	for i := 0; i < 50; i++ {
		k := "t" + strconv.Itoa(i)
		keys = append(keys, k)
		want[k] = i
	}
	tb.UpdateMany(keys, func(i int, _ string, _ int, _ bool) (int, Action) { return i, Store })
	got := map[string]int{}
	tb.Range(func(k string, v int) bool { got[k] = v; return true })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Range = %v, want %v", got, want)
	}
	n := 0
	tb.Range(func(string, int) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("Range did not stop: %d calls", n)
	}
}

// Readers check an invariant every published value keeps (v.b == 2*v.a) while
// a writer keeps replacing values; -race reports any unsynchronised access.
func TestConcurrentReadersAndWriter(t *testing.T) {
	t.Parallel()
	type pair struct{ a, b int }
	tb := New[*pair](16)
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, k := range keys {
					if p, ok := tb.Load(k); ok && p.b != 2*p.a {
						errs <- fmt.Errorf("%s: torn value %+v", k, *p)
						return
					}
				}
				tb.Range(func(k string, p *pair) bool { return p.b == 2*p.a })
				_ = tb.Len()
			}
		}()
	}
	for round := 0; round <= 200; round++ { // 200 % 7 != 3: the last round stores every key
		tb.UpdateMany(keys, func(i int, _ string, old *pair, ok bool) (*pair, Action) {
			if round%7 == 3 && i%5 == 0 {
				return nil, Delete
			}
			return &pair{a: round + i, b: 2 * (round + i)}, Store
		})
		tb.Update(keys[round%len(keys)], func(old *pair, ok bool) (*pair, Action) {
			return &pair{a: -round, b: -2 * round}, Store
		})
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if tb.Len() != len(keys) {
		t.Fatalf("Len = %d, want %d", tb.Len(), len(keys))
	}
}

func TestLoadDoesNotAllocate(t *testing.T) {
	tb := New[int](0)
	tb.Update("TopicTest", func(int, bool) (int, Action) { return 1, Store })
	key := "TopicTest"
	if n := testing.AllocsPerRun(100, func() { tb.Load(key) }); n != 0 {
		t.Fatalf("Load allocates %v times", n)
	}
}
