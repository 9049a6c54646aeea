//go:build e2e

// A short run of every scenario against an in-process rocketns, with tiny
// sizes: it checks that each produces figures and no errors.

package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"
)

func smokeOptions() Options {
	return Options{
		Inproc:   true,
		Cluster:  ClusterSpec{Brokers: 4, Topics: 50, PerTopic: 2},
		Conns:    []int{2},
		Depth:    []int{2},
		Duration: time.Second,
		Limit:    true,
	}
}

func TestSmokeScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every scenario for about a second each")
	}
	f := func(name string, adjust func(*Options), check func(*testing.T, *Report)) {
		scenario, _, _ := strings.Cut(name, "/")
		t.Run(name, func(t *testing.T) {
			o := smokeOptions()
			if adjust != nil {
				adjust(&o)
			}
			r, err := Run(context.Background(), scenario, o)
			if err != nil {
				t.Fatalf("Run(%s): %v", scenario, err)
			}
			if len(r.Errors) > 0 || r.Interrupted {
				t.Fatalf("Run(%s) errors %v interrupted %v", scenario, r.Errors, r.Interrupted)
			}
			for _, row := range r.Rows {
				if row.Errors != 0 {
					t.Errorf("row %q: %d errors", row.Name, row.Errors)
				}
			}
			check(t, r)
		})
	}
	rowsWithQPS := func(names ...string) func(*testing.T, *Report) {
		return func(t *testing.T, r *Report) {
			t.Helper()
			for _, name := range names {
				found := false
				for _, row := range r.Rows {
					if row.Name != name {
						continue
					}
					found = true
					if row.QPS <= 0 || row.Requests == 0 || row.P99us <= 0 {
						t.Errorf("row %q: QPS %v requests %d p99 %v, want all > 0", name, row.QPS, row.Requests, row.P99us)
					}
				}
				if !found {
					t.Errorf("no row %q in %+v", name, r.Rows)
				}
			}
		}
	}
	metric := func(t *testing.T, r *Report, name string) float64 {
		t.Helper()
		v, ok := r.Metric(name)
		if !ok {
			t.Fatalf("no metric %q in %+v", name, r.Metrics)
		}
		return v
	}

	f(ScenarioRoute, nil, func(t *testing.T, r *Report) {
		rowsWithQPS("limit", "route")(t, r)
		if r.Rows[1].VsLimit <= 0 {
			t.Errorf("route row has no ratio to the limit: %+v", r.Rows[1])
		}
		if got := metric(t, r, "topic_broker_entries"); got != 100 {
			t.Errorf("entries = %v, want 50 topics x 2", got)
		}
	})
	f(ScenarioLimit, nil, rowsWithQPS("limit"))
	f(ScenarioRoute+"/zipf", func(o *Options) { o.Zipf = 1.2; o.Limit = false }, rowsWithQPS("route"))
	f(ScenarioStorm, nil, func(t *testing.T, r *Report) {
		rowsWithQPS("limit", "idle (1st half)", "storm (2nd half)")(t, r)
		if metric(t, r, "storm_registrations") == 0 {
			t.Error("the storm registered nothing")
		}
		metric(t, r, "storm_p99_over_idle_p99")
		metric(t, r, "storm_p999_over_idle_p999")
	})
	f(ScenarioExpiry, func(o *Options) { o.DropPercents = []int{50} }, func(t *testing.T, r *Report) {
		rowsWithQPS("drop 50%: before", "drop 50%: after")(t, r)
		metric(t, r, "drop_50_pct_converged")
	})
	f(ScenarioExpiry+"/silent", func(o *Options) {
		o.DropPercents = []int{100}
		o.Silent = true
		o.ScanIntervalMillis = 50
		o.Cluster.TimeoutMillis = 200
		o.Duration = 1500 * time.Millisecond
	}, func(t *testing.T, r *Report) {
		rowsWithQPS("silent 100%: before")(t, r)
		metric(t, r, "silent_100_pct_converged")
	})
	f(ScenarioRegisterBig, func(o *Options) { o.BigTopics = 2000 }, func(t *testing.T, r *Report) {
		if metric(t, r, "register_first") <= 0 || metric(t, r, "after_rss") <= 0 {
			t.Errorf("register-big figures missing: %+v", r.Metrics)
		}
	})
	f(ScenarioPipeline, func(o *Options) {
		o.Duration = 1500 * time.Millisecond
		o.Pipeline = PipelineSpec{Conns: 4, Requests: 50, From: "127.0.0.2"}
	}, func(t *testing.T, r *Report) {
		rowsWithQPS("idle", "attack", "after")(t, r)
		if metric(t, r, "attack_connections_opened") != 4 || metric(t, r, "rss_attack_max") <= 0 {
			t.Errorf("pipeline figures missing: %+v", r.Metrics)
		}
	})
	f(ScenarioRSS, nil, func(t *testing.T, r *Report) {
		if metric(t, r, "registered_rss") <= 0 {
			t.Errorf("rss figures missing: %+v", r.Metrics)
		}
		metric(t, r, "routes_cached_bytes_per_entry")
	})
}
