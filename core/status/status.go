// status.go holds the handler: the page's data, taken from a snapshot
// shared between requests for a short time, and its rendering as HTML or
// JSON.

package status

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

// maxTopicLen bounds the topic a visitor may ask for. Java's
// TopicValidator refuses names over 127 characters; anything longer cannot
// have a route and is not worth echoing back.
const maxTopicLen = 255

// csp forbids scripts outright: the page has none, so a value that slipped
// past escaping still could not run. Inline style is the only thing it loads.
const csp = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Defaults of Options.
const (
	DefaultMaxRows  = 500
	DefaultCacheFor = time.Second
	DefaultRefresh  = 15 * time.Second
)

// Info is what the page says about the process, read once per snapshot.
type Info struct {
	Version string
	Started time.Time // zero before the server started
	Listen  string    // the remoting address
	Ready   string    // "" when /readyz answers 200, else why not
	Start   string    // how the server started: warm from a route snapshot, or cold and why
}

// Options configure the page.
type Options struct {
	Routes *route.Table
	// Clock is what heartbeat ages, uptime and the cache are measured
	// against.
	Clock func() time.Time
	// Info, when set, adds version, uptime, address and readiness.
	Info func() Info
	// History, when set, adds the chart.
	History *History
	// MaxRows bounds the broker rows (a line says how many more there
	// are); 0 is DefaultMaxRows.
	MaxRows int
	// CacheFor is how long one snapshot, and the page rendered from it,
	// serves every request: concurrent visitors share one render. 0 means
	// a snapshot per request.
	CacheFor time.Duration
	// Refresh is the page's auto-refresh interval; 0 is DefaultRefresh,
	// negative turns it off. ?refresh=0 turns it off for one visitor.
	Refresh time.Duration
	// ControllerPath, when set, is where the page of the controller
	// running in the same process is served (ControllerHandler); the page
	// links to it.
	ControllerPath string
}

type handler struct {
	o    Options
	tmpl *template.Template

	// mu makes concurrent requests wait for one snapshot instead of each
	// building their own: the cost of the page is one build per CacheFor.
	mu       sync.Mutex
	snapAt   time.Time
	snap     *page
	rendered map[renderKey][]byte // pages of snap without a topic
}

type renderKey struct {
	json, noRefresh bool
}

// Handler serves the status page from t's current state, a snapshot per
// request. now is the clock heartbeat ages are measured against.
//
// GET / renders HTML; ?topic=X adds that topic's route; ?format=json answers
// the same data as JSON. Other paths are 404, other methods 405.
func Handler(t *route.Table, now func() time.Time) http.Handler {
	return New(Options{Routes: t, Clock: now})
}

// New serves the status page of o.
func New(o Options) http.Handler {
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.Refresh == 0 {
		o.Refresh = DefaultRefresh
	}
	return &handler{o: o, tmpl: template.Must(template.New("status").Parse(pageHTML))}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the status page is read-only", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	topic := q.Get("topic")
	if len(topic) > maxTopicLen {
		http.Error(w, fmt.Sprintf("topic longer than %d bytes", maxTopicLen), http.StatusBadRequest)
		return
	}
	format := q.Get("format")
	if format != "" && format != "html" && format != "json" {
		http.Error(w, "unknown format: want html or json", http.StatusBadRequest)
		return
	}
	key := renderKey{json: format == "json", noRefresh: q.Get("refresh") == "0" || h.o.Refresh < 0}

	out, err := h.page(topic, key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	if key.json {
		hdr.Set("Content-Type", "application/json")
	} else {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Security-Policy", csp)
	}
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(out)
	}
}

// page returns the rendered page: from the shared snapshot, rendered once
// per snapshot when no topic is asked for.
func (h *handler) page(topic string, key renderKey) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.o.Clock()
	if h.snap == nil || h.o.CacheFor <= 0 || now.Sub(h.snapAt) >= h.o.CacheFor || now.Before(h.snapAt) {
		h.snap, h.snapAt, h.rendered = h.build(now), now, map[renderKey][]byte{}
	}
	if topic == "" {
		if out, ok := h.rendered[key]; ok {
			return out, nil
		}
	}
	p := *h.snap
	p.Topic = topic
	p.NoRefresh = key.noRefresh
	if topic != "" {
		r, ok := h.o.Routes.Route(topic)
		p.Found = &ok
		if ok {
			p.Route = routeRows(r)
		}
	}
	out, err := h.render(&p, key.json)
	if err == nil && topic == "" {
		h.rendered[key] = out
	}
	return out, err
}

// render renders p whole before the first byte goes out, so an error is a
// clean 500 instead of half a page.
func (h *handler) render(p *page, asJSON bool) ([]byte, error) {
	var buf bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			return nil, fmt.Errorf("encode status: %w", err)
		}
		return buf.Bytes(), nil
	}
	if err := h.tmpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("render status: %w", err)
	}
	return buf.Bytes(), nil
}

// page is what both renderings show. Fields tagged "-" are preformatted
// text for the HTML.
type page struct {
	Now       int64     `json:"now"` // unix ms
	Generated string    `json:"-"`
	Process   *process  `json:"process,omitempty"`
	Stats     stats     `json:"stats"`
	Clusters  []cluster `json:"clusters"`
	// MoreBrokers counts the broker rows left out beyond MaxRows.
	MoreBrokers int            `json:"moreBrokers,omitempty"`
	MaxRows     int            `json:"-"`
	Chart       template.HTML  `json:"-"`
	ChartEvery  string         `json:"-"`
	History     []historyPoint `json:"history,omitempty"`
	Refresh     int            `json:"-"` // seconds; 0 is off
	NoRefresh   bool           `json:"-"`
	Topic       string         `json:"topic,omitempty"`
	// ControllerPath links the embedded controller's page.
	ControllerPath string `json:"controllerPage,omitempty"`
	// Found is set only when a topic was asked for; Route only when found.
	Found *bool      `json:"found,omitempty"`
	Route *routeView `json:"route,omitempty"`
}

type process struct {
	Version   string `json:"version"`
	StartedMs int64  `json:"started,omitempty"` // unix ms
	UptimeMs  int64  `json:"uptimeMs,omitempty"`
	Uptime    string `json:"-"`
	Listen    string `json:"listen"`
	Ready     bool   `json:"ready"`
	NotReady  string `json:"notReady,omitempty"`
	Start     string `json:"start,omitempty"`
}

type historyPoint struct {
	At       int64   `json:"at"` // unix ms
	RouteQPS float64 `json:"routeQps"`
	RouteP99 float64 `json:"routeP99Ms"`
	RegQPS   float64 `json:"registrationQps"`
}

type stats struct {
	Clusters     int `json:"clusters"`
	BrokerGroups int `json:"brokerGroups"`
	BrokerAddrs  int `json:"brokerAddrs"`
	LiveBrokers  int `json:"liveBrokers"`
	Topics       int `json:"topics"`
}

type cluster struct {
	Name    string   `json:"name"`
	Groups  int      `json:"brokerGroups"`
	Brokers []broker `json:"brokers"`
}

type broker struct {
	Group        string `json:"brokerName"`
	ID           int64  `json:"brokerId"`
	Addr         string `json:"addr"`
	Role         string `json:"role"`
	ActsAsMaster bool   `json:"actsAsMaster,omitempty"`
	ActingMaster bool   `json:"enableActingMaster"`
	Live         bool   `json:"live"`
	LastUpdate   int64  `json:"lastHeartbeat,omitempty"` // unix ms
	AgeMs        int64  `json:"ageMs,omitempty"`
	TimeoutMs    int64  `json:"timeoutMs,omitempty"`
	Overdue      bool   `json:"overdue,omitempty"`
	HAServerAddr string `json:"haServerAddr,omitempty"`
	Zone         string `json:"zone,omitempty"`
	Conn         uint64 `json:"conn,omitempty"`
	// WritableTopics of Topics hold write permission for the group; a
	// group with topics and none writable was wiped.
	Topics         int  `json:"topics"`
	WritableTopics int  `json:"writableTopics"`
	Wiped          bool `json:"writeWiped,omitempty"`

	WriteText   string `json:"-"`
	RoleText    string `json:"-"`
	Age         string `json:"-"`
	TimeoutText string `json:"-"`
}

type routeView struct {
	Queues        []queue        `json:"queueDatas"`
	Brokers       []routeBroker  `json:"brokerAddrs"`
	FilterServers []filterServer `json:"filterServers,omitempty"`
}

type queue struct {
	Group    string `json:"brokerName"`
	Read     int32  `json:"readQueueNums"`
	Write    int32  `json:"writeQueueNums"`
	Perm     int32  `json:"perm"`
	PermText string `json:"-"`
	SysFlag  int32  `json:"topicSysFlag"`
}

// routeBroker is one address of a broker group in a route, one row per
// address so the table stays flat.
type routeBroker struct {
	Cluster string `json:"cluster"`
	Group   string `json:"brokerName"`
	Zone    string `json:"zone,omitempty"`
	ID      int64  `json:"brokerId"`
	Addr    string `json:"addr"`
}

type filterServer struct {
	Addr    string   `json:"brokerAddr"`
	Servers []string `json:"servers"`
}

// build takes the snapshot every request until the next one is served
// from: counts, process, chart and the first MaxRows broker rows with
// their group's write permission.
func (h *handler) build(now time.Time) *page {
	nowMs := now.UnixMilli()
	st := h.o.Routes.Stats()
	p := &page{
		Now:       nowMs,
		Generated: now.UTC().Format(time.RFC3339),
		Stats: stats{
			Clusters:     st.Clusters,
			BrokerGroups: st.BrokerGroups,
			BrokerAddrs:  st.BrokerAddrs,
			LiveBrokers:  st.Live,
			Topics:       st.Topics,
		},
		Clusters:       []cluster{},
		MaxRows:        h.o.MaxRows,
		ControllerPath: h.o.ControllerPath,
	}
	if h.o.Refresh > 0 {
		p.Refresh = max(int(h.o.Refresh/time.Second), 1)
	}
	if h.o.Info != nil {
		in := h.o.Info()
		p.Process = &process{Version: in.Version, Listen: in.Listen, Ready: in.Ready == "", NotReady: in.Ready, Start: in.Start}
		if !in.Started.IsZero() {
			up := max(now.Sub(in.Started), 0)
			p.Process.StartedMs, p.Process.UptimeMs, p.Process.Uptime = in.Started.UnixMilli(), up.Milliseconds(), uptime(up)
		}
	}
	if h.o.History != nil {
		samples := h.o.History.Samples()
		p.Chart = chartSVG(samples, h.o.History.Span(), now)
		p.ChartEvery = h.o.History.Every().String()
		for _, s := range samples {
			p.History = append(p.History, historyPoint{At: s.At.UnixMilli(), RouteQPS: s.RouteQPS,
				RouteP99: float64(s.RouteP99) / 1e6, RegQPS: s.RegQPS})
		}
	}
	// Rows beyond MaxRows are counted, not shown: the page's cost stays
	// bounded in a large deployment (nsadmin clusterList lists them all).
	// Topics are only counted; their list is what nsadmin topicList is for.
	all := h.o.Routes.BrokerStatus()
	shown := all[:min(len(all), h.o.MaxRows)]
	p.MoreBrokers = len(all) - len(shown)
	var cur *cluster
	lastGroup := ""
	var perm struct{ writable, total int }
	for _, s := range shown {
		if cur == nil || cur.Name != s.Cluster {
			p.Clusters = append(p.Clusters, cluster{Name: s.Cluster})
			cur = &p.Clusters[len(p.Clusters)-1]
			lastGroup = ""
		}
		if len(cur.Brokers) == 0 || s.BrokerName != lastGroup {
			cur.Groups++
			lastGroup = s.BrokerName
			perm.writable, perm.total = h.o.Routes.WritePerm(s.BrokerName)
		}
		b := brokerRow(s, nowMs)
		b.WritableTopics, b.Topics = perm.writable, perm.total
		b.Wiped, b.WriteText = writeText(perm.writable, perm.total)
		cur.Brokers = append(cur.Brokers, b)
	}
	return p
}

// writeText is the write permission cell of a group with writable of total
// topics writable.
func writeText(writable, total int) (wiped bool, text string) {
	switch {
	case total == 0:
		return false, "no topics"
	case writable == 0:
		return true, "WIPED: read-only"
	case writable < total:
		return false, fmt.Sprintf("partly: %d of %d topics", writable, total)
	}
	return false, "writable"
}

// uptime formats how long the process has run in its two largest units.
func uptime(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%d d %d h", s/86400, s%86400/3600)
}

func brokerRow(s route.BrokerStatus, nowMs int64) broker {
	b := broker{
		Group:        s.BrokerName,
		ID:           s.ID,
		Addr:         s.Addr,
		Role:         s.Role,
		RoleText:     s.Role,
		ActsAsMaster: s.ActsAsMaster,
		ActingMaster: s.ActingMaster,
		Live:         s.Live,
		HAServerAddr: s.HAServerAddr,
		Zone:         s.Zone,
		Conn:         uint64(s.Conn),
		Age:          "not live",
	}
	if s.ActsAsMaster {
		b.RoleText = s.Role + " (acting master)"
	}
	if s.Live {
		b.LastUpdate = s.LastUpdate
		b.AgeMs = max(nowMs-s.LastUpdate, 0)
		b.TimeoutMs = s.Timeout
		b.Age = Age(b.AgeMs)
		b.TimeoutText = Duration(s.Timeout)
		// Past its timeout but not yet evicted: the next expiry scan
		// drops it.
		b.Overdue = b.AgeMs > s.Timeout
		if b.Overdue {
			b.Age += ", overdue"
		}
	}
	return b
}

func routeRows(r *body.TopicRoute) *routeView {
	v := &routeView{Queues: make([]queue, 0, len(r.QueueDatas)), Brokers: []routeBroker{}}
	for _, q := range r.QueueDatas {
		v.Queues = append(v.Queues, queue{
			Group:    q.BrokerName,
			Read:     q.ReadQueueNums,
			Write:    q.WriteQueueNums,
			Perm:     q.Perm,
			PermText: PermString(q.Perm),
			SysFlag:  q.TopicSysFlag,
		})
	}
	slices.SortStableFunc(v.Queues, func(a, b queue) int { return cmp.Compare(a.Group, b.Group) })
	bds := slices.Clone(r.BrokerDatas)
	slices.SortStableFunc(bds, func(a, b body.BrokerData) int { return cmp.Compare(a.BrokerName, b.BrokerName) })
	for _, bd := range bds {
		for _, a := range bd.Addrs {
			v.Brokers = append(v.Brokers, routeBroker{Cluster: bd.Cluster, Group: bd.BrokerName, Zone: bd.ZoneName, ID: a.ID, Addr: a.Addr})
		}
	}
	for _, addr := range sortedKeys(r.FilterServerTable) {
		v.FilterServers = append(v.FilterServers, filterServer{Addr: addr, Servers: r.FilterServerTable[addr]})
	}
	return v
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Age formats a heartbeat age in ms the way the page shows it: whole
// seconds up to two minutes (the default broker timeout), then minutes,
// hours and days, so the unit says at a glance how stale a broker is.
func Age(ms int64) string {
	s := max(ms, 0) / 1000
	switch {
	case s < 120:
		return fmt.Sprintf("%d s ago", s)
	case s < 120*60:
		return fmt.Sprintf("%d min ago", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%d h ago", s/3600)
	}
	return fmt.Sprintf("%d d ago", s/86400)
}

// Duration formats a timeout in ms: seconds when whole, else ms.
func Duration(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

// PermString is Java's PermName.perm2String: R, W and X (inherit) or '-'
// in that order.
func PermString(perm int32) string {
	b := []byte("---")
	if perm&route.PermRead != 0 {
		b[0] = 'R'
	}
	if perm&route.PermWrite != 0 {
		b[1] = 'W'
	}
	if perm&route.PermInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}
