// The node's metrics after real traffic, and its readiness.

package ctlserver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func scrape(t *testing.T, s *Server) string {
	t.Helper()
	var b bytes.Buffer
	s.WriteMetrics(&b)
	return b.String()
}

func TestMetrics(t *testing.T) {
	s := single(t, nil)
	b := newRawBroker(t, s, "broker-a", 1, "127.0.0.1:30911")
	b.register()
	b.heartbeat()
	if r := b.elect(); r.Code != codec.Success {
		t.Fatalf("1002: %d %q", r.Code, r.Remark)
	}
	if r := b.elect(); r.Code != codec.ControllerMasterStillExist {
		t.Fatalf("second 1002: %d %q", r.Code, r.Remark)
	}
	call(t, s, request(codec.ControllerGetSyncStateData, 1)) // no body: 1 on any node
	// Nothing listens on the broker's port: the election's notice fails.
	remotingtest.WaitFor(t, "the notice to fail", func() bool { return s.Stats().NotificationsFailed == 1 })
	text := scrape(t, s)
	for _, line := range []string{
		`rocketns_controller_requests_total{code="BROKER_HEARTBEAT"} 1`,
		`rocketns_controller_requests_total{code="CONTROLLER_ELECT_MASTER"} 2`,
		`rocketns_controller_request_errors_total{code="CONTROLLER_ELECT_MASTER",response="OTHER"} 1`,
		`rocketns_controller_request_errors_total{code="CONTROLLER_GET_SYNC_STATE_DATA",response="SYSTEM_ERROR"} 1`,
		`rocketns_controller_raft_state{state="leader"} 1`,
		`rocketns_controller_raft_state{state="follower"} 0`,
		`rocketns_controller_raft_leader 1`,
		`rocketns_controller_raft_has_leader 1`,
		`rocketns_controller_raft_voters 1`,
		`rocketns_controller_elections_total{result="success"} 1`,
		`rocketns_controller_elections_total{result="still_exist"} 1`,
		`rocketns_controller_groups 1`,
		`rocketns_controller_groups_without_master 0`,
		`rocketns_controller_brokers_alive 1`,
		`rocketns_controller_notifications_total{result="failed"} 1`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
	for _, name := range []string{"raft_term", "raft_commit_index", "raft_applied_index", "raft_last_log_index"} {
		if !regexp.MustCompile(`(?m)^rocketns_controller_` + name + ` [1-9][0-9]*$`).MatchString(text) {
			t.Errorf("%s missing or zero", name)
		}
	}
	// One HELP and TYPE per family, and every sample of a known family.
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "rocketns_controller_") {
			t.Errorf("foreign line %q", l)
		}
	}
	if strings.Count(text, "# TYPE rocketns_controller_raft_state ") != 1 {
		t.Error("raft_state's TYPE line repeated")
	}
	if strings.Contains(text, "raft_last_contact_seconds") {
		t.Error("last contact on the leader")
	}
}

// /readyz of a controller node: ready with a leader, not before its start
// and not while it shuts down.
func TestReadiness(t *testing.T) {
	cfg := DefaultConfig(dledger(t, remotingtest.FreeAddrs(t, 3), 0), "")
	cfg.InMemory = true
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if why := n.Readiness(); !strings.Contains(why, "not started") {
		t.Fatalf("before start: %q", why)
	}
	s := single(t, nil)
	a := adminhttp.New(adminhttp.Options{})
	s.RegisterAdmin(a)
	h := a.Handler()
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with a leader: %d %q", code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "rocketns_controller_raft_leader 1") {
		t.Fatalf("/metrics: %d", code)
	}
	shutdown(t, s)
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Fatalf("/readyz after shutdown: %d %q", code, body)
	}
}

// A follower of a group without a quorum knows no leader: not ready.
func TestNotReadyWithoutLeader(t *testing.T) {
	cfg := DefaultConfig(dledger(t, remotingtest.FreeAddrs(t, 3), 0), "")
	cfg.InMemory, cfg.BindAddress = true, "127.0.0.1"
	fastRaft(&cfg)
	s := startNode(t, cfg)
	if why := s.Readiness(); !strings.Contains(why, "no leader") {
		t.Fatalf("alone of three: %q", why)
	}
	if text := scrape(t, s); !strings.Contains(text, "rocketns_controller_raft_has_leader 0\n") {
		t.Fatal("has_leader is not 0")
	}
}
