// Tests of the links between the NameServer's status page and the page of
// the controller embedded beside it.

package status

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/route"
)

func TestPagesLinkEachOther(t *testing.T) {
	clk := &fakeClock{ms: t0}
	tb := route.New(route.Options{}, clk.unixMs)
	page := func(o Options) string {
		t.Helper()
		o.Routes, o.Clock = tb, clk.time
		code, _, body := ctlGet(t, New(o), http.MethodGet, "/")
		if code != http.StatusOK {
			t.Fatalf("GET /: %d", code)
		}
		return body
	}
	if p := page(Options{ControllerPath: "/controller"}); !strings.Contains(p, `<a id="controller-link" href="/controller">`) {
		t.Errorf("the NameServer's page does not link its controller's page:\n%s", p)
	}
	if p := page(Options{}); strings.Contains(p, "controller-link") {
		t.Error("a NameServer without a controller links a controller page")
	}

	view, now := ctlFixture()
	ctl := func(path string) string {
		_, _, body := ctlGet(t, ControllerHandler(func() ControllerView { return view }, path, func() time.Time { return now }), http.MethodGet, path)
		return body
	}
	if p := ctl("/controller"); !strings.Contains(p, `<a id="namesrv-link" href="/">`) {
		t.Errorf("the embedded controller's page does not link back to the NameServer's:\n%s", p)
	}
	if p := ctl("/"); strings.Contains(p, "namesrv-link") {
		t.Error("a standalone controller's page links a NameServer page")
	}
}
