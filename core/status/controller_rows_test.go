// The controller page's row cap: however many broker sets a controller
// holds, the page lists DefaultMaxRows of them and says how many more.

package status

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func manySets(n int) []ControllerGroup {
	out := make([]ControllerGroup, n)
	for i := range out {
		out[i] = ControllerGroup{Cluster: "c", BrokerName: fmt.Sprintf("flood-%05d", i), NextID: 2,
			Members: []ControllerMember{{ID: 1, Addr: "10.0.0.1:1"}}}
	}
	return out
}

func TestControllerPageRowCap(t *testing.T) {
	now := time.UnixMilli(t0)
	for _, tc := range []struct {
		name       string
		view       ControllerView
		more, sets int
	}{
		{"all sets in the view", ControllerView{ID: "n0", Sets: 600, Groups: manySets(600)}, 100, 500},
		{"the view cut by its maker", ControllerView{ID: "n0", Sets: 20000, Groups: manySets(DefaultMaxRows)}, 20000 - DefaultMaxRows, 500},
		{"under the cap", ControllerView{ID: "n0", Sets: 3, Groups: manySets(3)}, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ControllerHandler(func() ControllerView { return tc.view }, "/", func() time.Time { return now })
			code, _, page := ctlGet(t, h, http.MethodGet, "/")
			if code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			if n := strings.Count(page, `<tr class="set`); n != tc.sets {
				t.Fatalf("%d set rows, want %d", n, tc.sets)
			}
			if n := strings.Count(page, `<table class="members">`); n != tc.sets {
				t.Fatalf("%d member tables, want %d", n, tc.sets)
			}
			note := fmt.Sprintf(`<p id="more-sets">%d more broker sets not shown: the page lists the first %d;`, tc.more, DefaultMaxRows)
			if tc.more > 0 != strings.Contains(page, note) || tc.more == 0 && strings.Contains(page, `id="more-sets"`) {
				t.Fatalf("the note for %d more: %v", tc.more, strings.Contains(page, note))
			}
			_, _, js := ctlGet(t, h, http.MethodGet, "/?format=json")
			var p struct {
				BrokerSets []json.RawMessage `json:"brokerSets"`
				More       int               `json:"moreBrokerSets"`
			}
			if err := json.Unmarshal([]byte(js), &p); err != nil || len(p.BrokerSets) != tc.sets || p.More != tc.more {
				t.Fatalf("json: %d sets, %d more, %v", len(p.BrokerSets), p.More, err)
			}
		})
	}
}
