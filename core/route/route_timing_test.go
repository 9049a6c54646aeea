// Benchmarks of the route query path and of registration at 1k-100k topics.

package route

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func benchTopics(n int) []body.TopicConfig {
	out := make([]body.TopicConfig, n)
	for i := range out {
		out[i] = tc("BenchmarkTopic_"+strconv.Itoa(i), 8, 6)
	}
	return out
}

func BenchmarkRouteBodyParallel(b *testing.B) {
	tb, _ := newTable(Options{})
	topics := benchTopics(1000)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := tb.Register(reg(name, name+":1", 0, 1, topics...)); err != nil {
			b.Fatal(err)
		}
		if _, err := tb.Register(reg(name, name+":2", 1, 1, topics...)); err != nil {
			b.Fatal(err)
		}
	}
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(7919))
		for pb.Next() {
			i++
			if _, ok := tb.RouteBody(topics[i%len(topics)].TopicName, body.Standard); !ok {
				b.Fatal("no route")
			}
		}
	})
}

func BenchmarkRegister(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		topics := benchTopics(n)
		b.Run(strconv.Itoa(n)+"/first", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				tb, _ := newTable(Options{})
				r := reg("a", "a:1", 0, 1, topics...)
				b.StartTimer()
				if _, err := tb.Register(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"/unchanged", func(b *testing.B) {
			tb, _ := newTable(Options{})
			r := reg("a", "a:1", 0, 1, topics...)
			if _, err := tb.Register(r); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := tb.Register(r); err != nil || res.TopicsChanged != 0 {
					b.Fatal(res, err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"/new-version", func(b *testing.B) {
			tb, _ := newTable(Options{})
			r := reg("a", "a:1", 0, 1, topics...)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// Every other version flips the perms so each one rewrites
				// every topic.
				r.Body.DataVersion.Counter = int64(i)
				for j := range r.Body.Topics {
					r.Body.Topics[j].Perm = int32(6 + i%2)
				}
				if _, err := tb.Register(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
