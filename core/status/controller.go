// The controller's status page: this node's raft view, then each broker set
// with its master, SyncStateSet, epochs and members, as HTML or JSON.

package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ControllerView is what the controller's page shows of a node, taken
// when the page is asked for. cmd/namesrv fills it from a ctlserver node
// (whose Groups are already in this package's model), so this package
// (part of the NameServer) stays apart from the raft engine.
type ControllerView struct {
	ID   string
	Raft ControllerRaft
	// Sets counts the broker sets, SetsWithoutMaster those with none,
	// BrokersAlive the brokers heard from in time (this node's view).
	Sets, SetsWithoutMaster, BrokersAlive  int
	Elections                              ControllerElections
	NotificationsSent, NotificationsFailed uint64
	Groups                                 []ControllerGroup
}

// ControllerRaft is the node's raft view.
type ControllerRaft struct {
	State        string `json:"raftState"`
	ReadyLeader  bool   `json:"readyLeader"`
	LeaderID     string `json:"leaderId"`
	Term         uint64 `json:"term"`
	CommitIndex  uint64 `json:"commitIndex"`
	AppliedIndex uint64 `json:"appliedIndex"`
	Voters       int    `json:"voters"`
	Mismatch     bool   `json:"membershipMismatch,omitempty"`
	// LastContact is when a follower last heard from its leader.
	LastContact time.Time `json:"-"`
	// LeaderAddr is the leader's broker-facing address, as 1005 names it.
	LeaderAddr string `json:"leaderAddress,omitempty"`
	// Peers are the configured peers; their health is known on the leader.
	Peers []ControllerPeer `json:"-"`
}

// ControllerPeer is one configured member of the group as the node sees it.
type ControllerPeer struct {
	ID, RaftAddr, ServeAddr string
	Self, Leader            bool
	// Tracked is set on the leader, which heartbeats every peer; Reachable,
	// DownSince (the first failed heartbeat of the outage), LastContact
	// (the last successful one before it) and Failures mean something only
	// then.
	Tracked, Reachable     bool
	DownSince, LastContact time.Time
	Failures               uint64
}

// ControllerElections counts the elections the node decided, by result.
type ControllerElections struct {
	Success    uint64 `json:"success"`
	StillExist uint64 `json:"stillExist"`
	Failed     uint64 `json:"failed"`
	Cleared    uint64 `json:"cleared"`
}

// ControllerGroup is one broker set as a controller node sees it; ctlserver
// builds it from the replicated state and the node's liveness table.
type ControllerGroup struct {
	Cluster, BrokerName string
	HasMaster           bool
	MasterID            int64
	MasterAddr          string
	MasterEpoch         int32
	SyncStateSet        []int64
	SyncStateSetEpoch   int32
	// NextID is what 1012 hands out next.
	NextID  int64
	Members []ControllerMember
}

// ControllerMember is one registered broker of a set. ID, Addr and Master
// are from the replicated state; Alive and the rest from the node's own
// liveness table (zero when the broker is not in it).
type ControllerMember struct {
	ID            int64
	Addr          string
	Master        bool
	Alive         bool
	LastHeartbeat time.Time
	Epoch         int32
	MaxOffset     int64
	// ElectionPriority is the broker's brokerElectionPriority (lower is
	// preferred).
	ElectionPriority int32
}

type ctlHandler struct {
	view func() ControllerView
	path string
	now  func() time.Time
	tmpl *template.Template
}

// ControllerHandler serves the controller's status page at path ("/" on a
// standalone controller, "/controller" beside the NameServer's page) from
// view, called once per page; ?format=json answers the same data as JSON.
// Both list the first DefaultMaxRows broker sets and count the others.
// Other paths are 404, other methods 405.
func ControllerHandler(view func() ControllerView, path string, now func() time.Time) http.Handler {
	return &ctlHandler{view: view, path: path, now: now, tmpl: template.Must(template.New("controller").Parse(controllerHTML))}
}

// ctlPage is what both renderings show; "-" fields are text for the HTML.
type ctlPage struct {
	Now       int64  `json:"now"` // unix ms
	Generated string `json:"-"`
	// NamesrvPath links the page of the NameServer the node is embedded
	// in; empty on a standalone node.
	NamesrvPath string    `json:"-"`
	Node        ctlNode   `json:"node"`
	Groups      []ctlSet  `json:"brokerSets"`
	Counts      ctlCounts `json:"counts"`
	// MoreSets counts the broker sets left out beyond MaxRows: the page's
	// cost stays bounded however many sets the controller holds.
	MoreSets int `json:"moreBrokerSets,omitempty"`
	MaxRows  int `json:"-"`
}

type ctlNode struct {
	ID string `json:"id"`
	ControllerRaft
	ContactAgo string    `json:"-"`
	Peers      []ctlPeer `json:"peers"`
}

type ctlPeer struct {
	ID        string `json:"id"`
	RaftAddr  string `json:"raftAddress"`
	ServeAddr string `json:"address"`
	Self      bool   `json:"self"`
	Leader    bool   `json:"leader"`
	// Reachable is absent where health is not known (not the leader).
	Reachable   *bool  `json:"reachable,omitempty"`
	DownSince   int64  `json:"downSince,omitempty"`   // unix ms
	LastContact int64  `json:"lastContact,omitempty"` // unix ms
	Failures    uint64 `json:"failedHeartbeats,omitempty"`
	Down        bool   `json:"-"`
	Role        string `json:"-"`
	Health      string `json:"-"`
}

// peerRow is p as the page shows it at now.
func peerRow(p ControllerPeer, now time.Time) ctlPeer {
	row := ctlPeer{ID: p.ID, RaftAddr: p.RaftAddr, ServeAddr: p.ServeAddr, Self: p.Self, Leader: p.Leader,
		Health: "on the leader's page"}
	var roles []string
	if p.Leader {
		roles = append(roles, "leader")
	}
	if p.Self {
		roles = append(roles, "this node")
	}
	row.Role = strings.Join(roles, ", ")
	if !p.Tracked {
		return row
	}
	reachable := p.Reachable
	row.Reachable = &reachable
	if reachable {
		row.Health = "reachable"
		return row
	}
	row.Down = true
	row.DownSince, row.Failures = p.DownSince.UnixMilli(), p.Failures
	row.Health = "unreachable for " + strings.TrimSuffix(Age(now.Sub(p.DownSince).Milliseconds()), " ago")
	if p.LastContact.IsZero() {
		row.Health += ", not heard from since this node leads"
	} else {
		row.LastContact = p.LastContact.UnixMilli()
		row.Health += ", last contact " + Age(now.Sub(p.LastContact).Milliseconds())
	}
	row.Health += fmt.Sprintf(", %d failed heartbeats", p.Failures)
	return row
}

type ctlCounts struct {
	Groups              int                 `json:"brokerSets"`
	GroupsWithoutMaster int                 `json:"brokerSetsWithoutMaster"`
	BrokersAlive        int                 `json:"brokersAlive"`
	Elections           ControllerElections `json:"elections"`
	NotificationsSent   uint64              `json:"notificationsSent"`
	NotificationsFailed uint64              `json:"notificationsFailed"`
}

type ctlSet struct {
	Cluster           string      `json:"clusterName"`
	BrokerName        string      `json:"brokerName"`
	HasMaster         bool        `json:"hasMaster"`
	MasterID          int64       `json:"masterBrokerId,omitempty"`
	MasterAddr        string      `json:"masterAddress,omitempty"`
	MasterEpoch       int32       `json:"masterEpoch"`
	SyncStateSet      []int64     `json:"syncStateSet"`
	SyncStateSetEpoch int32       `json:"syncStateSetEpoch"`
	NextID            int64       `json:"nextBrokerId"`
	Members           []ctlMember `json:"members"`
	MasterAlive       bool        `json:"-"`
	SyncText          string      `json:"-"`
}

type ctlMember struct {
	ID               int64  `json:"brokerId"`
	Addr             string `json:"addr"`
	Role             string `json:"role"` // master, in-sync or out-of-sync
	Alive            bool   `json:"alive"`
	LastHeartbeat    int64  `json:"lastHeartbeat,omitempty"` // unix ms
	Epoch            int32  `json:"epoch"`
	MaxOffset        int64  `json:"maxOffset"`
	ElectionPriority int32  `json:"electionPriority"`
	Age              string `json:"-"`
}

func (h *ctlHandler) build() *ctlPage {
	now := h.now()
	v := h.view()
	p := &ctlPage{
		Now:       now.UnixMilli(),
		Generated: now.UTC().Format(time.RFC3339),
		Node:      ctlNode{ID: v.ID, ControllerRaft: v.Raft},
		Counts: ctlCounts{Groups: v.Sets, GroupsWithoutMaster: v.SetsWithoutMaster, BrokersAlive: v.BrokersAlive,
			Elections: v.Elections, NotificationsSent: v.NotificationsSent, NotificationsFailed: v.NotificationsFailed},
		Groups:  []ctlSet{},
		MaxRows: DefaultMaxRows,
	}
	if h.path != "/" {
		p.NamesrvPath = "/"
	}
	shown := v.Groups[:min(len(v.Groups), p.MaxRows)]
	total := len(v.Groups)
	if total >= p.MaxRows && v.Sets > total {
		total = v.Sets // the view itself was cut
	}
	p.MoreSets = total - len(shown)
	if !v.Raft.LastContact.IsZero() {
		p.Node.ContactAgo = Age(now.Sub(v.Raft.LastContact).Milliseconds())
	}
	p.Node.Peers = make([]ctlPeer, 0, len(v.Raft.Peers))
	for _, peer := range v.Raft.Peers {
		p.Node.Peers = append(p.Node.Peers, peerRow(peer, now))
	}
	for _, g := range shown {
		set := ctlSet{Cluster: g.Cluster, BrokerName: g.BrokerName, HasMaster: g.HasMaster, MasterEpoch: g.MasterEpoch,
			SyncStateSet: g.SyncStateSet, SyncStateSetEpoch: g.SyncStateSetEpoch, NextID: g.NextID, Members: []ctlMember{}}
		if set.SyncStateSet == nil {
			set.SyncStateSet = []int64{}
		}
		if g.HasMaster {
			set.MasterID, set.MasterAddr = g.MasterID, g.MasterAddr
		}
		ids := make([]string, len(g.SyncStateSet))
		for i, id := range g.SyncStateSet {
			ids[i] = strconv.FormatInt(id, 10)
		}
		set.SyncText = "{" + strings.Join(ids, ", ") + "}"
		for _, m := range g.Members {
			row := ctlMember{ID: m.ID, Addr: m.Addr, Role: "out-of-sync", Alive: m.Alive, Epoch: m.Epoch,
				MaxOffset: m.MaxOffset, ElectionPriority: m.ElectionPriority, Age: "not alive"}
			switch {
			case m.Master:
				row.Role = "master"
				set.MasterAlive = m.Alive
			case slices.Contains(g.SyncStateSet, m.ID):
				row.Role = "in-sync"
			}
			if !m.LastHeartbeat.IsZero() {
				row.LastHeartbeat = m.LastHeartbeat.UnixMilli()
				row.Age = Age(now.Sub(m.LastHeartbeat).Milliseconds())
				if !m.Alive {
					row.Age += ", expired"
				}
			}
			set.Members = append(set.Members, row)
		}
		p.Groups = append(p.Groups, set)
	}
	return p
}

func (h *ctlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the status page is read-only", http.StatusMethodNotAllowed)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "html" && format != "json" {
		http.Error(w, "unknown format: want html or json", http.StatusBadRequest)
		return
	}
	p := h.build()
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

// controllerHTML is rendered by html/template, which escapes every value
// (broker names and addresses come from brokers). Row classes (set,
// member) are what tests find rows by.
const controllerHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rocketns controller {{.Node.ID}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.5em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;white-space:nowrap}
th{background:#f2f2f2}
td.num{text-align:right}
tr.nomaster td,tr.deadmaster td{background:#fde2e2}
tr.dead td{color:#888}
tr.down td{background:#fde2e2}
.muted{color:#666}
</style>
</head>
<body>
<h1>rocketns controller {{.Node.ID}}</h1>
<p class="muted">Generated {{.Generated}}. Broker liveness is this node's own view (each node hears every broker's heartbeats).</p>
{{if .NamesrvPath}}<p><a id="namesrv-link" href="{{.NamesrvPath}}">NameServer status</a>: the NameServer this controller node runs in.</p>
{{end}}
<table id="node">
<tr><th>Raft state</th><td>{{.Node.State}}{{if .Node.ReadyLeader}} (serving leader requests){{end}}</td></tr>
<tr><th>Leader</th><td id="leader">{{if .Node.LeaderID}}{{.Node.LeaderID}}{{if .Node.LeaderAddr}} ({{.Node.LeaderAddr}}){{end}}{{else}}none known{{end}}</td></tr>
<tr><th>Term</th><td class="num">{{.Node.Term}}</td></tr>
<tr><th>Commit / applied index</th><td class="num">{{.Node.CommitIndex}} / {{.Node.AppliedIndex}}</td></tr>
<tr><th>Voters</th><td class="num">{{.Node.Voters}}{{if .Node.Mismatch}} (differs from the configured peers){{end}}</td></tr>
{{if .Node.ContactAgo}}<tr><th>Last contact with the leader</th><td>{{.Node.ContactAgo}}</td></tr>{{end}}
<tr><th>Broker sets</th><td class="num">{{.Counts.Groups}} ({{.Counts.GroupsWithoutMaster}} without a master)</td></tr>
<tr><th>Brokers alive</th><td class="num">{{.Counts.BrokersAlive}}</td></tr>
<tr><th>Elections decided here</th><td>{{.Counts.Elections.Success}} new master, {{.Counts.Elections.StillExist}} kept, {{.Counts.Elections.Failed}} failed, {{.Counts.Elections.Cleared}} cleared</td></tr>
<tr><th>Role change notices</th><td>{{.Counts.NotificationsSent}} sent, {{.Counts.NotificationsFailed}} failed</td></tr>
</table>

{{if .Node.Peers}}<h2>Peers</h2>
<table id="peers">
<tr><th>ID</th><th>Raft address</th><th>Broker address</th><th>Role</th><th>Health</th></tr>
{{range .Node.Peers}}<tr class="peer{{if .Down}} down{{end}}"><td>{{.ID}}</td><td>{{.RaftAddr}}</td><td>{{.ServeAddr}}</td><td>{{.Role}}</td><td>{{.Health}}</td></tr>
{{end}}</table>
<p class="muted">Health is the leader's: it heartbeats every peer, and a peer is unreachable from a failed heartbeat until one succeeds again.</p>
{{end}}
<h2>Broker sets</h2>
{{if .Groups}}
<table id="sets">
<tr><th>Cluster</th><th>Broker set</th><th>Master</th><th>Master address</th><th>Master epoch</th><th>SyncStateSet</th><th>Set epoch</th><th>Next id</th></tr>
{{range .Groups}}<tr class="set{{if not .HasMaster}} nomaster{{else if not .MasterAlive}} deadmaster{{end}}"><td>{{.Cluster}}</td><td>{{.BrokerName}}</td><td class="num">{{if .HasMaster}}{{.MasterID}}{{else}}none{{end}}</td><td>{{.MasterAddr}}</td><td class="num">{{.MasterEpoch}}</td><td>{{.SyncText}}</td><td class="num">{{.SyncStateSetEpoch}}</td><td class="num">{{.NextID}}</td></tr>
{{end}}</table>
{{if .MoreSets}}<p id="more-sets">{{.MoreSets}} more broker set{{if ne .MoreSets 1}}s{{end}} not shown: the page lists the first {{.MaxRows}}; <code>nsadmin getSyncStateSet</code> shows any set.</p>{{end}}
{{range .Groups}}
<h3>{{.BrokerName}} <span class="muted">({{.Cluster}})</span></h3>
<table class="members">
<tr><th>ID</th><th>Address</th><th>Role</th><th>Last heartbeat</th><th>Epoch</th><th>Max offset</th><th>Election priority</th></tr>
{{range .Members}}<tr class="member{{if not .Alive}} dead{{end}}"><td class="num">{{.ID}}</td><td>{{.Addr}}</td><td>{{.Role}}</td><td>{{.Age}}</td><td class="num">{{.Epoch}}</td><td class="num">{{.MaxOffset}}</td><td class="num">{{.ElectionPriority}}</td></tr>
{{end}}</table>
{{end}}
{{else}}
<p id="no-sets">No broker set is registered.</p>
{{end}}
</body>
</html>
`
