// Tests of the log-linear histogram: bucket bounds, precision, quantiles.

package loadgen

import (
	"math"
	"testing"
)

func TestBucketRoundTrip(t *testing.T) {
	// Every value must land in a bucket whose top is >= the value and
	// within 1/128 of it, and buckets must be monotonic.
	f := func(v int64) {
		t.Helper()
		i := bucketOf(v)
		if i < 0 || i >= bucketCount {
			t.Fatalf("bucketOf(%d) = %d, outside [0, %d)", v, i, bucketCount)
		}
		hi := bucketHigh(i)
		if hi < v {
			t.Fatalf("bucketHigh(bucketOf(%d)) = %d, below the value", v, hi)
		}
		if float64(hi-v) > float64(v)/subCount {
			t.Fatalf("bucketHigh(bucketOf(%d)) = %d, more than 1/%d above", v, hi, subCount)
		}
		if i > 0 && bucketHigh(i-1) >= v {
			t.Fatalf("value %d also fits bucket %d (top %d)", v, i-1, bucketHigh(i-1))
		}
	}
	for v := int64(0); v < 5000; v++ {
		f(v)
	}
	for _, v := range []int64{1 << 20, 1<<20 + 1, 1<<20 - 1, 123456789, 999_999_999, maxValue, maxValue - 1} {
		f(v)
	}
	if got := bucketOf(maxValue); got != bucketCount-1 {
		t.Fatalf("bucketOf(maxValue) = %d, want the last bucket %d", got, bucketCount-1)
	}
	if got := bucketOf(math.MaxInt64); got != bucketCount-1 {
		t.Fatalf("bucketOf(MaxInt64) = %d, want it clamped to %d", got, bucketCount-1)
	}
	if got := bucketOf(-5); got != 0 {
		t.Fatalf("bucketOf(-5) = %d, want 0", got)
	}
}

func TestQuantiles(t *testing.T) {
	h := NewHistogram()
	if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Min() != 0 || h.Mean() != 0 {
		t.Fatalf("empty histogram: p50 %d max %d min %d mean %f, want zeros", h.Quantile(0.5), h.Max(), h.Min(), h.Mean())
	}
	// 1..100000 ns: the q-quantile is q*100000 within the bucket precision.
	for v := int64(1); v <= 100000; v++ {
		h.Record(v)
	}
	f := func(q float64, want int64) {
		t.Helper()
		got := h.Quantile(q)
		if got < want || float64(got-want) > float64(want)/subCount {
			t.Errorf("Quantile(%v) = %d, want %d (+%d)", q, got, want, want/subCount)
		}
	}
	f(0.5, 50000)
	f(0.9, 90000)
	f(0.99, 99000)
	f(0.999, 99900)
	f(1, 100000)
	f(0, 1)
	if h.Count() != 100000 || h.Min() != 1 || h.Max() != 100000 {
		t.Fatalf("count %d min %d max %d, want 100000 1 100000", h.Count(), h.Min(), h.Max())
	}
	if got := h.Mean(); got != 50000.5 {
		t.Fatalf("Mean = %v, want 50000.5", got)
	}
}

func TestQuantileClampedToMax(t *testing.T) {
	h := NewHistogram()
	h.Record(1000001) // bucket top is above it
	if got := h.Quantile(0.99); got != 1000001 {
		t.Fatalf("Quantile(0.99) of one value = %d, want the value itself", got)
	}
}

func TestMergeAndReset(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for i := 0; i < 99; i++ {
		a.Record(100)
	}
	b.Record(1_000_000)
	a.Merge(b)
	a.Merge(NewHistogram()) // an empty one must not disturb min
	a.Merge(nil)
	if a.Count() != 100 || a.Min() != 100 || a.Max() != 1_000_000 {
		t.Fatalf("merged: count %d min %d max %d", a.Count(), a.Min(), a.Max())
	}
	if got := a.Quantile(0.99); got != 100 {
		t.Fatalf("p99 = %d, want 100 (99 of 100 values)", got)
	}
	if got := a.Quantile(0.999); got != 1_000_000 {
		t.Fatalf("p999 = %d, want 1000000", got)
	}
	a.Reset()
	if a.Count() != 0 || a.Quantile(0.5) != 0 {
		t.Fatalf("after Reset: count %d p50 %d", a.Count(), a.Quantile(0.5))
	}
	a.Record(7)
	if a.Min() != 7 || a.Max() != 7 {
		t.Fatalf("after Reset+Record(7): min %d max %d", a.Min(), a.Max())
	}
}
