// histogram.go holds the lock-free latency histogram.

package metrics

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// latencyBounds are the histogram's bucket upper bounds. A request is timed
// from its decoded frame to its queued answer, so everything but a
// registration storm or a slow disk lands in the first buckets.
var latencyBounds = [...]time.Duration{
	10 * time.Microsecond, 25 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, time.Second,
}

// Histogram is a Prometheus latency histogram updated with two atomic adds
// and no lock. The library's PrometheusHistogram takes a mutex per update,
// which every core answering route queries would contend on. Its zero
// value is empty and ready.
type Histogram struct {
	buckets [len(latencyBounds) + 1]atomic.Uint64 // not cumulative; the last is +Inf
	sumNs   atomic.Uint64
}

// Observe records d as weight observations.
func (h *Histogram) Observe(d time.Duration, weight uint64) {
	i := 0
	for i < len(latencyBounds) && d > latencyBounds[i] {
		i++
	}
	h.buckets[i].Add(weight)
	h.sumNs.Add(uint64(max(d, 0)) * weight)
}

// Write writes the histogram's series named name with labels (without
// braces) in Prometheus text format.
func (h *Histogram) Write(w io.Writer, name, labels string) {
	var cum uint64
	for i, ub := range latencyBounds {
		cum += h.buckets[i].Load()
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels, strconv.FormatFloat(ub.Seconds(), 'g', -1, 64), cum)
	}
	cum += h.buckets[len(latencyBounds)].Load()
	fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, cum)
	fmt.Fprintf(w, "%s_sum{%s} %s\n", name, labels, strconv.FormatFloat(float64(h.sumNs.Load())/1e9, 'g', -1, 64))
	fmt.Fprintf(w, "%s_count{%s} %d\n", name, labels, cum)
}
