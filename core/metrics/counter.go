// counter.go holds the cheap counter and the fixed counter sets a server
// builds for its own events.

package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Counter is a monotonic count updated with one atomic add. Its zero
// value is ready.
type Counter struct{ v atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Load is the count.
func (c *Counter) Load() uint64 { return c.v.Load() }

// Counters is a collector of counter families whose label values are a
// fixed set known when the family is added, so every child is resolved
// once and counting is an index and an atomic add.
type Counters struct {
	families []counterFamily
}

type counterFamily struct {
	desc   *prometheus.Desc
	values []string // label values by child; nil for a family without a label
	counts []Counter
}

// Family adds a counter family named name with one child per value of
// label (label "" makes a single unlabeled child) and returns the
// children, in the order of values.
func (cs *Counters) Family(name, help, label string, values ...string) []Counter {
	f := counterFamily{}
	if label == "" {
		f.desc = prometheus.NewDesc(name, help, nil, nil)
		f.counts = make([]Counter, 1)
	} else {
		f.desc = prometheus.NewDesc(name, help, []string{label}, nil)
		f.values = values
		f.counts = make([]Counter, len(values))
	}
	cs.families = append(cs.families, f)
	return f.counts
}

// Describe is prometheus.Collector's.
func (cs *Counters) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range cs.families {
		ch <- f.desc
	}
}

// Collect is prometheus.Collector's.
func (cs *Counters) Collect(ch chan<- prometheus.Metric) {
	for _, f := range cs.families {
		for i := range f.counts {
			v := float64(f.counts[i].Load())
			if f.values == nil {
				ch <- prometheus.MustNewConstMetric(f.desc, prometheus.CounterValue, v)
			} else {
				ch <- prometheus.MustNewConstMetric(f.desc, prometheus.CounterValue, v, f.values[i])
			}
		}
	}
}
