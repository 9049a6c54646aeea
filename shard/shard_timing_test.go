// Benchmarks of Table.Load under a concurrent writer, against a plain map
// behind one sync.RWMutex.

package shard

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

const benchKeys = 10000

func benchKeyList() []string {
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "BenchTopic_" + strconv.Itoa(i)
	}
	return keys
}

// rwMap is the baseline: what a straightforward port of Java's
// ReentrantReadWriteLock-guarded HashMap looks like.
type rwMap struct {
	mu sync.RWMutex
	m  map[string]int
}

func (r *rwMap) load(k string) (int, bool) {
	r.mu.RLock()
	v, ok := r.m[k]
	r.mu.RUnlock()
	return v, ok
}

func (r *rwMap) store(k string, v int) {
	r.mu.Lock()
	r.m[k] = v
	r.mu.Unlock()
}

// runWriter keeps updating keys until stop is closed: the steady trickle of
// broker registrations a NameServer sees while clients query routes.
func runWriter(stop <-chan struct{}, done *sync.WaitGroup, keys []string, store func(i int)) {
	defer done.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		store(i % len(keys))
	}
}

func BenchmarkLoadParallelWithWriter(b *testing.B) {
	keys := benchKeyList()
	tb := New[int](0)
	tb.UpdateMany(keys, func(i int, _ string, _ int, _ bool) (int, Action) { return i, Store })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go runWriter(stop, &wg, keys, func(i int) {
		tb.Update(keys[i], func(old int, _ bool) (int, Action) { return old + 1, Store })
	})
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(7919))
		for pb.Next() {
			i++
			if _, ok := tb.Load(keys[i%len(keys)]); !ok {
				b.Fatal("missing key")
			}
		}
	})
	b.StopTimer()
	close(stop)
	wg.Wait()
}

func BenchmarkRWMutexMapParallelWithWriter(b *testing.B) {
	keys := benchKeyList()
	r := &rwMap{m: make(map[string]int, len(keys))}
	for i, k := range keys {
		r.m[k] = i
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go runWriter(stop, &wg, keys, func(i int) { r.store(keys[i], i) })
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(7919))
		for pb.Next() {
			i++
			if _, ok := r.load(keys[i%len(keys)]); !ok {
				b.Fatal("missing key")
			}
		}
	})
	b.StopTimer()
	close(stop)
	wg.Wait()
}

func BenchmarkUpdateMany100k(b *testing.B) {
	keys := make([]string, 100000)
	for i := range keys {
		keys[i] = "BenchTopic_" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		tb := New[int](0)
		tb.UpdateMany(keys, func(i int, _ string, _ int, _ bool) (int, Action) { return i, Store })
	}
}
