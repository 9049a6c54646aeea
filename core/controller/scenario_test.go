// Scenario scripts on a fake clock (testdata/scenarios/*.txt), in the
// data-driven style of etcd's raft tests: each block is a command, a
// "----" line and the output it must produce. Run with -rewrite to write
// the actual output back into the files (then read the diff: the files are
// the expected behaviour, not a record of whatever the code does).
//
// Commands:
//
//	at <ms>                              set the clock
//	hb <name> <id> [k=v...]              a heartbeat (cluster, addr, epoch, offset, prio, timeout, conn, host, owner)
//	close <name> <id>                    the connection of that broker's heartbeats closes
//	close conn=<n>                       connection n closes
//	expire                               the expiry scan
//	scan                                 the leader's inactive-master scan
//	req <code|alias> [k=v...] [body=...] decide a request, then commit its events
//	decide <code|alias> ...              decide without committing; commit applies them later
//	commit                               apply the events of earlier decides, in order
//	trigger <name>                       a controller-triggered election, committed
//	set [unclean=<bool>] [maxlive=<n>]   enableElectUncleanMaster, Liveness.Max,
//	    [maxsets=<n>] [perset=<n>]       Settings.MaxBrokerSets, MaxBrokersPerSet
//	state [name...]                      the replicated state
//	live <name> <id>                     what the liveness table holds
//
// A heartbeat's defaults: cluster DefaultCluster, addr 127.0.0.1:309<id>1,
// epoch -1, offset -1, prio 2147483647, timeout 10000, one connection per
// broker (conn=N to share one) from host 127.0.0.1, not signed by an owner
// (owner=true); a refused heartbeat prints why. Aliases: alter 1001, elect 1002,
// register 1003, replica 1004, syncdata 1006, clean 1011, nextid 1012,
// applyid 1013, heartbeat 904 (answered as a non-oneway request).

package controller

import (
	"bufio"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the scenario files with the actual output")

type scenarioBlock struct {
	comments []string // lines before the command
	cmd      string
	want     []string
	line     int
}

func readScenario(t *testing.T, path string) []scenarioBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []scenarioBlock
		cur    scenarioBlock
		state  = 0 // 0: before the command, 1: after it (expect ----), 2: in the output
		n      = 0
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch state {
		case 0:
			if line == "" || strings.HasPrefix(line, "#") {
				cur.comments = append(cur.comments, line)
				continue
			}
			cur.cmd, cur.line, state = line, n, 1
		case 1:
			if line != "----" {
				t.Fatalf("%s:%d: want ---- after the command, got %q", path, n, line)
			}
			state = 2
		case 2:
			if line == "" {
				blocks = append(blocks, cur)
				cur, state = scenarioBlock{}, 0
				continue
			}
			cur.want = append(cur.want, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	switch state {
	case 1:
		t.Fatalf("%s:%d: command without ----", path, cur.line)
	case 2:
		blocks = append(blocks, cur)
	}
	return blocks
}

func writeScenario(t *testing.T, path string, blocks []scenarioBlock, got [][]string) {
	t.Helper()
	var b strings.Builder
	for i, bl := range blocks {
		for _, c := range bl.comments {
			b.WriteString(c + "\n")
		}
		b.WriteString(bl.cmd + "\n----\n")
		for _, l := range got[i] {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			blocks := readScenario(t, path)
			h := newHarness()
			got := make([][]string, len(blocks))
			for i, bl := range blocks {
				out, err := h.run(bl.cmd)
				if err != nil {
					t.Fatalf("%s:%d: %s: %v", path, bl.line, bl.cmd, err)
				}
				got[i] = out
				if !*rewrite && !slices.Equal(out, bl.want) {
					t.Errorf("%s:%d: %s\n got:\n\t%s\nwant:\n\t%s", path, bl.line, bl.cmd,
						strings.Join(out, "\n\t"), strings.Join(bl.want, "\n\t"))
				}
				h.checkInvariants(t, fmt.Sprintf("%s:%d", path, bl.line))
			}
			if *rewrite {
				writeScenario(t, path, blocks, got)
			}
		})
	}
}

// harness is one controller node driven by a script.
type harness struct {
	s        *State
	live     *Liveness
	now      int64
	settings Settings
	conns    map[[2]string]uint64 // (name, id) -> connection of its heartbeats
	pending  [][]Event
	// prev is each set as the previous step left it, for the invariants.
	prev map[string]Group
}

func newHarness() *harness {
	return &harness{s: NewState(), live: NewLiveness(), conns: map[[2]string]uint64{}, prev: map[string]Group{}}
}

var codeAliases = map[string]int32{
	"alter": 1001, "elect": 1002, "register": 1003, "replica": 1004, "syncdata": 1006,
	"clean": 1011, "nextid": 1012, "applyid": 1013, "heartbeat": 904,
}

func (h *harness) env() Env { return Env{Live: h.live, Now: h.now, Settings: h.settings} }

func (h *harness) conn(name, id string) uint64 {
	k := [2]string{name, id}
	c, ok := h.conns[k]
	if !ok {
		c = uint64(len(h.conns) + 1)
		h.conns[k] = c
	}
	return c
}

// kv splits "k=v" arguments (v may be Go-quoted); body= takes the rest
// of the line.
func kv(args string) (map[string]string, []byte, error) {
	m := map[string]string{}
	var b []byte
	if i := strings.Index(args, "body="); i >= 0 && (i == 0 || args[i-1] == ' ') {
		b = []byte(args[i+len("body="):])
		args = args[:i]
	}
	for args = strings.TrimSpace(args); args != ""; args = strings.TrimSpace(args) {
		k, v, ok := strings.Cut(args, "=")
		if !ok || strings.ContainsAny(k, " \t") {
			return nil, nil, fmt.Errorf("argument %q is not k=v", args)
		}
		if strings.HasPrefix(v, `"`) {
			// A Go-quoted value, for spaces and escapes.
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return nil, nil, fmt.Errorf("argument %s: %w", k, err)
			}
			m[k], _ = strconv.Unquote(q)
			args = v[len(q):]
			continue
		}
		v, args, _ = strings.Cut(v, " ")
		m[k] = v
	}
	return m, b, nil
}

func (h *harness) run(cmd string) ([]string, error) {
	verb, rest, _ := strings.Cut(cmd, " ")
	switch verb {
	case "at":
		n, err := strconv.ParseInt(rest, 10, 64)
		h.now = n
		return nil, err
	case "set":
		m, _, err := kv(rest)
		if err != nil {
			return nil, err
		}
		if v, ok := m["unclean"]; ok {
			h.settings.EnableElectUncleanMaster = v == "true"
		}
		for key, dst := range map[string]*int{"maxlive": &h.live.Max, "maxsets": &h.settings.MaxBrokerSets, "perset": &h.settings.MaxBrokersPerSet} {
			if v, ok := m[key]; ok {
				if *dst, err = strconv.Atoi(v); err != nil {
					return nil, err
				}
			}
		}
		return nil, nil
	case "hb":
		return h.heartbeat(rest)
	case "close":
		if v, ok := strings.CutPrefix(rest, "conn="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, err
			}
			return h.inactive(h.live.ConnClosed(n)), nil
		}
		name, id, _ := strings.Cut(rest, " ")
		return h.inactive(h.live.ConnClosed(h.conn(name, id))), nil
	case "expire":
		return h.inactive(h.live.Expire(h.now)), nil
	case "scan":
		return []string{fmt.Sprintf("%v", InactiveMasters(h.s, h.live, h.now))}, nil
	case "req", "decide":
		code, args, _ := strings.Cut(rest, " ")
		c, ok := codeAliases[code]
		if !ok {
			n, err := strconv.ParseInt(code, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("unknown code %q", code)
			}
			c = int32(n)
		}
		m, b, err := kv(args)
		if err != nil {
			return nil, err
		}
		if c == codec.BrokerHeartbeat {
			var hb Heartbeat
			ParseHeartbeat(MapFields(m), &hb)
			h.live.Heartbeat(&hb, 999, h.now)
			r := HeartbeatReply(&hb)
			return formatDecision(h, Decision{Reply: r}), nil
		}
		d, ok := h.s.decide(c, MapFields(m), b, h.env())
		if !ok {
			return nil, fmt.Errorf("code %d is not decided here", c)
		}
		out := formatDecision(h, d)
		if verb == "req" {
			h.commit(d.Events)
		} else if len(d.Events) > 0 {
			h.pending = append(h.pending, d.Events)
		}
		return out, nil
	case "commit":
		for _, evs := range h.pending {
			h.commit(evs)
		}
		h.pending = nil
		return nil, nil
	case "trigger":
		d := h.s.ControllerElect(rest, h.env())
		out := formatDecision(h, d)
		h.commit(d.Events)
		return out, nil
	case "state":
		names := strings.Fields(rest)
		if len(names) == 0 {
			names = h.s.Names()
		}
		var out []string
		for _, n := range names {
			out = append(out, formatGroup(h.s, n)...)
		}
		return out, nil
	case "live":
		name, id, _ := strings.Cut(rest, " ")
		n, _ := strconv.ParseInt(id, 10, 64)
		k := LiveKey{"DefaultCluster", name, n}
		in, ok := h.live.Info(k)
		if !ok {
			return []string{"absent"}, nil
		}
		return []string{fmt.Sprintf("alive=%v addr=%s conn=%d last=%d timeout=%d epoch=%d offset=%d confirm=%d prio=%d",
			h.live.Alive(k, h.now), in.Addr, in.Conn, in.LastUpdate, in.Timeout, in.Epoch, in.MaxOffset,
			in.ConfirmOffset, in.ElectionPriority)}, nil
	}
	return nil, fmt.Errorf("unknown command %q", verb)
}

// commit applies events through their log-entry form, as a follower would.
func (h *harness) commit(events []Event) {
	if len(events) == 0 {
		return
	}
	if err := h.s.ApplyEntry(EncodeBatch(nil, events)); err != nil {
		panic(err)
	}
}

func (h *harness) heartbeat(args string) ([]string, error) {
	parts := strings.Fields(args)
	if len(parts) < 2 {
		return nil, fmt.Errorf("hb <name> <id> [k=v...]")
	}
	name, id := parts[0], parts[1]
	m, _, err := kv(strings.Join(parts[2:], " "))
	if err != nil {
		return nil, err
	}
	f := MapFields{"clusterName": "DefaultCluster", "brokerName": name, "brokerId": id,
		"brokerAddr": "127.0.0.1:309" + id + "1", "heartbeatTimeoutMills": "10000"}
	for k, alias := range map[string]string{"cluster": "clusterName", "addr": "brokerAddr", "epoch": "epoch",
		"offset": "maxOffset", "confirm": "confirmOffset", "prio": "electionPriority", "timeout": "heartbeatTimeoutMills"} {
		if v, ok := m[k]; ok {
			f[alias] = v
		}
	}
	from := Origin{Conn: h.conn(name, id), Host: netip.MustParseAddr("127.0.0.1"), Owner: m["owner"] == "true"}
	if v, ok := m["conn"]; ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, err
		}
		from.Conn = n
	}
	if v, ok := m["host"]; ok {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, err
		}
		from.Host = a
	}
	var hb Heartbeat
	ParseHeartbeat(f, &hb)
	switch h.live.Record(&hb, from, h.now) {
	case HeartbeatHeld:
		in, _ := h.live.Info(LiveKey{hb.ClusterName, hb.BrokerName, hb.BrokerID})
		return []string{fmt.Sprintf("refused: held by conn=%d host=%s", in.Conn, in.Host)}, nil
	case HeartbeatFull:
		return []string{fmt.Sprintf("refused: the table holds %d brokers", h.live.Len())}, nil
	}
	h.conns[[2]string{name, id}] = from.Conn
	return nil, nil
}

func (h *harness) inactive(list []Inactive) []string {
	var out []string
	for _, in := range list {
		line := fmt.Sprintf("inactive %s/%s/%d conn=%d", in.Key.Cluster, in.Key.BrokerName, in.Key.BrokerID, in.Info.Conn)
		if h.s.IsMaster(in.Key.BrokerName, in.Key.BrokerID) {
			line += " master: elect"
		}
		out = append(out, line)
	}
	return out
}

func formatDecision(h *harness, d Decision) []string {
	r := d.Reply
	first := strconv.Itoa(int(r.Code))
	if r.Remark != "" {
		first += " " + strconv.Quote(r.Remark)
	}
	out := []string{first}
	switch {
	case !r.HasExt:
		out = append(out, "ext -")
	case len(r.Ext) == 0:
		out = append(out, "ext {}")
	default:
		var kvs []string
		for _, f := range r.Ext {
			kvs = append(kvs, f.Key+"="+f.Value)
		}
		out = append(out, "ext "+strings.Join(kvs, " "))
	}
	if r.Body != nil {
		out = append(out, "body "+string(r.Body))
	}
	for _, e := range d.Events {
		out = append(out, "event "+e.String())
	}
	if rc := d.RoleChange; rc != nil {
		var kvs []string
		for _, f := range rc.NotifyExt() {
			kvs = append(kvs, f.Key+"="+f.Value)
		}
		out = append(out, fmt.Sprintf("notify %v %s %s", rc.Targets(h.live, h.now), strings.Join(kvs, " "), rc.NotifyBody()))
	}
	return out
}

func formatGroup(s *State, name string) []string {
	g, ok := s.Group(name)
	if !ok {
		return []string{name + ": none"}
	}
	master := "none"
	if g.HasMaster {
		master = strconv.FormatInt(g.MasterID, 10)
	}
	out := []string{fmt.Sprintf("%s: cluster=%s next=%d master=%s masterEpoch=%d sss=%v sssEpoch=%d",
		g.Name, g.Cluster, g.NextID, master, g.MasterEpoch, g.SyncStateSet, g.SyncStateSetEpoch)}
	for _, b := range g.Brokers {
		out = append(out, fmt.Sprintf("  %d %s %s", b.ID, b.Addr, b.CheckCode))
	}
	return out
}

// checkInvariants checks what must hold after every step: epochs never go
// down, a master change bumps masterEpoch, and a master is in its set unless
// a clean removed it.
func (h *harness) checkInvariants(t *testing.T, where string) {
	t.Helper()
	for _, name := range h.s.Names() {
		g, _ := h.s.Group(name)
		if p, ok := h.prev[name]; ok {
			checkStep(t, where, p, g)
		}
		h.prev[name] = g
	}
	for name := range h.prev {
		if _, ok := h.s.Group(name); !ok {
			delete(h.prev, name)
		}
	}
}

func checkStep(t *testing.T, where string, p, g Group) {
	t.Helper()
	if g.MasterEpoch < p.MasterEpoch || g.SyncStateSetEpoch < p.SyncStateSetEpoch {
		t.Errorf("%s: %s epochs went down: %d/%d -> %d/%d", where, g.Name,
			p.MasterEpoch, p.SyncStateSetEpoch, g.MasterEpoch, g.SyncStateSetEpoch)
	}
	if (g.HasMaster != p.HasMaster || g.MasterID != p.MasterID) && g.MasterEpoch == p.MasterEpoch {
		t.Errorf("%s: %s master changed without a new masterEpoch", where, g.Name)
	}
	if !slices.Equal(g.SyncStateSet, p.SyncStateSet) && g.SyncStateSetEpoch == p.SyncStateSetEpoch &&
		len(g.Brokers) == len(p.Brokers) {
		t.Errorf("%s: %s SyncStateSet changed without a new epoch", where, g.Name)
	}
	if g.HasMaster && !g.InSyncStateSet(g.MasterID) && g.Registered(g.MasterID) {
		t.Errorf("%s: %s master %d not in its SyncStateSet %v", where, g.Name, g.MasterID, g.SyncStateSet)
	}
	for _, b := range p.Brokers {
		if i, ok := g.broker(b.ID); ok && g.Brokers[i].CheckCode != b.CheckCode {
			t.Errorf("%s: %s id %d rebound from %q to %q", where, g.Name, b.ID, b.CheckCode, g.Brokers[i].CheckCode)
		}
	}
}
