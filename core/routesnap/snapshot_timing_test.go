// Benchmarks of the route snapshot: export, encode and write, and load and
// restore, for tables of 4 x 1000, 100 x 10 000 (1M entries) and
// 100 x 20 000 (topics on every broker group).

package routesnap

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

var benchSizes = []struct{ groups, topics int }{{4, 1000}, {100, 10000}, {100, 20000}}

// benchTable registers groups masters, each with the same topics.
func benchTable(b *testing.B, groups, topics int) *route.Table {
	b.Helper()
	now := int64(1_700_000_000_000)
	tb := route.New(route.Options{}, func() int64 { return now })
	tcs := make([]body.TopicConfig, topics)
	for i := range tcs {
		tcs[i] = body.TopicConfig{TopicName: "BenchmarkTopic_" + strconv.Itoa(i), ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}
	}
	for g := range groups {
		name := fmt.Sprintf("broker-%03d", g)
		if _, err := tb.Register(&route.Registration{Cluster: "bench", BrokerName: name,
			BrokerAddr: fmt.Sprintf("10.0.%d.%d:10911", g/250, g%250), HAServerAddr: "10.0.0.1:10912",
			Body: &body.RegisterBroker{Topics: tcs, DataVersion: body.DataVersion{Timestamp: now, Counter: 1}}}); err != nil {
			b.Fatal(err)
		}
	}
	return tb
}

func benchName(groups, topics int) string { return fmt.Sprintf("%dx%d", groups, topics) }

// BenchmarkSnapshotWrite is the background writer's whole cost: Export
// (under the writers' lock for the broker tables only), Encode, and the
// atomic replacement with its fsyncs.
func BenchmarkSnapshotWrite(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(benchName(sz.groups, sz.topics), func(b *testing.B) {
			tb := benchTable(b, sz.groups, sz.topics)
			path := filepath.Join(b.TempDir(), "routes.snapshot")
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s, _ := tb.Export()
				var err error
				if n, err = Write(path, s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "file-bytes")
			b.ReportMetric(float64(n)/float64(sz.groups*sz.topics), "bytes/entry")
		})
	}
}

// BenchmarkSnapshotExport is the part of a write that holds the writers'
// lock (and the copying after it).
func BenchmarkSnapshotExport(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(benchName(sz.groups, sz.topics), func(b *testing.B) {
			tb := benchTable(b, sz.groups, sz.topics)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				tb.Export()
			}
		})
	}
}

// BenchmarkSnapshotLoad is a warm start's cost: read, check, decode and
// restore into an empty table.
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(benchName(sz.groups, sz.topics), func(b *testing.B) {
			tb := benchTable(b, sz.groups, sz.topics)
			path := filepath.Join(b.TempDir(), "routes.snapshot")
			s, _ := tb.Export()
			if _, err := Write(path, s); err != nil {
				b.Fatal(err)
			}
			tb = nil
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, _, err := Load(path, s.TakenAt, 120000)
				if err != nil {
					b.Fatal(err)
				}
				fresh := route.New(route.Options{}, func() int64 { return s.TakenAt })
				if err := fresh.Restore(got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRouteDuringSnapshots is the route query's cost while snapshots
// of a 1M-entry table are written back to back (the background writer
// writes at most one per routeSnapshotIntervalMs; this is its worst case),
// against the same queries with no writer. Readers take no lock, so what
// it shows is the competition for the cores and the collector. Each query
// is timed to report the p99 beside the mean.
func BenchmarkRouteDuringSnapshots(b *testing.B) {
	tb := benchTable(b, 100, 10000)
	path := filepath.Join(b.TempDir(), "routes.snapshot")
	topics := make([]string, 10000)
	for i := range topics {
		topics[i] = "BenchmarkTopic_" + strconv.Itoa(i)
	}
	for _, writing := range []bool{false, true} {
		name := "idle"
		if writing {
			name = "writing"
		}
		b.Run(name, func(b *testing.B) {
			stop := make(chan struct{})
			done := make(chan struct{})
			writes := 0
			go func() {
				defer close(done)
				for writing {
					select {
					case <-stop:
						return
					default:
					}
					s, _ := tb.Export()
					if _, err := Write(path, s); err != nil {
						b.Error(err)
						return
					}
					writes++
				}
			}()
			lat := make([]time.Duration, 0, b.N)
			i := 0
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, ok := tb.RouteBody(topics[i%len(topics)], body.Standard); !ok {
					b.Fatal("no route")
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			b.StopTimer()
			close(stop)
			<-done
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(writes), "snapshots")
		})
	}
}
