// Benchmarks of the KV store: a persisted Put and a lock-free Get.

package kv

import (
	"path/filepath"
	"strconv"
	"testing"
)

func BenchmarkPut(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "kvConfig.json"))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := s.Put("ORDER_TOPIC_CONFIG", "topic"+strconv.Itoa(i), "broker-a:4;broker-b:4"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Put("ORDER_TOPIC_CONFIG", "topic"+strconv.Itoa(i%100), "broker-a:8"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "kvConfig.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Put("ORDER_TOPIC_CONFIG", "TopicOrder", "broker-a:4"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.Get("ORDER_TOPIC_CONFIG", "TopicOrder"); !ok {
				b.Error("missing")
				return
			}
		}
	})
}
