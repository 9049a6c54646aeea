// Benchmarks of the route query path, of registration at 1k-100k topics and
// of the other writers: unregistration, the expiry scan, heartbeats.

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

// BenchmarkUnregister drops the master of a group that serves every topic
// beside another group's, so each topic loses one of its two queues.
func BenchmarkUnregister(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		topics := benchTopics(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				tb, _ := newTable(Options{})
				for _, name := range []string{"a", "b"} {
					if _, err := tb.Register(reg(name, name+":1", 0, 1, topics...)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if evs, _ := tb.Unregister("c", "a:1", "a", 0); len(evs) != 1 {
					b.Fatal(evs)
				}
			}
		})
	}
}

// BenchmarkExpire scans 1000 brokers of 10 topics each: none due (the scan
// every few seconds), or half of them.
func BenchmarkExpire(b *testing.B) {
	topics := benchTopics(10)
	setup := func(b *testing.B) (*Table, *clock) {
		tb, clk := newTable(Options{})
		for i := range 1000 {
			r := reg("g"+strconv.Itoa(i), "10.0.0."+strconv.Itoa(i)+":10911", 0, 1, topics...)
			r.HeartbeatTimeoutMillis = int64(10000 + 1000*(i%2))
			r.Conn = ConnID(i + 1)
			if _, err := tb.Register(r); err != nil {
				b.Fatal(err)
			}
		}
		clk.ms += 10500
		return tb, clk
	}
	b.Run("none", func(b *testing.B) {
		tb, clk := setup(b)
		clk.ms -= 1000
		b.ReportAllocs()
		for b.Loop() {
			if evs := tb.ScanExpired(); len(evs) != 0 {
				b.Fatal(evs)
			}
		}
	})
	b.Run("half", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			tb, _ := setup(b)
			b.StartTimer()
			if evs := tb.ScanExpired(); len(evs) != 500 {
				b.Fatal(len(evs))
			}
		}
	})
}

// BenchmarkHeartbeat refreshes one of 1000 brokers.
func BenchmarkHeartbeat(b *testing.B) {
	tb, _ := newTable(Options{})
	addrs := make([]string, 1000)
	for i := range addrs {
		addrs[i] = "10.0.0." + strconv.Itoa(i) + ":10911"
		if _, err := tb.Register(reg("g"+strconv.Itoa(i), addrs[i], 0, 1, tc("T1", 1, 6), tc("T2", 1, 6))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if !tb.Heartbeat("c", addrs[i%len(addrs)]) {
			b.Fatal("not registered")
		}
	}
}
