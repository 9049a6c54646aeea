// history.go holds the last hour of route QPS, route p99 and registrations
// the page charts: sampled every few seconds into a fixed ring, so its
// memory is bounded whatever the uptime.

package status

import (
	"sync"
	"time"

	"github.com/rocketns/rocketns/core/metrics"
)

// Counts are a server's running totals at one moment, what History
// samples: route queries, accepted registrations, and the route latency
// histogram.
type Counts struct {
	Routes, Registrations uint64
	RouteLatency          metrics.HistogramSnapshot
}

// Sample is one interval of the chart: the rates and the route p99
// between two samplings ending At.
type Sample struct {
	At               time.Time
	RouteQPS, RegQPS float64
	RouteP99         time.Duration
}

// Default sampling of NewHistory: every 10 s over an hour, 360 samples.
const (
	DefaultSampleEvery = 10 * time.Second
	DefaultHistorySpan = time.Hour
)

// History keeps the samples in a ring; its zero value is unusable, make
// it with NewHistory.
type History struct {
	every time.Duration
	read  func() Counts
	clock func() time.Time

	mu     sync.Mutex
	ring   []Sample
	next   int // ring index of the next sample
	n      int // samples held
	prev   Counts
	prevAt time.Time
}

// NewHistory samples read every every over span; clock is the time each
// sample is stamped with (time.Now in production). every and span of 0
// take the defaults.
func NewHistory(every, span time.Duration, read func() Counts, clock func() time.Time) *History {
	if every <= 0 {
		every = DefaultSampleEvery
	}
	if span <= 0 {
		span = DefaultHistorySpan
	}
	size := max(int(span/every), 2)
	return &History{every: every, read: read, clock: clock, ring: make([]Sample, size)}
}

// Every is the sampling interval.
func (h *History) Every() time.Duration { return h.every }

// Span is the time the ring covers.
func (h *History) Span() time.Duration { return h.every * time.Duration(len(h.ring)) }

// Sample reads the counts now and records the interval since the previous
// call; the first call only sets the baseline.
func (h *History) Sample() {
	c, now := h.read(), h.clock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.prevAt.IsZero() {
		if secs := now.Sub(h.prevAt).Seconds(); secs > 0 {
			h.ring[h.next] = Sample{
				At:       now,
				RouteQPS: float64(c.Routes-h.prev.Routes) / secs,
				RegQPS:   float64(c.Registrations-h.prev.Registrations) / secs,
				RouteP99: metrics.Quantile(0.99, &h.prev.RouteLatency, &c.RouteLatency),
			}
			h.next = (h.next + 1) % len(h.ring)
			h.n = min(h.n+1, len(h.ring))
		}
	}
	h.prev, h.prevAt = c, now
}

// Samples returns the samples held, oldest first.
func (h *History) Samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Sample, 0, h.n)
	start := (h.next - h.n + len(h.ring)) % len(h.ring)
	for i := range h.n {
		out = append(out, h.ring[(start+i)%len(h.ring)])
	}
	return out
}

// Run samples every Every until stop is closed: an adminhttp background
// task, so nothing is sampled when no admin listener serves the page.
func (h *History) Run(stop <-chan struct{}) {
	h.Sample()
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			h.Sample()
		}
	}
}
