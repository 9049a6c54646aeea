// Tests of the status page's HTML and JSON against a route table driven by
// a fake clock.

package status

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

// t0 is the fixture's first registration, in unix ms.
const t0 int64 = 1_700_000_000_000

type fakeClock struct{ ms int64 }

func (c *fakeClock) unixMs() int64   { return c.ms }
func (c *fakeClock) time() time.Time { return time.UnixMilli(c.ms) }

func topicConf(name string, queues, perm int32) body.TopicConfig {
	return body.TopicConfig{TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm}
}

func register(t *testing.T, tb *route.Table, cluster, name string, id int64, addr, zone string, timeout int64, topics ...body.TopicConfig) {
	t.Helper()
	_, err := tb.Register(&route.Registration{
		Cluster:                cluster,
		BrokerAddr:             addr,
		BrokerName:             name,
		HAServerAddr:           strings.TrimSuffix(addr, "1") + "2",
		ZoneName:               zone,
		BrokerID:               id,
		HeartbeatTimeoutMillis: timeout,
		Body: &body.RegisterBroker{
			FilterServerList: []string{},
			DataVersion:      body.DataVersion{Timestamp: 1, Counter: 1},
			Topics:           topics,
		},
	})
	if err != nil {
		t.Fatalf("register %s/%d: %v", name, id, err)
	}
}

// fixture is two clusters, three broker groups and five topics, looked at
// 32 s after the first registration: broker-c's 10 s timeout has run out
// but no expiry scan has removed it yet.
func fixture(t *testing.T) (*route.Table, *fakeClock) {
	t.Helper()
	clk := &fakeClock{ms: t0}
	tb := route.New(route.Options{}, clk.unixMs)
	register(t, tb, "DefaultCluster", "broker-a", 0, "10.0.0.1:10911", "", 0,
		topicConf("TopicTest", 8, 6), topicConf("TBW102", 4, 7))
	register(t, tb, "alpha", "broker-c", 0, "10.0.1.1:10911", "", 10000,
		topicConf("X", 1, 6), topicConf("Y", 1, 6))
	clk.ms = t0 + 5000
	register(t, tb, "DefaultCluster", "broker-a", 1, "10.0.0.2:10911", "", 0)
	clk.ms = t0 + 20000
	register(t, tb, "DefaultCluster", "broker-b", 0, "10.0.0.3:10911", "z1", 0,
		topicConf("TopicTest", 4, 4), topicConf("Other", 2, 6))
	clk.ms = t0 + 32000
	return tb, clk
}

type response struct {
	code int
	hdr  http.Header
	body string
}

func get(t *testing.T, tb *route.Table, clk *fakeClock, method, target string) response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(tb, clk.time).ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return response{rec.Code, rec.Header(), rec.Body.String()}
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr class="([^"]*)">(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// rows returns the table rows whose class list starts with class, as
// "classes: cell|cell|...", cells as they appear in the markup (escaped).
func rows(html, class string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(html, -1) {
		if m[1] != class && !strings.HasPrefix(m[1], class+" ") {
			continue
		}
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(m[2], -1) {
			cells = append(cells, c[1])
		}
		out = append(out, m[1]+": "+strings.Join(cells, "|"))
	}
	return out
}

func checkRows(t *testing.T, html, class string, want ...string) {
	t.Helper()
	if got := rows(html, class); !slices.Equal(got, want) {
		t.Fatalf("%s rows:\n got %q\nwant %q", class, got, want)
	}
}

func checkContains(t *testing.T, html string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(html, w) {
			t.Fatalf("page lacks %q:\n%s", w, html)
		}
	}
}

// The broker rows of the fixture, in page order.
var fixtureBrokerRows = []string{
	"broker: broker-a|0|10.0.0.1:10911|master|32 s ago|120 s|10.0.0.1:10912||writable",
	"broker: broker-a|1|10.0.0.2:10911|slave|27 s ago|120 s|10.0.0.2:10912||writable",
	"broker: broker-b|0|10.0.0.3:10911|master|12 s ago|120 s|10.0.0.3:10912|z1|partly: 1 of 2 topics",
	"broker overdue: broker-c|0|10.0.1.1:10911|master|32 s ago, overdue|10 s|10.0.1.1:10912||writable",
}

func TestPageBrokers(t *testing.T) {
	tb, clk := fixture(t)
	r := get(t, tb, clk, http.MethodGet, "/")
	if r.code != http.StatusOK {
		t.Fatalf("GET /: %d %s", r.code, r.body)
	}
	if ct := r.hdr.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	if csp := r.hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q does not forbid scripts", csp)
	}
	checkRows(t, r.body, "broker", fixtureBrokerRows...)
	checkContains(t, r.body,
		"Generated 2023-11-14T22:13:52Z",
		`<td class="num" id="topic-count">5</td>`,
		"<tr><th>Clusters</th><td class=\"num\">2</td></tr>",
		"<tr><th>Broker addresses</th><td class=\"num\">4</td></tr>",
		"<h3>Cluster DefaultCluster</h3>\n<p class=\"muted\">2 broker groups, 3 addresses</p>",
		"<h3>Cluster alpha</h3>\n<p class=\"muted\">1 broker group, 1 address</p>",
	)
	// Byte order: upper case sorts first.
	if strings.Index(r.body, "Cluster DefaultCluster") > strings.Index(r.body, "Cluster alpha") {
		t.Fatal("clusters not sorted")
	}
	// No topic asked: no route section, and the topic list is never
	// rendered, only counted.
	if strings.Contains(r.body, `id="no-route"`) || strings.Contains(r.body, `id="queues"`) {
		t.Fatal("route section without a topic")
	}
	if strings.Contains(r.body, "TBW102") {
		t.Fatal("topic names listed on the main page")
	}

	// Time passes: ages follow the injected clock, not the wall clock; a
	// heartbeat resets one; a scan removes the overdue broker.
	clk.ms = t0 + 119_000
	if !tb.Heartbeat("DefaultCluster", "10.0.0.3:10911") {
		t.Fatal("heartbeat refused")
	}
	if evs := tb.ScanExpired(); len(evs) != 1 || evs[0].BrokerName != "broker-c" {
		t.Fatalf("scan evicted %+v, want broker-c", evs)
	}
	clk.ms = t0 + 121_000
	r = get(t, tb, clk, http.MethodGet, "/")
	checkRows(t, r.body, "broker",
		"broker overdue: broker-a|0|10.0.0.1:10911|master|2 min ago, overdue|120 s|10.0.0.1:10912||writable",
		"broker: broker-a|1|10.0.0.2:10911|slave|116 s ago|120 s|10.0.0.2:10912||writable",
		"broker: broker-b|0|10.0.0.3:10911|master|2 s ago|120 s|10.0.0.3:10912|z1|partly: 1 of 2 topics",
	)
	if strings.Contains(r.body, "Cluster alpha") {
		t.Fatal("evicted cluster still shown")
	}
}

func TestPageEmpty(t *testing.T) {
	clk := &fakeClock{ms: t0}
	tb := route.New(route.Options{}, clk.unixMs)
	r := get(t, tb, clk, http.MethodGet, "/")
	checkRows(t, r.body, "broker")
	checkContains(t, r.body, `<p id="no-brokers">No broker is registered.</p>`, `id="topic-count">0<`)
}

func TestPageRoute(t *testing.T) {
	tb, clk := fixture(t)
	r := get(t, tb, clk, http.MethodGet, "/?topic=TopicTest")
	if r.code != http.StatusOK {
		t.Fatalf("GET: %d %s", r.code, r.body)
	}
	checkContains(t, r.body, "<h3>Route of <code>TopicTest</code></h3>", `value="TopicTest"`)
	checkRows(t, r.body, "queue",
		"queue: broker-a|8|8|RW- (6)|0",
		"queue: broker-b|4|4|R-- (4)|0",
	)
	checkRows(t, r.body, "route-broker",
		"route-broker: broker-a|DefaultCluster||0|10.0.0.1:10911",
		"route-broker: broker-a|DefaultCluster||1|10.0.0.2:10911",
		"route-broker: broker-b|DefaultCluster|z1|0|10.0.0.3:10911",
	)
	// The broker table is still there below.
	checkRows(t, r.body, "broker", fixtureBrokerRows...)

	r = get(t, tb, clk, http.MethodGet, "/?topic=TBW102")
	checkRows(t, r.body, "queue", "queue: broker-a|4|4|RWX (7)|0")

	r = get(t, tb, clk, http.MethodGet, "/?topic=Nope")
	if r.code != http.StatusOK {
		t.Fatalf("unknown topic: %d", r.code)
	}
	checkContains(t, r.body, `<p id="no-route">No route for topic <code>Nope</code>.</p>`)
	checkRows(t, r.body, "queue")
	checkRows(t, r.body, "route-broker")

	// A topic whose only broker group expired has no route either.
	clk.ms = t0 + 32000
	tb.ScanExpired()
	r = get(t, tb, clk, http.MethodGet, "/?topic=X")
	checkContains(t, r.body, `<p id="no-route">No route for topic <code>X</code>.</p>`)
}

func TestPageEscapes(t *testing.T) {
	tb, clk := fixture(t)
	register(t, tb, `c<i>"&`, `<b onmouseover="x()">evil</b>`, 0, "10.9.9.1:10911", `<z>`, 0,
		topicConf("<script>alert(1)</script>", 1, 6), topicConf("ok", 1, 6))

	r := get(t, tb, clk, http.MethodGet, "/")
	for _, raw := range []string{"<b onmouseover", "<i>", "<z>"} {
		if strings.Contains(r.body, raw) {
			t.Fatalf("unescaped %q in page", raw)
		}
	}
	checkContains(t, r.body, "<h3>Cluster c&lt;i&gt;&#34;&amp;</h3>")
	checkRows(t, r.body, "broker", append(slices.Clone(fixtureBrokerRows),
		"broker: &lt;b onmouseover=&#34;x()&#34;&gt;evil&lt;/b&gt;|0|10.9.9.1:10911|master|0 s ago|120 s|10.9.9.1:10912|&lt;z&gt;|writable")...)

	// The topic typed into the form, known or not, comes back as text in
	// the heading or the no-route line and as an attribute value.
	f := func(topic, wantText string) {
		t.Helper()
		r := get(t, tb, clk, http.MethodGet, "/?topic="+url.QueryEscape(topic))
		if r.code != http.StatusOK {
			t.Fatalf("topic %q: %d", topic, r.code)
		}
		if strings.Contains(r.body, "<script") {
			t.Fatalf("topic %q: script element in page:\n%s", topic, r.body)
		}
		checkContains(t, r.body, wantText)
	}
	f("<script>alert(1)</script>", "<h3>Route of <code>&lt;script&gt;alert(1)&lt;/script&gt;</code></h3>")
	f("<script>alert(1)</script>", `value="&lt;script&gt;alert(1)&lt;/script&gt;"`)
	f("<script>x</script>", "No route for topic <code>&lt;script&gt;x&lt;/script&gt;</code>.")
	f(`"><script>x</script>`, `value="&#34;&gt;&lt;script&gt;x&lt;/script&gt;"`)
}

func TestPageRequests(t *testing.T) {
	tb, clk := fixture(t)
	f := func(method, target string, wantCode int, wantBody string) {
		t.Helper()
		r := get(t, tb, clk, method, target)
		if r.code != wantCode {
			t.Fatalf("%s %s: code %d, want %d (%s)", method, target, r.code, wantCode, r.body)
		}
		if !strings.Contains(r.body, wantBody) {
			t.Fatalf("%s %s: body lacks %q:\n%s", method, target, wantBody, r.body)
		}
		if wantCode == http.StatusMethodNotAllowed && r.hdr.Get("Allow") != "GET, HEAD" {
			t.Fatalf("%s %s: Allow %q", method, target, r.hdr.Get("Allow"))
		}
	}
	f(http.MethodPost, "/", http.StatusMethodNotAllowed, "method not allowed")
	f(http.MethodPost, "/?topic=TopicTest", http.StatusMethodNotAllowed, "method not allowed")
	f(http.MethodPut, "/", http.StatusMethodNotAllowed, "method not allowed")
	f(http.MethodDelete, "/", http.StatusMethodNotAllowed, "method not allowed")
	f(http.MethodGet, "/index.html", http.StatusNotFound, "404 page not found")
	f(http.MethodGet, "/?format=xml", http.StatusBadRequest, "unknown format")
	f(http.MethodGet, "/?topic="+strings.Repeat("t", 256), http.StatusBadRequest, "topic longer than 255 bytes")
	f(http.MethodGet, "/?topic="+strings.Repeat("t", 255), http.StatusOK, "No route for topic")
	f(http.MethodGet, "/?format=html", http.StatusOK, "<title>rocketns status</title>")
	f(http.MethodHead, "/", http.StatusOK, "")

	r := get(t, tb, clk, http.MethodHead, "/")
	if r.body != "" || r.hdr.Get("Content-Length") == "" || r.hdr.Get("Content-Length") == "0" {
		t.Fatalf("HEAD: body %q, Content-Length %q", r.body, r.hdr.Get("Content-Length"))
	}
}

func TestPageJSON(t *testing.T) {
	tb, clk := fixture(t)
	r := get(t, tb, clk, http.MethodGet, "/?format=json&topic=TopicTest")
	if r.code != http.StatusOK || r.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("json: %d %q", r.code, r.hdr.Get("Content-Type"))
	}
	var p page
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	if p.Now != t0+32000 || p.Stats != (stats{Clusters: 2, BrokerGroups: 3, BrokerAddrs: 4, LiveBrokers: 4, Topics: 5}) {
		t.Fatalf("now %d stats %+v", p.Now, p.Stats)
	}
	if len(p.Clusters) != 2 || p.Clusters[0].Name != "DefaultCluster" || p.Clusters[0].Groups != 2 || len(p.Clusters[0].Brokers) != 3 {
		t.Fatalf("clusters %+v", p.Clusters)
	}
	b := p.Clusters[0].Brokers[2]
	want := broker{Group: "broker-b", ID: 0, Addr: "10.0.0.3:10911", Role: "master", Live: true,
		LastUpdate: t0 + 20000, AgeMs: 12000, TimeoutMs: 120000, HAServerAddr: "10.0.0.3:10912", Zone: "z1",
		Topics: 2, WritableTopics: 1}
	if b != want {
		t.Fatalf("broker-b:\n got %+v\nwant %+v", b, want)
	}
	if c := p.Clusters[1].Brokers[0]; !c.Overdue || c.TimeoutMs != 10000 {
		t.Fatalf("broker-c: %+v", c)
	}
	if p.Found == nil || !*p.Found || p.Route == nil || len(p.Route.Queues) != 2 || len(p.Route.Brokers) != 3 {
		t.Fatalf("route: found %v route %+v", p.Found, p.Route)
	}
	if q := p.Route.Queues[1]; q != (queue{Group: "broker-b", Read: 4, Write: 4, Perm: 4}) {
		t.Fatalf("queue %+v", q)
	}

	r = get(t, tb, clk, http.MethodGet, "/?format=json&topic=Nope")
	checkContains(t, r.body, `"topic": "Nope"`, `"found": false`)
	if strings.Contains(r.body, `"route"`) {
		t.Fatalf("route for an unknown topic:\n%s", r.body)
	}
	r = get(t, tb, clk, http.MethodGet, "/?format=json")
	if strings.Contains(r.body, `"found"`) || strings.Contains(r.body, `"topic"`) {
		t.Fatalf("route fields without a topic:\n%s", r.body)
	}
}

func TestBrokerRowNotLive(t *testing.T) {
	b := brokerRow(route.BrokerStatus{Cluster: "c", BrokerName: "a", ID: 2, Addr: "x", Role: route.RoleSlave}, t0)
	if b.Live || b.Age != "not live" || b.TimeoutText != "" || b.Overdue || b.AgeMs != 0 {
		t.Fatalf("not-live row %+v", b)
	}
	b = brokerRow(route.BrokerStatus{BrokerName: "a", ID: 1, Role: route.RoleSlave, ActsAsMaster: true, ActingMaster: true,
		Live: true, LastUpdate: t0 + 500, Timeout: 120000}, t0)
	if b.RoleText != "slave (acting master)" || b.Age != "0 s ago" || b.AgeMs != 0 {
		t.Fatalf("acting-master row with a clock behind the table %+v", b)
	}
}

func TestAge(t *testing.T) {
	f := func(ms int64, want string) {
		t.Helper()
		if got := Age(ms); got != want {
			t.Fatalf("Age(%d) = %q, want %q", ms, got, want)
		}
	}
	f(-5, "0 s ago")
	f(0, "0 s ago")
	f(999, "0 s ago")
	f(12_000, "12 s ago")
	f(119_999, "119 s ago")
	f(120_000, "2 min ago")
	f(2*3600_000-1, "119 min ago")
	f(2*3600_000, "2 h ago")
	f(48*3600_000, "2 d ago")
}

func TestDuration(t *testing.T) {
	f := func(ms int64, want string) {
		t.Helper()
		if got := Duration(ms); got != want {
			t.Fatalf("Duration(%d) = %q, want %q", ms, got, want)
		}
	}
	f(120000, "120 s")
	f(1500, "1500 ms")
	f(0, "0 s")
}

func TestPermString(t *testing.T) {
	f := func(perm int32, want string) {
		t.Helper()
		if got := PermString(perm); got != want {
			t.Fatalf("PermString(%d) = %q, want %q", perm, got, want)
		}
	}
	f(0, "---")
	f(2, "-W-")
	f(4, "R--")
	f(6, "RW-")
	f(7, "RWX")
	f(1, "--X")
	f(8|6, "RW-")
}
