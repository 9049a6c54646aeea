// status.go holds the handler: the page's data and its rendering as HTML
// or JSON.

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

type handler struct {
	t    *route.Table
	now  func() time.Time
	tmpl *template.Template
}

// Handler serves the status page from t's current state. now is the clock
// heartbeat ages are measured against.
//
// GET / renders HTML; ?topic=X adds that topic's route; ?format=json answers
// the same data as JSON. Other paths are 404, other methods 405.
func Handler(t *route.Table, now func() time.Time) http.Handler {
	return &handler{t: t, now: now, tmpl: template.Must(template.New("status").Parse(pageHTML))}
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

	p := h.build(topic)
	var buf bytes.Buffer
	hdr := w.Header()
	if format == "json" {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			http.Error(w, fmt.Sprintf("encode status: %v", err), http.StatusInternalServerError)
			return
		}
		hdr.Set("Content-Type", "application/json")
	} else {
		// Rendered whole before the first byte goes out, so a template
		// error is a clean 500 instead of half a page.
		if err := h.tmpl.Execute(&buf, p); err != nil {
			http.Error(w, fmt.Sprintf("render status: %v", err), http.StatusInternalServerError)
			return
		}
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Security-Policy", csp)
	}
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// page is what both renderings show. Fields tagged "-" are preformatted
// text for the HTML.
type page struct {
	Now       int64     `json:"now"` // unix ms
	Generated string    `json:"-"`
	Stats     stats     `json:"stats"`
	Clusters  []cluster `json:"clusters"`
	Topic     string    `json:"topic,omitempty"`
	// Found is set only when a topic was asked for; Route only when found.
	Found *bool      `json:"found,omitempty"`
	Route *routeView `json:"route,omitempty"`
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

func (h *handler) build(topic string) *page {
	now := h.now()
	nowMs := now.UnixMilli()
	st := h.t.Stats()
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
		Clusters: []cluster{},
		Topic:    topic,
	}
	// Every broker is listed even in a large deployment: a few hundred
	// rows is a page an operator reads. Topics are only counted; their
	// list is what nsadmin topicList is for.
	var cur *cluster
	lastGroup := ""
	for _, s := range h.t.BrokerStatus() {
		if cur == nil || cur.Name != s.Cluster {
			p.Clusters = append(p.Clusters, cluster{Name: s.Cluster})
			cur = &p.Clusters[len(p.Clusters)-1]
			lastGroup = ""
		}
		if len(cur.Brokers) == 0 || s.BrokerName != lastGroup {
			cur.Groups++
			lastGroup = s.BrokerName
		}
		cur.Brokers = append(cur.Brokers, brokerRow(s, nowMs))
	}
	if topic != "" {
		r, ok := h.t.Route(topic)
		p.Found = &ok
		if ok {
			p.Route = routeRows(r)
		}
	}
	return p
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
