// histogram.go holds the lock-free latency histogram and the quantile
// estimate read from two of its snapshots.

package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
// and no lock. client_golang's Histogram takes more atomic operations per
// observation on words every core shares, and has no weighted observation,
// which sampled route queries need. Its zero value is empty and ready.
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

// metric is the histogram as a constant Prometheus histogram of desc.
func (h *Histogram) metric(desc *prometheus.Desc, labelValues ...string) prometheus.Metric {
	var cum uint64
	buckets := make(map[float64]uint64, len(latencyBounds))
	for i, ub := range latencyBounds {
		cum += h.buckets[i].Load()
		buckets[ub.Seconds()] = cum
	}
	cum += h.buckets[len(latencyBounds)].Load()
	return prometheus.MustNewConstHistogram(desc, cum, float64(h.sumNs.Load())/1e9, buckets, labelValues...)
}

// Quantile estimates the q-quantile (0 < q <= 1) of the observations
// between two snapshots of the buckets, interpolating linearly inside the
// bucket it falls in as Prometheus' histogram_quantile does; 0 when nothing
// was observed, the largest bound when it falls in +Inf.
func Quantile(q float64, before, after *HistogramSnapshot) time.Duration {
	var d [len(latencyBounds) + 1]uint64
	var total uint64
	for i := range d {
		d[i] = after[i] - before[i]
		total += d[i]
	}
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	var cum float64
	lower := time.Duration(0)
	for i, n := range d {
		if i == len(latencyBounds) {
			return latencyBounds[len(latencyBounds)-1]
		}
		upper := latencyBounds[i]
		if cum+float64(n) >= rank && n > 0 {
			return lower + time.Duration(float64(upper-lower)*(rank-cum)/float64(n))
		}
		cum += float64(n)
		lower = upper
	}
	return lower
}

// HistogramSnapshot is a histogram's bucket counts at one moment (not
// cumulative; the last is +Inf).
type HistogramSnapshot [len(latencyBounds) + 1]uint64

// Snapshot reads the bucket counts.
func (h *Histogram) Snapshot() (s HistogramSnapshot) {
	for i := range s {
		s[i] = h.buckets[i].Load()
	}
	return s
}
