// Replays the exchanges recorded with a Java 4.9.8 NameServer against one
// in-process server and compares every answer with Java's.

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/codectest"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/server/servertest"
)

// laterCodes belong to a later issue: their requests are not sent, and the
// answers that depend on their effects are adjusted (see the fix-ups below).
// Every code of the recording is served now.
var laterCodes = map[int32]bool{}

// servedCodes are the codes this round serves; anything else is answered
// with 3 REQUEST_CODE_NOT_SUPPORTED where Java 4.9.8 stayed silent.
var servedCodes = map[int32]bool{
	100: true, 101: true, 102: true, 103: true, 104: true, 105: true, 106: true,
	205: true, 206: true, 216: true, 217: true, 219: true, 224: true, 304: true,
	311: true, 312: true, 313: true, 318: true, 319: true, 322: true, 327: true,
	901: true, 904: true,
}

// fiveXAnswers are the 5.x answers to requests of the recording that the
// 4.9.8 server left unanswered: GET_BROKER_MEMBER_GROUP succeeds with the
// default remark Java's handler never clears.
var fiveXAnswers = map[int32]struct {
	code   int32
	remark string
}{
	codec.GetBrokerMemberGroup: {codec.Success, "not set any response code"},
}

// awaitTimeout bounds the wait for one reply; a healthy server answers in
// microseconds, so reaching it means the reply is missing (the frames
// that get none are found by a barrier, not by waiting).
const awaitTimeout = remotingtest.Hang

// replayConn is one recorded connection: raw frames go out as recorded and
// replies are decoded by a reader goroutine and matched by opaque.
type replayConn struct {
	id      int
	conn    net.Conn
	replies chan *codec.Command
	dead    chan struct{} // closed when the reader stops
	readErr error         // set before dead is closed
	stash   map[int32]*codec.Command
	// silent holds opaques of frames that must get no reply (oneway
	// requests, frames flagged as responses), with why.
	silent map[int32]string
}

func dialReplay(t *testing.T, addr string, id int) *replayConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("conn %d: dial %s: %v", id, addr, err)
	}
	rc := &replayConn{
		id: id, conn: nc,
		replies: make(chan *codec.Command, 1024),
		dead:    make(chan struct{}),
		stash:   make(map[int32]*codec.Command),
		silent:  make(map[int32]string),
	}
	go rc.read()
	return rc
}

func (rc *replayConn) read() {
	defer close(rc.dead)
	var prefix [4]byte
	for {
		if _, err := io.ReadFull(rc.conn, prefix[:]); err != nil {
			rc.readErr = err
			return
		}
		n, err := codec.FrameLength(prefix[:], codec.DefaultMaxFrame)
		if err != nil {
			rc.readErr = err
			return
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(rc.conn, frame); err != nil {
			rc.readErr = err
			return
		}
		cmd := new(codec.Command)
		if err := codec.Decode(frame, cmd); err != nil {
			rc.readErr = fmt.Errorf("decode reply: %w", err)
			return
		}
		rc.replies <- cmd
	}
}

func (rc *replayConn) close() {
	rc.conn.Close()
	<-rc.dead
}

// await returns our reply to opaque, stashing replies to other requests.
func (rc *replayConn) await(opaque int32) (*codec.Command, error) {
	if c, ok := rc.stash[opaque]; ok {
		delete(rc.stash, opaque)
		return c, nil
	}
	timer := time.NewTimer(awaitTimeout)
	defer timer.Stop()
	for {
		select {
		case c := <-rc.replies:
			if c.Opaque == opaque {
				return c, nil
			}
			rc.stash[c.Opaque] = c
		case <-rc.dead:
			// Drain what arrived before the connection ended.
			for {
				select {
				case c := <-rc.replies:
					if c.Opaque == opaque {
						return c, nil
					}
					rc.stash[c.Opaque] = c
				default:
					return nil, fmt.Errorf("conn %d closed before the reply to opaque %d: %v", rc.id, opaque, rc.readErr)
				}
			}
		case <-timer.C:
			return nil, fmt.Errorf("conn %d: no reply to opaque %d within %v", rc.id, opaque, awaitTimeout)
		}
	}
}

// checkSilent reports replies to frames that must not be answered. A reply
// that comes later than the barrier reply is caught by the final sweep.
func (rc *replayConn) checkSilent(t *testing.T) {
	t.Helper()
	for op, why := range rc.silent {
		if c, ok := rc.stash[op]; ok {
			t.Errorf("conn %d: got a reply (code %d) to %s opaque %d", rc.id, c.Code, why, op)
			delete(rc.stash, op)
		}
	}
}

// replayState tracks what the skipped requests would have changed, so the
// answers they affect can be adjusted explicitly.
type replayState struct {
	// added holds brokers an ADD_WRITE_PERM (327) was sent for: Java
	// 4.9.8 set perm |= WRITE, 5.x (and rocketns) set exactly READ|WRITE.
	added        map[string]bool
	freshJavaNS  bool // the broker5 files: Java started from an empty NameServer
	skippedResps map[[2]int]string
}

func TestReplayRecordedExchanges(t *testing.T) {
	srv := servertest.Start(t, nil)
	addr := srv.Addr()

	conns := map[int]*replayConn{}
	defer func() {
		for _, rc := range conns {
			rc.close()
		}
	}()
	st := &replayState{added: map[string]bool{}, skippedResps: map[[2]int]string{}}

	for _, name := range codectest.RecordingOrder {
		frames, err := codectest.Load(filepath.Join(codectest.Dir(), name))
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		if strings.HasPrefix(name, "broker5-") && !st.freshJavaNS {
			// These two files were recorded later against a fresh 4.9.8
			// NameServer. Close every earlier connection, like the brokers
			// and tools of the first session going away; the server must
			// then unregister the brokers those connections registered.
			st.freshJavaNS = true
			clear(st.added) // a fresh Java NameServer: its routes come from registrations only
			for id, rc := range conns {
				rc.close()
				delete(conns, id)
			}
			waitNoBrokers(t, addr)
		}
		replayFile(t, name, frames, conns, addr, st)
	}

	// A last barrier on every connection: any reply still unaccounted for
	// (to a oneway request, a response-flagged frame or anything else) is
	// an error.
	for _, rc := range conns {
		bar := &codec.Command{Code: codec.GetBrokerClusterInfo, Version: codec.ServerVersion, Opaque: int32(-rc.id - 1)}
		if _, err := rc.conn.Write(codec.AppendFrame(nil, bar)); err != nil {
			t.Errorf("conn %d: final barrier: %v", rc.id, err)
			continue
		}
		if _, err := rc.await(bar.Opaque); err != nil {
			t.Errorf("final barrier: %v", err)
		}
		rc.checkSilent(t)
		for op, c := range rc.stash {
			t.Errorf("conn %d: unexpected reply code %d opaque %d", rc.id, c.Code, op)
		}
	}
}

// waitNoBrokers polls GET_BROKER_CLUSTER_INFO until the broker table is
// empty. Unregistration of closed channels is asynchronous by design (like
// Java's batch unregistration service), so there is no reply to wait on.
func waitNoBrokers(t *testing.T, addr string) {
	t.Helper()
	c, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatalf("dial probe: %v", err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
		ci, err := c.ClusterInfo(ctx)
		cancel()
		if err != nil {
			t.Fatalf("cluster info probe: %v", err)
		}
		if len(ci.Brokers) == 0 {
			return
		}
		if time.Now().After(deadline) {
			names := make([]string, 0, len(ci.Brokers))
			for _, b := range ci.Brokers {
				names = append(names, fmt.Sprintf("%s%v", b.BrokerName, b.Addrs))
			}
			t.Errorf("brokers still registered 10 s after their connections closed: %v", names)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func replayFile(t *testing.T, name string, frames []codectest.Frame, conns map[int]*replayConn, addr string, st *replayState) {
	t.Helper()
	hasResp := map[[2]int]bool{}
	fixes := map[[2]int][]fixup{}
	told := map[string]bool{}
	skipped := map[int32]int{}
	compared := 0
	for i := range frames {
		f := &frames[i]
		if f.Dir == "resp" {
			var java codec.Command
			if err := codec.Decode(f.Raw()[4:], &java); err != nil {
				t.Fatalf("%s conn %d seq %d: decode recorded reply: %v", name, f.Conn, f.Seq, err)
			}
			hasResp[[2]int{f.Conn, int(java.Opaque)}] = true
		}
	}
	for i := range frames {
		f := &frames[i]
		raw := f.Raw()
		var rec codec.Command
		if err := codec.Decode(raw[4:], &rec); err != nil {
			t.Fatalf("%s conn %d seq %d: decode recorded frame: %v", name, f.Conn, f.Seq, err)
		}
		where := fmt.Sprintf("%s conn %d %s %d (code %d opaque %d)", name, f.Conn, f.Dir, f.Seq, rec.Code, rec.Opaque)
		key := [2]int{f.Conn, int(rec.Opaque)}

		if f.Dir == "req" {
			if laterCodes[rec.Code] {
				skipped[rec.Code]++
				if why := st.skip(&rec); why != "" {
					t.Logf("%s: not sent (later issue)%s", where, why)
				}
				if hasResp[key] {
					st.skippedResps[key] = fmt.Sprintf("reply to skipped code %d", rec.Code)
				}
				continue
			}
			rc := conns[f.Conn]
			if rc == nil {
				rc = dialReplay(t, addr, f.Conn)
				conns[f.Conn] = rc
			}
			if _, err := rc.conn.Write(raw); err != nil {
				t.Errorf("%s: write: %v", where, err)
				continue
			}
			if hasResp[key] {
				// Java answered from the state it had when the request
				// arrived: later skipped requests must not adjust it.
				fixes[key] = st.fixups(name, f.Conn, &rec)
			}
			if rec.Code == codec.AddWritePermOfBroker {
				b, _ := rec.ExtValue("brokerName")
				st.added[b] = true
			}
			switch {
			case rec.Flag&codec.FlagResponse != 0:
				rc.silent[rec.Opaque] = "a frame flagged as a response"
			case rec.Flag&codec.FlagOneway != 0:
				rc.silent[rec.Opaque] = fmt.Sprintf("oneway code %d", rec.Code)
			case !hasResp[key]:
				// Java 4.9.8 stayed silent; we answer (3 for unknown codes).
				ours, err := rc.await(rec.Opaque)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				rc.checkSilent(t)
				if want, ok := fiveXAnswers[rec.Code]; ok {
					if ours.Code != want.code || ours.Remark != want.remark || ours.Flag != codec.FlagResponse {
						t.Errorf("%s: Java 4.9.8 sent no reply; ours has code %d remark %q, want 5.x's %d %q",
							where, ours.Code, ours.Remark, want.code, want.remark)
					}
					continue
				}
				if servedCodes[rec.Code] {
					t.Logf("%s: Java sent no reply; ours has code %d", where, ours.Code)
					continue
				}
				want := fmt.Sprintf(" request type %d not supported", rec.Code)
				if ours.Code != codec.RequestCodeNotSupported || ours.Remark != want ||
					ours.SerializeType != rec.SerializeType || ours.Flag != codec.FlagResponse {
					t.Errorf("%s: unknown code answered with code %d remark %q type %d flag %d, want 3 %q type %d flag 1",
						where, ours.Code, ours.Remark, ours.SerializeType, ours.Flag, want, rec.SerializeType)
				}
			}
			continue
		}

		// A recorded reply.
		if _, ok := st.skippedResps[key]; ok {
			continue
		}
		rc := conns[f.Conn]
		if rc == nil {
			t.Errorf("%s: reply on a connection that sent nothing", where)
			continue
		}
		ours, err := rc.await(rec.Opaque)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		rc.checkSilent(t)
		fs := fixes[key]
		for _, fx := range fs {
			if !told[fx.why] {
				told[fx.why] = true
				t.Logf("%s: adjusted: %s", where, fx.why)
			}
		}
		compared++
		for _, d := range compareReply(&rec, ours, fs) {
			t.Errorf("%s: %s", where, d)
		}
	}
	codes := make([]int32, 0, len(skipped))
	for c := range skipped {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	var sk []string
	for _, c := range codes {
		sk = append(sk, fmt.Sprintf("%d x%d", c, skipped[c]))
	}
	t.Logf("%s: %d replies compared; not sent (later issue): %v", name, compared, sk)
}

// skip records what a request that is not sent would have changed in Java's
// state, and says so for the log. No code is skipped any more.
func (st *replayState) skip(req *codec.Command) string { return "" }

// fixup adjusts Java's parsed reply for state this replay cannot
// reproduce; every one says why.
type fixup struct {
	why string
	// ignore lists parts of the reply not compared: "code", "ext", "remark", "body".
	ignore []string
	// body edits Java's parsed body before the comparison.
	body func(v any)
	// compare replaces the body comparison (for bodies that are not JSON).
	compare func(java, ours []byte) []string
}

// unrecorded lists replies whose content came from exchanges that are not
// in the recording (files raw-02 and raw-06..raw-11 were not kept): the
// keys put there, the registrations that raised broker-a's DataVersion to
// counter 4, the nameless broker of cluster "X".
var unrecorded = map[string]fixup{
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1000": {
		why:    "Java had broker-a's DataVersion counter 4 from unrecorded registrations; the last recorded one is counter 2",
		ignore: []string{"ext", "body"},
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1001": {
		why:    "the stored DataVersion came from unrecorded registrations",
		ignore: []string{"body"},
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1003": {
		why:  "CorpusNS/k2 was put by an unrecorded exchange",
		body: func(v any) { delete(mapAt(v, "table"), "k2") },
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1007": {
		why:    "CorpusNS/k2 was put by an unrecorded exchange",
		ignore: []string{"code", "ext", "remark", "body"},
	},
	"raw-05-binary-ROCKETMQ-serialization.jsonl/41/1005": {
		why:    "CorpusNS/k2 was put by an unrecorded exchange",
		ignore: []string{"code", "ext", "remark", "body"},
	},
	"mqadmin-topicList.jsonl/8/1": {
		why:  "RMQ_SYS_TRANS_HALF_TOPIC came from a periodic registration of broker-a that is not recorded",
		body: func(v any) { dropFromList(v, "topicList", "RMQ_SYS_TRANS_HALF_TOPIC") },
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1008": {
		why:  "AutoCreatedTopic and ScratchTopic were created by unrecorded exchanges",
		body: func(v any) { dropFromList(v, "topicList", "AutoCreatedTopic", "ScratchTopic") },
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1014": {
		why:  "AutoCreatedTopic and ScratchTopic were created by unrecorded exchanges",
		body: func(v any) { dropFromList(v, "topicList", "AutoCreatedTopic", "ScratchTopic") },
	},
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl/39/1010": {
		why: `cluster "X" with a nameless broker was registered by an unrecorded exchange; Java takes brokerAddr ` +
			`from the first group in hash order (broker-b), rocketns from the first by name (broker-a)`,
		body: func(v any) {
			dropFromList(v, "topicList", "X", nil)
			asMap(v)["brokerAddr"] = "127.0.0.1:10911"
		},
	},
	"raw-05-binary-ROCKETMQ-serialization.jsonl/41/1003": {
		why:  `cluster "X" with a nameless broker was registered by an unrecorded exchange`,
		body: func(v any) { delete(mapAt(v, "clusterAddrTable"), "X") },
	},
}

func (st *replayState) fixups(file string, conn int, req *codec.Command) []fixup {
	var fs []fixup
	if f, ok := unrecorded[fmt.Sprintf("%s/%d/%d", file, conn, req.Opaque)]; ok {
		fs = append(fs, f)
	}
	if req.Code == codec.GetNamesrvConfig {
		fs = append(fs, fixup{
			why:     "GET_NAMESRV_CONFIG: 4.9.8 prints fewer keys in hash order and other paths; 5.x sorts and adds its keys",
			compare: compareConfigText,
		})
	}
	if len(st.added) > 0 {
		added := make(map[string]bool, len(st.added))
		for b := range st.added {
			added[b] = true
		}
		fs = append(fs, fixup{
			why: "ADD_WRITE_PERM: Java 4.9.8 set perm |= WRITE (7 stays 7), 5.x sets exactly READ|WRITE (6)",
			body: func(v any) {
				for _, q := range listAt(v, "queueDatas") {
					qm, _ := q.(map[string]any)
					if name, _ := qm["brokerName"].(string); added[name] {
						qm["perm"] = json.Number("6")
					}
				}
			},
		})
	}
	if st.freshJavaNS {
		fs = append(fs, fixup{why: "broker5: Java had no ORDER_TOPIC_CONFIG namespace, ours keeps the (empty) one of the first session",
			ignore: []string{"registerBody"}})
	}
	return fs
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// dropFromList removes the given values (strings, or nil for JSON null) from
// the list at key k.
func dropFromList(v any, k string, drop ...any) {
	m := asMap(v)
	l, _ := m[k].([]any)
	out := l[:0]
	for _, e := range l {
		keep := true
		for _, d := range drop {
			if e == d {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	m[k] = out
}

// configPathKeys differ between any two installations: the recording's
// paths were rewritten, and the replay server listens on a free port.
var configPathKeys = map[string]bool{"kvConfigPath": true, "configStorePath": true, "rocketmqHome": true, "listenPort": true}

// compareConfigText compares GET_NAMESRV_CONFIG bodies: every key Java
// printed must be in ours with the same value (paths and port aside); ours
// must be sorted by key, as 5.x prints it, and may hold the 5.x keys 4.9.8
// lacks.
func compareConfigText(java, ours []byte) []string {
	jp, err := properties.Parse(bytes.NewReader(java))
	if err != nil {
		return []string{fmt.Sprintf("Java's config text does not parse: %v", err)}
	}
	op, err := properties.Parse(bytes.NewReader(ours))
	if err != nil {
		return []string{fmt.Sprintf("our config text does not parse: %v", err)}
	}
	var diffs []string
	om := map[string]string{}
	for i, p := range op {
		if i > 0 && op[i-1].Key >= p.Key {
			diffs = append(diffs, fmt.Sprintf("config text not sorted at %s", p.Key))
		}
		om[p.Key] = p.Value
	}
	for _, p := range jp {
		v, ok := om[p.Key]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("config key %s missing (Java %q)", p.Key, p.Value))
		case configPathKeys[p.Key]:
		case v != p.Value:
			diffs = append(diffs, fmt.Sprintf("config %s=%q, Java %q", p.Key, v, p.Value))
		}
	}
	return diffs
}
func mapAt(v any, k string) map[string]any {
	return asMap(asMap(v)[k])
}
func listAt(v any, k string) []any { l, _ := asMap(v)[k].([]any); return l }

// compareReply lists every difference between Java's reply and ours, after
// the allowed 5.x differences and the fix-ups.
func compareReply(java, ours *codec.Command, fixes []fixup) []string {
	ignored := map[string]string{}
	for _, f := range fixes {
		for _, part := range f.ignore {
			ignored[part] = f.why
		}
	}
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	if ours.Flag != codec.FlagResponse {
		add("flag %d, want %d", ours.Flag, codec.FlagResponse)
	}
	if ours.Version != codec.ServerVersion {
		add("version %d, want %d", ours.Version, codec.ServerVersion)
	}
	if ours.SerializeType != java.SerializeType {
		add("serialize type %d, Java answered in %d", ours.SerializeType, java.SerializeType)
	}
	if _, ok := ignored["code"]; !ok && ours.Code != java.Code {
		add("code %d, Java %d (remark %q)", ours.Code, java.Code, ours.Remark)
	}
	if _, ok := ignored["ext"]; !ok {
		jm, om := extMap(java), extMap(ours)
		if !reflect.DeepEqual(jm, om) {
			add("extFields %v, Java %v", om, jm)
		}
		// JSON tells an absent extFields from {}; binary headers cannot.
		if java.SerializeType == codec.SerializeJSON && java.HasExt != ours.HasExt {
			add("extFields present=%v, Java present=%v", ours.HasExt, java.HasExt)
		}
	}
	if _, ok := ignored["remark"]; !ok {
		// Java 4.9.8 links the old FAQ page, 5.x the new one: only the first
		// line must match.
		if j, o := firstLine(java.Remark), firstLine(ours.Remark); j != o {
			add("remark %q, Java %q", ours.Remark, java.Remark)
		}
	}
	if _, ok := ignored["body"]; !ok {
		if _, ok := ignored["registerBody"]; ok && java.Code == 0 && len(java.Body) == 0 && string(ours.Body) == `{"table":{}}` {
			return diffs
		}
		compare := func(j, o []byte) []string { return compareBody(j, o, fixes) }
		for _, f := range fixes {
			if f.compare != nil {
				compare = f.compare
			}
		}
		for _, d := range compare(java.Body, ours.Body) {
			add("body: %s", d)
		}
	}
	return diffs
}

func extMap(c *codec.Command) map[string]string {
	m := make(map[string]string, len(c.Ext))
	for _, f := range c.Ext {
		m[f.Key] = f.Value
	}
	return m
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Key dialects of a JSON body.
const (
	dialectNone   = "no integer keys"
	dialectLegacy = "legacy bare integer keys"
	dialectQuoted = "quoted integer keys"
)

// keyDialect tells how the body writes integer map keys, by scanning
// outside strings for an object key made of digits.
func keyDialect(b []byte) string {
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			if i > 0 && (b[i-1] == '{' || b[i-1] == ',') {
				j := i + 1
				for j < len(b) && b[j] >= '0' && b[j] <= '9' {
					j++
				}
				if j > i+1 && j+1 < len(b) && b[j] == '"' && b[j+1] == ':' {
					return dialectQuoted
				}
			}
			inStr = true
		case '{', ',':
			j := i + 1
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '-') {
				j++
			}
			if j > i+1 && j < len(b) && b[j] == ':' {
				return dialectLegacy
			}
		}
	}
	return dialectNone
}

// quoteBareKeys turns fastjson's bare integer keys into JSON strings so a
// standard parser can read the legacy dialect.
func quoteBareKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		out = append(out, c)
		if inStr {
			switch c {
			case '\\':
				if i+1 < len(b) {
					i++
					out = append(out, b[i])
				}
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', ',':
			j := i + 1
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '-') {
				j++
			}
			if j > i+1 && j < len(b) && b[j] == ':' {
				out = append(out, '"')
				out = append(out, b[i+1:j]...)
				out = append(out, '"')
				i = j - 1
			}
		}
	}
	return out
}

func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(quoteBareKeys(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// stripAllowed removes what 5.x adds and Java 4.9.8 lacks: enableActingMaster
// and zoneName on BrokerData, stateVersion on DataVersion. Each must have
// the right type to be forgiven.
func stripAllowed(v any, java []byte) {
	javaHasAM := bytes.Contains(java, []byte(`"enableActingMaster"`))
	javaHasZone := bytes.Contains(java, []byte(`"zoneName"`))
	javaHasSV := bytes.Contains(java, []byte(`"stateVersion"`))
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["brokerAddrs"]; ok {
				if _, isBool := x["enableActingMaster"].(bool); isBool && !javaHasAM {
					delete(x, "enableActingMaster")
				}
				if _, isStr := x["zoneName"].(string); isStr && !javaHasZone {
					delete(x, "zoneName")
				}
			}
			if _, ok := x["counter"]; ok {
				if _, isNum := x["stateVersion"].(json.Number); isNum && !javaHasSV {
					delete(x, "stateVersion")
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}

// canonical renders v with sorted keys and every array sorted, so arrays
// compare as unordered multisets (Java's hash orders are not a contract).
func canonical(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var sb strings.Builder
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			sb.Write(kb)
			sb.WriteByte(':')
			sb.WriteString(canonical(x[k]))
		}
		sb.WriteByte('}')
		return sb.String()
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = canonical(e)
		}
		sort.Strings(elems)
		return "[" + strings.Join(elems, ",") + "]"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func compareBody(java, ours []byte, fixes []fixup) []string {
	if len(java) == 0 && len(ours) == 0 {
		return nil
	}
	if len(java) == 0 || len(ours) == 0 {
		return []string{fmt.Sprintf("ours %q, Java %q", ours, java)}
	}
	jv, jerr := parseJSON(java)
	if jerr != nil {
		if !bytes.Equal(java, ours) {
			return []string{fmt.Sprintf("ours %q, Java %q", ours, java)}
		}
		return nil
	}
	var diffs []string
	if jd, od := keyDialect(java), keyDialect(ours); jd != od {
		diffs = append(diffs, fmt.Sprintf("key dialect %s, Java %s", od, jd))
	}
	ov, err := parseJSON(ours)
	if err != nil {
		return append(diffs, fmt.Sprintf("ours is not JSON (%v): %q", err, ours))
	}
	for _, f := range fixes {
		if f.body != nil {
			f.body(jv)
		}
	}
	stripAllowed(ov, java)
	if jc, oc := canonical(jv), canonical(ov); jc != oc {
		diffs = append(diffs, fmt.Sprintf("\n  ours %s\n  Java %s", oc, jc))
	}
	return diffs
}

// The comparison helpers must tell the dialects apart and see through
// array order, and nothing else.
func TestReplayCompareHelpers(t *testing.T) {
	d := func(in, want string) {
		t.Helper()
		if got := keyDialect([]byte(in)); got != want {
			t.Errorf("keyDialect(%s) = %s, want %s", in, got, want)
		}
	}
	d(`{"brokerAddrs":{0:"127.0.0.1:10911",1:"x"}}`, dialectLegacy)
	d(`{"brokerAddrs":{"0":"127.0.0.1:10911"}}`, dialectQuoted)
	d(`{"topicList":["a,1:b","{2:c"]}`, dialectNone)
	d(`{"table":{}}`, dialectNone)

	f := func(java, ours string, wantDiff bool) {
		t.Helper()
		diffs := compareBody([]byte(java), []byte(ours), nil)
		if (len(diffs) > 0) != wantDiff {
			t.Errorf("compareBody(%s, %s) = %v, want diff %v", java, ours, diffs, wantDiff)
		}
	}
	f(`{"a":[1,2],"m":{0:"x"}}`, `{"m":{0:"x"},"a":[2,1]}`, false)
	f(`{"a":[1,2]}`, `{"a":[1,1,2]}`, true)
	f(`{"m":{0:"x"}}`, `{"m":{"0":"x"}}`, true)
	f(`{"brokerDatas":[{"brokerAddrs":{0:"a"},"brokerName":"b"}]}`, `{"brokerDatas":[{"brokerAddrs":{0:"a"},"brokerName":"b","enableActingMaster":false}]}`, false)
	f(`{"brokerDatas":[{"brokerAddrs":{0:"a"},"brokerName":"b"}]}`, `{"brokerDatas":[{"brokerAddrs":{0:"a"},"brokerName":"b","enableActingMaster":"no"}]}`, true)
	f(`{"counter":4,"timestamp":1}`, `{"counter":4,"stateVersion":0,"timestamp":1}`, false)
	f(`{"counter":4,"timestamp":1}`, `{"counter":5,"stateVersion":0,"timestamp":1}`, true)
	f(`k=v`, `k=v`, false)
	f(``, `{"table":{}}`, true)
}
