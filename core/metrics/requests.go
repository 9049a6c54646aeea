// requests.go holds the request counters of one listener: per code, per
// code and error response, and the latency per class.

package metrics

import (
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketns/rocketns/codec"
)

// Code is one request code with counters of its own.
type Code struct {
	Code  int32
	Name  string // the label value, a fixed set (codec.RequestCodeName)
	Class int    // index into RequestOptions.Classes
}

// Response is a response code with an error label of its own.
type Response struct {
	Code int32
	Name string
}

// Responses are codes under their Java names (codec.ResponseCodeName), the
// usual RequestOptions.Responses.
func Responses(codes ...int32) []Response {
	r := make([]Response, len(codes))
	for i, c := range codes {
		r[i] = Response{Code: c, Name: codec.ResponseCodeName(c)}
	}
	return r
}

// RequestOptions describe a listener's request metrics.
type RequestOptions struct {
	// Prefix starts every series name ("rocketns_").
	Prefix string
	// Classes name the latency classes, the label of the histogram.
	Classes []string
	// Codes have counters of their own; any other code is counted as
	// UNKNOWN in class UnknownClass, so the label set stays small
	// whatever peers send.
	Codes        []Code
	UnknownClass int
	// Responses have error counters of their own; any other code but 0
	// (SUCCESS) counts as OTHER.
	Responses []Response
}

// denseCodes bounds the codes whose slot is found by index; the others are
// in a map.
const denseCodes = 2048

// Requests counts one listener's requests; it is a prometheus.Collector.
// Every counter is resolved when it is built, so Observe is an index and
// atomic adds.
type Requests struct {
	prefix   string
	classes  []string
	dense    [denseCodes]uint8 // request code -> slot; 0 = UNKNOWN
	sparse   map[int32]uint8
	names    []string // by slot
	class    []int    // by slot
	requests []Counter
	// errors[slot][response] exist for every pair; a scrape lists only
	// those that counted something, as most pairs never happen.
	responses []Response // with OTHER last
	errors    [][]Counter
	latency   []Histogram

	requestsDesc, errorsDesc, latencyDesc *prometheus.Desc
}

// NewRequests builds the counters of o.
func NewRequests(o RequestOptions) (*Requests, error) {
	if o.UnknownClass < 0 || o.UnknownClass >= len(o.Classes) {
		return nil, fmt.Errorf("metrics: unknown-code class %d of %d classes", o.UnknownClass, len(o.Classes))
	}
	r := &Requests{prefix: o.Prefix, classes: o.Classes, sparse: map[int32]uint8{}}
	r.names = append(r.names, "UNKNOWN")
	r.class = append(r.class, o.UnknownClass)
	for _, c := range o.Codes {
		if r.slot(c.Code) != 0 || len(r.names) > 255 || c.Class < 0 || c.Class >= len(o.Classes) {
			return nil, fmt.Errorf("metrics: request code %d repeated, beyond 255 codes, or of class %d", c.Code, c.Class)
		}
		s := uint8(len(r.names))
		if c.Code >= 0 && c.Code < denseCodes {
			r.dense[c.Code] = s
		} else {
			r.sparse[c.Code] = s
		}
		r.names = append(r.names, c.Name)
		r.class = append(r.class, c.Class)
	}
	r.requests = make([]Counter, len(r.names))
	r.responses = append(append(r.responses, o.Responses...), Response{-1, "OTHER"})
	r.errors = make([][]Counter, len(r.names))
	for i := range r.errors {
		r.errors[i] = make([]Counter, len(r.responses))
	}
	r.latency = make([]Histogram, len(o.Classes))
	r.requestsDesc = prometheus.NewDesc(o.Prefix+"requests_total",
		"Requests handled, by request code (oneway and refused ones included).", []string{"code"}, nil)
	r.errorsDesc = prometheus.NewDesc(o.Prefix+"request_errors_total",
		"Requests answered with a code other than SUCCESS, by request code and response code.", []string{"code", "response"}, nil)
	r.latencyDesc = prometheus.NewDesc(o.Prefix+"request_duration_seconds",
		"Time from a decoded request to its queued answer, by request class.", []string{"class"}, nil)
	return r, nil
}

func (r *Requests) slot(code int32) int {
	if code >= 0 && code < denseCodes {
		return int(r.dense[code])
	}
	return int(r.sparse[code])
}

// ClassOf is the class of a request code (UnknownClass for codes without
// counters of their own).
func (r *Requests) ClassOf(code int32) int { return r.class[r.slot(code)] }

// Observe counts one request of code answered with resp; it is a remoting
// listener's Observe. A timed request (weight > 0) took d and stands for
// weight requests in the latency histogram. It allocates nothing.
func (r *Requests) Observe(code, resp int32, d time.Duration, weight uint64) {
	i := r.slot(code)
	r.requests[i].Inc()
	if resp != 0 {
		r.errors[i][r.errorSlot(resp)].Inc()
	}
	if weight > 0 {
		r.latency[r.class[i]].Observe(d, weight)
	}
}

func (r *Requests) errorSlot(code int32) int {
	last := len(r.responses) - 1
	for i, resp := range r.responses[:last] {
		if resp.Code == code {
			return i
		}
	}
	return last
}

// Totals returns the requests counted per class and the errors counted,
// since the start, for a rate between two reads.
func (r *Requests) Totals() (byClass []uint64, errors uint64) {
	byClass = make([]uint64, len(r.classes))
	for i := range r.requests {
		byClass[r.class[i]] += r.requests[i].Load()
	}
	for i := range r.errors {
		for e := range r.errors[i] {
			errors += r.errors[i][e].Load()
		}
	}
	return byClass, errors
}

// Latency is the latency histogram's snapshot of class c, for a quantile
// between two reads (Quantile).
func (r *Requests) Latency(c int) HistogramSnapshot { return r.latency[c].Snapshot() }

// Describe is prometheus.Collector's.
func (r *Requests) Describe(ch chan<- *prometheus.Desc) {
	ch <- r.requestsDesc
	ch <- r.errorsDesc
	ch <- r.latencyDesc
}

// Collect is prometheus.Collector's.
func (r *Requests) Collect(ch chan<- prometheus.Metric) {
	for i, name := range r.names {
		ch <- prometheus.MustNewConstMetric(r.requestsDesc, prometheus.CounterValue, float64(r.requests[i].Load()), name)
	}
	for i, name := range r.names {
		for e, resp := range r.responses {
			if n := r.errors[i][e].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(r.errorsDesc, prometheus.CounterValue, float64(n), name, resp.Name)
			}
		}
	}
	for c := range r.latency {
		ch <- r.latency[c].metric(r.latencyDesc, r.classes[c])
	}
}

// Write writes every series in Prometheus text format.
func (r *Requests) Write(w io.Writer) { _ = WriteText(w, r) }
