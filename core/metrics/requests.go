// requests.go holds the request counters of one listener: per code, per
// code and error response, and the latency per class.

package metrics

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
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

// Requests counts one listener's requests. All counters but the error ones
// are resolved when it is built, so Observe is an index and atomic adds.
type Requests struct {
	set      *vm.Set
	prefix   string
	classes  []string
	dense    [denseCodes]uint8 // request code -> slot; 0 = UNKNOWN
	sparse   map[int32]uint8
	names    []string // by slot
	class    []int    // by slot
	requests []*vm.Counter
	// errors are created on first use: most (code, response) pairs never
	// happen, and a scrape need not list them all at zero.
	responses []Response // with OTHER last
	errors    [][]atomic.Pointer[vm.Counter]
	errorMu   sync.Mutex
	latency   []Histogram
}

// NewRequests builds the counters of o.
func NewRequests(o RequestOptions) (*Requests, error) {
	if o.UnknownClass < 0 || o.UnknownClass >= len(o.Classes) {
		return nil, fmt.Errorf("metrics: unknown-code class %d of %d classes", o.UnknownClass, len(o.Classes))
	}
	r := &Requests{set: vm.NewSet(), prefix: o.Prefix, classes: o.Classes, sparse: map[int32]uint8{}}
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
	r.requests = make([]*vm.Counter, len(r.names))
	for i, name := range r.names {
		r.requests[i] = r.set.NewCounter(r.prefix + `requests_total{code="` + name + `"}`)
	}
	r.responses = append(append(r.responses, o.Responses...), Response{-1, "OTHER"})
	r.errors = make([][]atomic.Pointer[vm.Counter], len(r.names))
	for i := range r.errors {
		r.errors[i] = make([]atomic.Pointer[vm.Counter], len(r.responses))
	}
	r.latency = make([]Histogram, len(o.Classes))
	r.set.RegisterMetricsWriter(r.writeLatency)
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
// weight requests in the latency histogram. It allocates nothing, except
// once per (code, error response) pair the first time that pair is seen.
func (r *Requests) Observe(code, resp int32, d time.Duration, weight uint64) {
	i := r.slot(code)
	r.requests[i].Inc()
	if resp != 0 {
		r.errorCounter(i, r.errorSlot(resp)).Inc()
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

func (r *Requests) errorCounter(i, e int) *vm.Counter {
	if c := r.errors[i][e].Load(); c != nil {
		return c
	}
	r.errorMu.Lock()
	defer r.errorMu.Unlock()
	c := r.set.GetOrCreateCounter(r.prefix + `request_errors_total{code="` + r.names[i] + `",response="` + r.responses[e].Name + `"}`)
	r.errors[i][e].Store(c)
	return c
}

// Totals returns the requests counted per class and the errors counted,
// since the start, for a rate between two reads.
func (r *Requests) Totals() (byClass []uint64, errors uint64) {
	byClass = make([]uint64, len(r.classes))
	for i, c := range r.requests {
		byClass[r.class[i]] += c.Get()
	}
	for i := range r.errors {
		for e := range r.errors[i] {
			if c := r.errors[i][e].Load(); c != nil {
				errors += c.Get()
			}
		}
	}
	return byClass, errors
}

// Write writes every series in Prometheus text format.
func (r *Requests) Write(w io.Writer) { r.set.WritePrometheus(w) }

func (r *Requests) writeLatency(w io.Writer) {
	name := r.prefix + "request_duration_seconds"
	fmt.Fprintf(w, "# HELP %s Time from a decoded request to its queued answer, by request class.\n", name)
	fmt.Fprintf(w, "# TYPE %s histogram\n", name)
	for c := range r.latency {
		r.latency[c].Write(w, name, `class="`+r.classes[c]+`"`)
	}
}
