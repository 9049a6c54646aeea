// The recorded Java 5.3.3 exchanges replayed over the wire against a
// single-node controller: each recorded request frame sent as recorded,
// on as many connections as were recorded, at the recorded time on the
// node's clock, and each reply compared with Java's.

package ctlserver

import (
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller/controllertest"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// recordedPort is the controller port of the recordings.
const recordedPort = "28878"

func TestReplayVectorsOverTheWire(t *testing.T) { replayRecorded(t, nil, nil) }

// replayRecorded replays the recordings against a node enforcing policy
// (nil: none), each recorded connection dialled from hostOf(conn) (nil:
// the default loopback address).
func replayRecorded(t *testing.T, policy *auth.Policy, hostOf func(conn int) string) {
	steps, err := controllertest.Script()
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.Set(steps[0].Req.TS)
	s := single(t, func(c *Config) {
		c.Auth = policy
		// 1010 lists Java's defaults, as the recorded node ran them.
		java := *c
		c.Settings = NewMemoryConfig(&java, map[string]string{
			"rocketmqHome":    "/opt/rocketmq",
			"configStorePath": "/opt/rocketmq/controller/controller.properties",
		})
		c.Clock = clock.Now
		// The recording's controller dialled a broker port after the
		// first election (refused); nothing must be sent there from here.
		c.NotifyBrokerRoleChanged = false
		// The scans run on real time, over a replay of a fraction of the
		// recorded minute: keep them out of it.
		c.ScanNotActiveBrokerInterval = time.Hour
		c.ScanInactiveMasterInterval = time.Hour
	})
	_, port, _ := net.SplitHostPort(s.Addr().String())

	conns := map[int]*remotingtest.Wire{}
	wire := func(conn int) *remotingtest.Wire {
		if w := conns[conn]; w != nil {
			return w
		}
		w := remotingtest.Dial(t, s.Addr().String())
		if hostOf != nil {
			w = dialFrom(t, hostOf(conn), s.Addr().String())
		}
		conns[conn] = w
		return w
	}
	// sync makes sure the connection's earlier frames were served (a
	// oneway one leaves no other trace) and answered nothing more: the
	// next frame must be the answer to this 1005.
	syncOpaque := int32(-1)
	sync := func(w *remotingtest.Wire, after string) {
		t.Helper()
		syncOpaque--
		w.Send(&codec.Command{Code: codec.ControllerGetMetadataInfo, Opaque: syncOpaque})
		r := w.MustRecv()
		if r.Opaque != syncOpaque {
			t.Fatalf("after %s: got a frame (code %d opaque %d) that answers nothing expected", after, r.Code, r.Opaque)
		}
	}

	compared := map[int32]int{}
	for _, st := range steps {
		h, err := st.Req.ParseHeader()
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(st.Req.TS)
		raw, err := st.Req.Raw()
		if err != nil {
			t.Fatal(err)
		}
		w := wire(st.Req.Conn)
		w.SendRaw(raw)
		where := st.Req.File + " " + codec.RequestCodeName(h.Code)
		if st.Resp == nil {
			// Oneway: served (sync sees the effects) and never answered.
			sync(w, where)
			continue
		}
		resp := w.MustRecv()
		if resp.Opaque != h.Opaque || !resp.IsResponse() {
			t.Fatalf("%s opaque %d: got opaque %d flag %d", where, h.Opaque, resp.Opaque, resp.Flag)
		}
		if resp.Version != 0 || resp.SerializeType != codec.SerializeJSON {
			t.Errorf("%s opaque %d: version %d serialize type %d, want 0 and JSON", where, h.Opaque, resp.Version, resp.SerializeType)
		}
		want, got := normalise(*st.Resp, resp, port)
		diffs, err := controllertest.Compare(&want, got)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s conn %d opaque %d: %s", where, st.Req.Conn, h.Opaque, d)
		}
		compared[h.Code]++
	}
	for _, c := range slices.Sorted(maps.Keys(conns)) {
		sync(conns[c], "the replay")
	}
	// Every answered code of the recordings, and how many answers.
	want := map[int32]int{1001: 10, 1002: 9, 1003: 7, 1004: 17, 1005: 13, 1006: 4, 1010: 1, 1011: 5, 1012: 5,
		1013: 10, 904: 3, 9999: 1, 1014: 1}
	if !maps.Equal(compared, want) {
		t.Errorf("compared %v, want %v", compared, want)
	}
}

var (
	pathLine  = regexp.MustCompile(`(?m)^(configStorePath|controllerStorePath|rocketmqHome)=.*$`)
	jraftHash = regexp.MustCompile(`JraftConfig@[0-9a-f]+`)
)

// normalise leaves out of a recorded reply and ours what the vectors'
// README lists as varying between runs: the controller port (ours is
// free, theirs 28878), paths and the JraftConfig hash of the 1010 text.
func normalise(want codecFrame, got *codec.Command, port string) (codecFrame, controllertest.Got) {
	fixPort := func(s string) string {
		return strings.ReplaceAll(s, "127.0.0.1:"+port, "127.0.0.1:"+recordedPort)
	}
	g := controllertest.Got{Code: got.Code, Remark: got.Remark, HasExt: got.HasExt, Ext: map[string]string{}}
	for _, f := range got.Ext {
		g.Ext[f.Key] = fixPort(f.Value)
	}
	g.Body = []byte(fixPort(string(got.Body)))
	if got.Code == codec.Success && strings.Contains(want.BodyText, "listenPort=") {
		text := strings.ReplaceAll(string(g.Body), "listenPort="+port+"\n", "listenPort="+recordedPort+"\n")
		text = pathLine.ReplaceAllString(text, "$1=<path>")
		g.Body = []byte(jraftHash.ReplaceAllString(text, "JraftConfig@<hash>"))
		want.BodyText = jraftHash.ReplaceAllString(pathLine.ReplaceAllString(want.BodyText, "$1=<path>"), "JraftConfig@<hash>")
	}
	return want, g
}

type codecFrame = controllertest.Frame
