// Tests of the controller's status page against a fixed node view.

package status

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func ctlFixture() (ControllerView, time.Time) {
	now := time.UnixMilli(t0)
	return ControllerView{
		ID:   "n1",
		Raft: ControllerRaft{State: "Follower", Term: 7, CommitIndex: 42, AppliedIndex: 42, LeaderID: "n0", Voters: 3, LastContact: now.Add(-300 * time.Millisecond)},
		Sets: 2, SetsWithoutMaster: 1, BrokersAlive: 2,
		Elections: ControllerElections{Success: 2, Cleared: 1},
		Groups: []ControllerGroup{
			{Cluster: "DefaultCluster", BrokerName: "broker-a", HasMaster: true, MasterID: 2, MasterAddr: "10.0.0.2:30921",
				MasterEpoch: 2, SyncStateSet: []int64{1, 2}, SyncStateSetEpoch: 4, NextID: 3, Members: []ControllerMember{
					{ID: 1, Addr: "10.0.0.1:30911", Alive: true, LastHeartbeat: now.Add(-time.Second), Epoch: 2, MaxOffset: 100, ElectionPriority: 1},
					{ID: 2, Addr: "10.0.0.2:30921", Master: true, Alive: true, LastHeartbeat: now, Epoch: 2, MaxOffset: 100, ElectionPriority: 1},
				}},
			{Cluster: "DefaultCluster", BrokerName: "<ghost>", MasterEpoch: 3, NextID: 2, Members: []ControllerMember{
				{ID: 1, Addr: "10.0.0.9:30911", LastHeartbeat: now.Add(-15 * time.Second)},
			}},
		},
	}, now
}

func ctlGet(t *testing.T, h http.Handler, method, target string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, rec.Header(), rec.Body.String()
}

func TestControllerPage(t *testing.T) {
	view, now := ctlFixture()
	h := ControllerHandler(func() ControllerView { return view }, "/controller", func() time.Time { return now })
	code, hdr, page := ctlGet(t, h, http.MethodGet, "/controller")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || hdr.Get("Content-Security-Policy") != csp {
		t.Fatalf("%d %v", code, hdr)
	}
	for _, want := range []string{
		`<td id="leader">n0</td>`,
		`<td class="num">42 / 42</td>`,
		`<tr class="set"><td>DefaultCluster</td><td>broker-a</td><td class="num">2</td><td>10.0.0.2:30921</td><td class="num">2</td><td>{1, 2}</td><td class="num">4</td><td class="num">3</td></tr>`,
		`<tr class="set nomaster"><td>DefaultCluster</td><td>&lt;ghost&gt;</td><td class="num">none</td>`,
		`<tr class="member"><td class="num">2</td><td>10.0.0.2:30921</td><td>master</td><td>0 s ago</td>`,
		`<tr class="member"><td class="num">1</td><td>10.0.0.1:30911</td><td>in-sync</td><td>1 s ago</td>`,
		`<tr class="member dead"><td class="num">1</td><td>10.0.0.9:30911</td><td>out-of-sync</td><td>15 s ago, expired</td>`,
		"2 new master, 0 kept, 0 failed, 1 cleared",
		"0 s ago", // last contact
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<ghost>") {
		t.Error("a broker name is not escaped")
	}

	code, _, js := ctlGet(t, h, http.MethodGet, "/controller?format=json")
	var got struct {
		Node struct {
			ID, LeaderID string
			Term         uint64
		}
		BrokerSets []struct {
			BrokerName   string
			MasterEpoch  int32
			SyncStateSet []int64
			Members      []struct {
				BrokerID int64
				Role     string
				Alive    bool
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &got); code != http.StatusOK || err != nil {
		t.Fatalf("%d %v\n%s", code, err, js)
	}
	if got.Node.ID != "n1" || got.Node.LeaderID != "n0" || got.Node.Term != 7 || len(got.BrokerSets) != 2 ||
		got.BrokerSets[1].SyncStateSet == nil || got.BrokerSets[0].Members[1].Role != "master" || got.BrokerSets[1].Members[0].Alive {
		t.Fatalf("json %+v", got)
	}

	for target, want := range map[string]int{"/": 404, "/controller/x": 404, "/controller?format=xml": 400} {
		if code, _, _ := ctlGet(t, h, http.MethodGet, target); code != want {
			t.Errorf("GET %s: %d, want %d", target, code, want)
		}
	}
	if code, hdr, _ := ctlGet(t, h, http.MethodPost, "/controller"); code != 405 || hdr.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d", code)
	}
	if code, _, body := ctlGet(t, ControllerHandler(func() ControllerView { return ControllerView{} }, "/", time.Now), http.MethodGet, "/"); code != 200 ||
		!strings.Contains(body, `id="no-sets"`) || !strings.Contains(body, "none known") {
		t.Errorf("empty node: %d", code)
	}
}
