// Benchmarks of the KV store: a persisted Put and a lock-free Get.

package kv

import (
	"path/filepath"
	"strconv"
	"strings"
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

// BenchmarkPutBesideLargeEntries is a small Put into a namespace that also
// holds three large entries: 64 KiB (the largest value the default limits
// take) and 6 MiB (the values of the attack that made every registration
// reply 18.9 MB, with limits raised to take them). Persistence must not
// re-encode what did not change; what remains is writing the file and its
// backup.
func BenchmarkPutBesideLargeEntries(b *testing.B) {
	for _, size := range []int{64 << 10, 6 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "kvConfig.json"),
				WithLimits(Limits{MaxValueBytes: 8 << 20, MaxNamespaceBytes: 32 << 20, MaxTotalBytes: 32 << 20}))
			if err != nil {
				b.Fatal(err)
			}
			big := strings.Repeat("broker-a:8;", size/11)
			for i := 0; i < 3; i++ {
				if err := s.Put("ORDER_TOPIC_CONFIG", "large"+strconv.Itoa(i), big); err != nil {
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
		})
	}
}

// BenchmarkEncodeBesideLargeEntries is the CPU side of the Put above
// without the disk: the file for a table holding three 6 MiB values with
// one small entry changed, encoded whole as the store did before (full) and
// rendered from the kept per-entry encodings as it does now (incremental).
func BenchmarkEncodeBesideLargeEntries(b *testing.B) {
	big := strings.Repeat("broker-a:8;", (6<<20)/11)
	t := table{"ORDER_TOPIC_CONFIG": {}}
	for i := 0; i < 3; i++ {
		t["ORDER_TOPIC_CONFIG"]["large"+strconv.Itoa(i)] = big
	}
	for i := 0; i < 100; i++ {
		t["ORDER_TOPIC_CONFIG"]["topic"+strconv.Itoa(i)] = "broker-a:8"
	}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := fullEncode(t); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("incremental", func(b *testing.B) {
		var w writer
		w.load(t)
		l := Limits{MaxKeyBytes: 1024, MaxValueBytes: 8 << 20, MaxNamespaceBytes: 32 << 20, MaxTotalBytes: 32 << 20}
		buf := w.render(nil, nil)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ch := &change{ns: "ORDER_TOPIC_CONFIG", key: "topic" + strconv.Itoa(i%100), frag: w.entry("topic"+strconv.Itoa(i%100), "broker-a:4")}
			if err := w.check(ch, l); err != nil {
				b.Fatal(err)
			}
			buf = w.render(buf, ch)
			w.apply(ch)
		}
	})
}
