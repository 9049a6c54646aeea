// Tests that the status page links the embedded controller's page when
// the NameServer runs one.

package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
)

func TestStatusPageLinksEmbeddedController(t *testing.T) {
	for _, embedded := range []bool{false, true} {
		cfg := testConfig(t)
		if embedded {
			if err := cfg.Set(config.KeyEnableControllerInNamesrv, "true"); err != nil {
				t.Fatal(err)
			}
		}
		s, err := New(cfg, quietLog)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		linked := strings.Contains(rec.Body.String(), `href="`+ControllerStatusPath+`"`)
		if linked != embedded {
			t.Errorf("enableControllerInNamesrv=%v: the status page links %s: %v", embedded, ControllerStatusPath, linked)
		}
	}
}
