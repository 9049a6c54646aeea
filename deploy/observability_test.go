// The Grafana dashboard (grafana/rocketns.json) and the alerting rules
// (prometheus/rocketns-rules.yaml) against a real scrape: a NameServer
// with a controller node on its admin listener, after some traffic. Every
// series a panel or a rule selects must be in that scrape, with the labels
// its matchers name, and the scrape must pass promlint.

package deploy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/ctlserver"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/server"
)

const (
	dashboardPath = "grafana/rocketns.json"
	rulesPath     = "prometheus/rocketns-rules.yaml"
)

// scraped is one scrape: per series name (histograms and summaries
// expanded into _bucket, _sum, _count), the label sets of its samples.
type scraped map[string][]map[string]string

// realScrape starts a NameServer and a one-node controller on its admin
// listener, sends a route query for a missing topic and a controller
// request that fails (so the lazily listed error series exist), and
// scrapes /metrics.
func realScrape(t *testing.T) (scraped, string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	cfg := config.Default()
	cfg.BindAddress, cfg.ListenPort, cfg.AdminListen = "127.0.0.1", 0, "127.0.0.1:0"
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	ns, err := server.New(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	raftAddr := ln.Addr().String()
	ln.Close()
	m, err := membership.Parse(membership.FromMap(map[string]string{
		membership.KeyDLedgerGroup: "g", membership.KeyDLedgerPeers: "n0-" + raftAddr, membership.KeyDLedgerSelfID: "n0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	cc := ctlserver.DefaultConfig(m, "")
	cc.InMemory, cc.BindAddress, cc.Logger = true, "127.0.0.1", quiet
	ctl, err := ctlserver.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	ctl.RegisterAdmin(ns.Admin())
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctl.Shutdown(ctx)
		ns.Shutdown(ctx)
	})
	if r := remotingtest.Dial(t, ns.Addr()).Call(remotingtest.Request(codec.GetRouteInfoByTopic, 1, "topic", "NoSuchTopic")); r.Code != codec.TopicNotExist {
		t.Fatalf("route of a missing topic: %d", r.Code)
	}
	remotingtest.Dial(t, ctl.Addr().String()).Call(remotingtest.Request(codec.ControllerGetSyncStateData, 1))

	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + ns.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	out := scraped{}
	for name, mf := range mfs {
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM:
				for _, b := range m.Histogram.Bucket {
					out[name+"_bucket"] = append(out[name+"_bucket"], with(labels, "le", model.FloatString(b.GetUpperBound()).String()))
				}
				out[name+"_bucket"] = append(out[name+"_bucket"], with(labels, "le", "+Inf"))
				out[name+"_sum"] = append(out[name+"_sum"], labels)
				out[name+"_count"] = append(out[name+"_count"], labels)
			case dto.MetricType_SUMMARY:
				for _, q := range m.Summary.Quantile {
					out[name] = append(out[name], with(labels, "quantile", model.FloatString(q.GetQuantile()).String()))
				}
				out[name+"_sum"] = append(out[name+"_sum"], labels)
				out[name+"_count"] = append(out[name+"_count"], labels)
			default:
				out[name] = append(out[name], labels)
			}
		}
	}
	return out, string(body)
}

func with(labels map[string]string, k, v string) map[string]string {
	m := map[string]string{k: v}
	for lk, lv := range labels {
		m[lk] = lv
	}
	return m
}

// selector is one series selector of an expression: a name and its
// matchers.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

var (
	rangeRE    = regexp.MustCompile(`\[[^\]]*\]`)
	groupingRE = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identRE    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	matcherRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
	promqlWord = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}
)

// selectors finds the series selectors of a PromQL expression: names not
// followed by "(" (functions, aggregations), outside label matchers and
// grouping lists, with the matchers that follow them. It reads the subset
// of PromQL the shipped files use.
func selectors(t *testing.T, where, expr string) []selector {
	t.Helper()
	e := strings.ReplaceAll(expr, "$__rate_interval", "5m")
	e = rangeRE.ReplaceAllString(e, "")
	e = groupingRE.ReplaceAllString(e, " ")
	var out []selector
	for i := 0; i < len(e); {
		loc := identRE.FindStringIndex(e[i:])
		if loc == nil {
			break
		}
		start, end := i+loc[0], i+loc[1]
		i = end
		if start > 0 && strings.ContainsRune("0123456789.", rune(e[start-1])) {
			continue // a number's exponent or a duration's unit
		}
		name := e[start:end]
		rest := strings.TrimLeft(e[end:], " \t\n")
		if strings.HasPrefix(rest, "(") || slices.Contains(promqlWord, name) {
			continue
		}
		sel := selector{name: name}
		if strings.HasPrefix(rest, "{") {
			close := strings.Index(rest, "}")
			if close < 0 {
				t.Fatalf("%s: unclosed matchers in %q", where, expr)
			}
			for _, m := range matcherRE.FindAllStringSubmatch(rest[1:close], -1) {
				sel.matchers = append(sel.matchers, matcher{m[1], m[2], m[3]})
			}
			i = len(e) - len(rest) + close + 1
		}
		out = append(out, sel)
	}
	if len(out) == 0 {
		t.Errorf("%s: no series in %q", where, expr)
	}
	return out
}

// check reports a selector that selects nothing of the scrape: an unknown
// name, a label the series lacks, or a value no series has (for = and
// =~; a regex over lazily listed values, as response=~"SYSTEM_ERROR|..."
// before any such error, is only checked for its label). instance and job
// are the scraper's own labels.
func (s scraped) check(t *testing.T, where string, sel selector) {
	t.Helper()
	series, ok := s[sel.name]
	if !ok {
		t.Errorf("%s: %s is not in a scrape of /metrics", where, sel.name)
		return
	}
	for _, m := range sel.matchers {
		if m.label == "instance" || m.label == "job" {
			continue
		}
		if !slices.ContainsFunc(series, func(l map[string]string) bool { _, ok := l[m.label]; return ok }) {
			t.Errorf("%s: %s has no label %q", where, sel.name, m.label)
			continue
		}
		if m.op == "=" && !slices.ContainsFunc(series, func(l map[string]string) bool { return l[m.label] == m.value }) {
			t.Errorf("%s: no %s{%s=%q} in the scrape", where, sel.name, m.label, m.value)
		}
	}
}

// rulesExprs are the expressions of the alerting rules, by alert name.
func rulesExprs(t *testing.T) map[string]string {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, rulesPath), &f); err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	out := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: rule %q of %s lacks alert, expr, a severity or a summary", rulesPath, r.Alert, g.Name)
			}
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("%s: %s: for %q: %v", rulesPath, r.Alert, r.For, err)
				}
			}
			if _, dup := out[r.Alert]; dup {
				t.Errorf("%s: alert %s twice", rulesPath, r.Alert)
			}
			out[r.Alert] = r.Expr
		}
	}
	return out
}

// dashboardExprs are the panel queries and the templating queries of the
// dashboard, by panel title.
func dashboardExprs(t *testing.T) map[string][]string {
	t.Helper()
	var d struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(readFile(t, dashboardPath), &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: no uid or title", dashboardPath)
	}
	out := map[string][]string{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d twice", dashboardPath, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardPath, p.Title)
		}
		for _, tg := range p.Targets {
			out["panel "+p.Title] = append(out["panel "+p.Title], tg.Expr)
		}
	}
	lv := regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*[A-Za-z_]+\s*\)$`)
	for _, v := range d.Templating.List {
		q, _ := v.Query.(string)
		if m := lv.FindStringSubmatch(q); m != nil {
			out["variable "+v.Name] = []string{m[1]}
		}
	}
	return out
}

func TestDashboardAndRulesMatchAScrape(t *testing.T) {
	s, body := realScrape(t)
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	used := map[string]bool{}
	for alert, expr := range rulesExprs(t) {
		for _, sel := range selectors(t, rulesPath+" "+alert, expr) {
			s.check(t, rulesPath+" "+alert, sel)
			used[sel.name] = true
		}
	}
	for where, exprs := range dashboardExprs(t) {
		for _, expr := range exprs {
			for _, sel := range selectors(t, dashboardPath+" "+where, expr) {
				s.check(t, dashboardPath+" "+where, sel)
				used[sel.name] = true
			}
		}
	}
	// The rules cover what the issue asks for, and the dashboard every
	// rocketns family.
	for _, must := range []string{"rocketns_ready", "rocketns_brokers", "rocketns_request_errors_total",
		"rocketns_request_duration_seconds_bucket", "rocketns_controller_raft_has_leader"} {
		if !used[must] {
			t.Errorf("nothing uses %s", must)
		}
	}
	for name := range s {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !strings.HasPrefix(name, "rocketns_") || used[name] || used[base+"_bucket"] {
			continue
		}
		if strings.HasSuffix(name, "_sum") || strings.HasSuffix(name, "_count") {
			continue
		}
		t.Errorf("%s is in the scrape but on no panel", name)
	}
}

// The expression reader finds what it should, so the test above checks
// something.
func TestPromQLSelectors(t *testing.T) {
	got := selectors(t, "test", `histogram_quantile(0.99, sum by (instance, le) (rate(a_bucket{class="route",instance=~"$instance"}[$__rate_interval]))) > 2.5e-2
		and on (instance) b == 0 unless max_over_time(c[30m]) / d{x!="y"}`)
	want := []selector{{"a_bucket", []matcher{{"class", "=", "route"}, {"instance", "=~", "$instance"}}}, {"b", nil}, {"c", nil},
		{"d", []matcher{{"x", "!=", "y"}}}}
	if !slices.EqualFunc(got, want, func(a, b selector) bool { return a.name == b.name && slices.Equal(a.matchers, b.matchers) }) {
		t.Fatalf("selectors %+v, want %+v", got, want)
	}
}
