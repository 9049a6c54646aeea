// scrape.go holds the collector of values read at scrape time: table
// sizes, raft state, anything a server computes when asked rather than
// counting as it goes.

package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Family describes one series family of a Scrape collector.
type Family struct {
	Name, Help string
	Type       prometheus.ValueType // prometheus.GaugeValue or CounterValue
	Labels     []string             // label names; values come with each Emit
}

// Scrape is a collector whose values one function reads on each scrape,
// so a server takes its tables' locks once per scrape, not once per
// series.
type Scrape struct {
	families map[string]scrapeFamily
	descs    []*prometheus.Desc
	read     func(e Emitter)
}

type scrapeFamily struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

// NewScrape makes a collector of families; read is called on each scrape
// and emits their values.
func NewScrape(read func(e Emitter), families ...Family) *Scrape {
	s := &Scrape{families: make(map[string]scrapeFamily, len(families)), read: read}
	for _, f := range families {
		d := prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
		s.families[f.Name] = scrapeFamily{d, f.Type}
		s.descs = append(s.descs, d)
	}
	return s
}

// Emitter sends one scrape's values.
type Emitter struct {
	s  *Scrape
	ch chan<- prometheus.Metric
}

// Emit sends family name's value v with the family's label values. A name
// that was not described is a programming error, reported through the
// scrape as an invalid metric.
func (e Emitter) Emit(name string, v float64, labelValues ...string) {
	f, ok := e.s.families[name]
	if !ok {
		e.ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(fmt.Errorf("metrics: %s emitted, not described", name)), nil)
		return
	}
	m, err := prometheus.NewConstMetric(f.desc, f.typ, v, labelValues...)
	if err != nil {
		m = prometheus.NewInvalidMetric(f.desc, err)
	}
	e.ch <- m
}

// Describe is prometheus.Collector's.
func (s *Scrape) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range s.descs {
		ch <- d
	}
}

// Collect is prometheus.Collector's.
func (s *Scrape) Collect(ch chan<- prometheus.Metric) { s.read(Emitter{s, ch}) }
