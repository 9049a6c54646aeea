// Tests of the controller page's leader address and peer health.

package status

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestControllerPagePeers(t *testing.T) {
	view, now := ctlFixture()
	view.Raft.State, view.Raft.LeaderID, view.Raft.LeaderAddr = "Leader", "n1", "10.0.0.2:9878"
	view.Raft.Peers = []ControllerPeer{
		{ID: "n0", RaftAddr: "10.0.0.1:9878", ServeAddr: "10.0.0.1:9878", Tracked: true, Reachable: true},
		{ID: "n1", RaftAddr: "10.0.0.2:9878", ServeAddr: "10.0.0.2:9878", Self: true, Leader: true, Tracked: true, Reachable: true},
		{ID: "n2", RaftAddr: "10.0.0.3:9878", ServeAddr: "10.0.0.3:9878", Tracked: true,
			DownSince: now.Add(-41 * time.Second), LastContact: now.Add(-42 * time.Second), Failures: 160},
	}
	h := ControllerHandler(func() ControllerView { return view }, "/", func() time.Time { return now })
	_, _, page := ctlGet(t, h, http.MethodGet, "/")
	for _, want := range []string{
		`<td id="leader">n1 (10.0.0.2:9878)</td>`,
		`<tr class="peer"><td>n0</td><td>10.0.0.1:9878</td><td>10.0.0.1:9878</td><td></td><td>reachable</td></tr>`,
		`<tr class="peer"><td>n1</td><td>10.0.0.2:9878</td><td>10.0.0.2:9878</td><td>leader, this node</td><td>reachable</td></tr>`,
		`<tr class="peer down"><td>n2</td><td>10.0.0.3:9878</td><td>10.0.0.3:9878</td><td></td><td>unreachable for 41 s, last contact 42 s ago, 160 failed heartbeats</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s\n%s", want, page)
		}
	}
	_, _, js := ctlGet(t, h, http.MethodGet, "/?format=json")
	var doc struct {
		Node struct {
			LeaderAddr string `json:"leaderAddress"`
			Peers      []struct {
				ID          string `json:"id"`
				Reachable   *bool  `json:"reachable"`
				DownSince   int64  `json:"downSince"`
				LastContact int64  `json:"lastContact"`
				Failures    uint64 `json:"failedHeartbeats"`
			} `json:"peers"`
		} `json:"node"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Node.Peers
	if doc.Node.LeaderAddr != "10.0.0.2:9878" || len(p) != 3 || p[2].Reachable == nil || *p[2].Reachable ||
		p[2].DownSince != now.Add(-41*time.Second).UnixMilli() || p[2].LastContact != now.Add(-42*time.Second).UnixMilli() || p[2].Failures != 160 {
		t.Errorf("JSON node %+v", doc.Node)
	}

	// A follower lists the peers; their health is the leader's to know.
	view.Raft.State, view.Raft.LeaderAddr = "Follower", ""
	for i := range view.Raft.Peers {
		view.Raft.Peers[i].Tracked = false
	}
	_, _, page = ctlGet(t, h, http.MethodGet, "/")
	if !strings.Contains(page, `<td id="leader">n1</td>`) || !strings.Contains(page, `<td>n2</td><td>10.0.0.3:9878</td><td>10.0.0.3:9878</td><td></td><td>on the leader&#39;s page</td>`) {
		t.Errorf("follower's page:\n%s", page)
	}
}
