// The result of a scenario: load rows and named figures, printed as a table
// or as JSON.

package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
)

// Row is one load run or one phase of it.
type Row struct {
	Name     string  `json:"name"`
	Conns    int     `json:"conns"`
	Depth    int     `json:"depth"`
	Seconds  float64 `json:"seconds"`
	Requests uint64  `json:"requests"`
	Errors   uint64  `json:"errors"`
	NotFound uint64  `json:"not_found"`
	QPS      float64 `json:"qps"`
	P50us    float64 `json:"p50_us"`
	P90us    float64 `json:"p90_us"`
	P99us    float64 `json:"p99_us"`
	P999us   float64 `json:"p999_us"`
	MaxUs    float64 `json:"max_us"`
	BytesOut uint64  `json:"bytes_out"`
	BytesIn  uint64  `json:"bytes_in"`
	// VsLimit is QPS over the limit mode's QPS at the same conns and
	// depth, measured in the same invocation; 0 when there was none.
	VsLimit float64 `json:"vs_limit,omitempty"`
}

// Metric is one named figure (a time, a size, a ratio).
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Report is what a scenario measured.
type Report struct {
	Scenario string   `json:"scenario"`
	Server   string   `json:"server"`
	Brokers  int      `json:"brokers,omitempty"`
	Topics   int      `json:"topics,omitempty"`
	PerTopic int      `json:"per_topic,omitempty"`
	Rows     []Row    `json:"rows,omitempty"`
	Metrics  []Metric `json:"metrics,omitempty"`
	// Restarts are the rolling scenario's rows: per round and server.
	Restarts []RestartRow `json:"restarts,omitempty"`
	// Interrupted is set when the run was stopped early (Ctrl-C): the
	// figures cover only what ran.
	Interrupted bool     `json:"interrupted,omitempty"`
	Errors      []string `json:"errors,omitempty"`
}

// Add appends a metric.
func (r *Report) Add(name string, value float64, unit string) {
	r.Metrics = append(r.Metrics, Metric{Name: name, Value: value, Unit: unit})
}

// Metric returns the value of the named metric.
func (r *Report) Metric(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// RowFrom turns a histogram and counters into a row.
func RowFrom(name string, conns, depth int, elapsed time.Duration, requests uint64, h *Histogram) Row {
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	row := Row{
		Name: name, Conns: conns, Depth: depth, Seconds: elapsed.Seconds(), Requests: requests,
		P50us: us(h.Quantile(0.50)), P90us: us(h.Quantile(0.90)), P99us: us(h.Quantile(0.99)),
		P999us: us(h.Quantile(0.999)), MaxUs: us(h.Max()),
	}
	if elapsed > 0 {
		row.QPS = float64(requests) / elapsed.Seconds()
	}
	return row
}

// LoadRow is the row of a whole load run, phases merged.
func LoadRow(name string, res *LoadResult) Row {
	row := RowFrom(name, res.Conns, res.Depth, res.Elapsed, res.Requests, res.Hist)
	row.Errors, row.NotFound = res.Errors, res.NotFound
	row.BytesOut, row.BytesIn = res.BytesOut, res.BytesIn
	return row
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// WriteTable writes r for a person: a header line, the rows, the metrics.
func (r *Report) WriteTable(w io.Writer) error {
	head := fmt.Sprintf("scenario %s, server %s", r.Scenario, r.Server)
	if r.Brokers > 0 {
		head += fmt.Sprintf(", brokers %d, topics %d, per-topic %d", r.Brokers, r.Topics, r.PerTopic)
	}
	if r.Interrupted {
		head += ", INTERRUPTED: partial result"
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Rows) > 0 {
		fmt.Fprintln(tw, "run\tC\tD\tsec\trequests\tQPS\tvs limit\tp50 us\tp90 us\tp99 us\tp99.9 us\tmax us\terrors\tnot found\tMB out\tMB in\t")
		for _, x := range r.Rows {
			ratio := "-"
			if x.VsLimit > 0 {
				ratio = strconv.FormatFloat(x.VsLimit, 'f', 3, 64)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%d\t%.0f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\t\n",
				x.Name, x.Conns, x.Depth, x.Seconds, x.Requests, x.QPS, ratio,
				x.P50us, x.P90us, x.P99us, x.P999us, x.MaxUs, x.Errors, x.NotFound,
				float64(x.BytesOut)/1e6, float64(x.BytesIn)/1e6)
		}
	}
	if len(r.Restarts) > 0 {
		fmt.Fprintln(tw, "round\tstart\tserver\tqueries\tok\tincomplete\tnot exist\tstopping: incomplete\tstopping: not exist\tother code\ttimeout\trefused\tclosed\tnot exist for s\tdown s\tfirst answer s\tfirst code\tp99 us\tmax us\t")
		for _, x := range r.Restarts {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.0f\t%.0f\t\n",
				x.Round, x.Start, x.Server, x.Queries, x.OK, x.Incomplete, x.NotExist, x.StopIncomplete, x.StopNotExist,
				x.OtherCode, x.Timeout, x.Refused, x.Closed, x.NotExistFor, x.Down, x.FirstAnswer, x.FirstCode, x.P99us, x.MaxUs)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	for _, m := range r.Metrics {
		if _, err := fmt.Fprintf(w, "%-40s %14s %s\n", m.Name, strconv.FormatFloat(math.Round(m.Value*1000)/1000, 'f', -1, 64), m.Unit); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	for _, e := range r.Errors {
		if _, err := fmt.Fprintf(w, "error: %s\n", e); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}
