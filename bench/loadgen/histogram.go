// Log-linear latency histogram (HdrHistogram's bucket layout, fixed
// precision) for the load generator's per-connection recorders.

package loadgen

import (
	"math"
	"math/bits"
)

// subBits sets the precision: each power of two is split into 2^subBits
// linear sub-buckets, so a recorded value is off by less than 1/128 (0.8 %)
// of itself, the same as HdrHistogram with 2 significant digits. Finer
// buckets only cost memory and a histogram lives per connection and phase.
const (
	subBits  = 7
	subCount = 1 << subBits
	// maxBits caps recordable values at 2^maxBits-1 ns (about 68 s); a
	// latency beyond it is a stalled run, recorded as the cap.
	maxBits     = 36
	bucketCount = (maxBits-subBits-1)*subCount + 2*subCount
	maxValue    = 1<<maxBits - 1
)

// Histogram counts non-negative int64 values (nanoseconds here) in
// log-linear buckets. The zero value is not usable: call NewHistogram. It is
// not safe for concurrent use: each worker owns one and they are merged
// after the workers stop.
type Histogram struct {
	counts   []uint64
	total    uint64
	min, max int64
	sum      float64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, bucketCount), min: math.MaxInt64}
}

// bucketOf maps v to its bucket: values below 2*subCount have a bucket each;
// above, the top subBits+1 significant bits pick the bucket.
func bucketOf(v int64) int {
	if v < 0 {
		v = 0
	}
	if v > maxValue {
		v = maxValue
	}
	u := uint64(v)
	n := bits.Len64(u)
	if n <= subBits+1 {
		return int(u)
	}
	shift := n - (subBits + 1)
	return shift*subCount + int(u>>shift)
}

// bucketHigh is the largest value that lands in bucket i, which is what a
// percentile reports (HdrHistogram reports the bucket's highest equivalent
// value too, so a percentile never understates).
func bucketHigh(i int) int64 {
	if i < 2*subCount {
		return int64(i)
	}
	shift := i/subCount - 1
	sub := i - shift*subCount // in [subCount, 2*subCount)
	return int64(sub+1)<<shift - 1
}

// Record adds one value.
func (h *Histogram) Record(v int64) {
	h.counts[bucketOf(v)]++
	h.total++
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.sum += float64(v)
}

// Merge adds every count of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest recorded value, exact; 0 when empty.
func (h *Histogram) Max() int64 {
	if h.total == 0 {
		return 0
	}
	return h.max
}

// Min is the smallest recorded value, exact; 0 when empty.
func (h *Histogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Mean is the exact mean of the recorded values; 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return h.sum / float64(h.total)
}

// Quantile returns the value at quantile q in [0, 1]: the top of the bucket
// holding the ceil(q*count)-th smallest value, clamped to the exact max.
// An empty histogram gives 0.
func (h *Histogram) Quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(bucketHigh(i), h.max)
		}
	}
	return h.max
}

// Reset empties h, keeping its buckets.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.total, h.sum = 0, 0
	h.min, h.max = math.MaxInt64, 0
}
