// text.go writes collectors in the Prometheus text format, for tests and
// for callers without an HTTP listener.

package metrics

import (
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// WriteText writes what cs collect, in the Prometheus text format, through
// a registry of their own (which checks them as a scrape would).
func WriteText(w io.Writer, cs ...prometheus.Collector) error {
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("metrics: register: %w", err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("metrics: gather: %w", err)
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}
