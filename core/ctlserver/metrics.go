// A node's /metrics and /readyz: request and listener counters (core/metrics)
// and, read at scrape time, raft's state, the elections, the notices and
// the broker sets, all under rocketns_controller_; and the readiness test.

package ctlserver

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/metrics"
)

// MetricsPrefix starts every series a controller node writes, so that it
// stays apart from the NameServer's in one process.
const MetricsPrefix = "rocketns_controller_"

// Request classes of the latency histogram.
const (
	classHeartbeat = iota // 904
	classLeader           // the leader requests: reads and writes
	classNode             // 1005, 1009, 1010 and anything else
)

var requestClasses = []string{"heartbeat", "leader", "node"}

// requestMetrics builds the node's request counters from its code table.
func requestMetrics(routes []int32) (*metrics.Requests, error) {
	o := metrics.RequestOptions{
		Prefix:       MetricsPrefix,
		Classes:      requestClasses,
		UnknownClass: classNode,
		Responses: []metrics.Response{
			{Code: codec.SystemError, Name: "SYSTEM_ERROR"},
			{Code: codec.SystemBusy, Name: "SYSTEM_BUSY"},
			{Code: codec.RequestCodeNotSupported, Name: "REQUEST_CODE_NOT_SUPPORTED"},
			{Code: codec.NoPermission, Name: "NO_PERMISSION"},
			{Code: codec.ControllerNotLeader, Name: "CONTROLLER_NOT_LEADER"},
		},
	}
	for _, code := range routes {
		class := classLeader
		switch code {
		case codec.BrokerHeartbeat:
			class = classHeartbeat
		case codec.ControllerGetMetadataInfo, codec.UpdateControllerConfig, codec.GetControllerConfig:
			class = classNode
		}
		o.Codes = append(o.Codes, metrics.Code{Code: code, Name: codec.ControllerRequestCodeName(code), Class: class})
	}
	return metrics.NewRequests(o)
}

// observe counts a request and passes it on to Config.Observe.
func (s *Server) observe(code, resp int32, took time.Duration, weight uint64) {
	s.requests.Observe(code, resp, took, weight)
	if s.cfg.Observe != nil {
		s.cfg.Observe(code, resp, took, weight)
	}
}

// raftStates are the values of rocketns_controller_raft_state's label.
var raftStates = [...]string{"Follower", "Candidate", "Leader", "Shutdown"}

// WriteMetrics writes the node's series in Prometheus text format: an
// adminhttp collector.
func (s *Server) WriteMetrics(w io.Writer) {
	s.requests.Write(w)
	s.listener.Write(w)
	st := s.Stats()
	p := MetricsPrefix
	gauge := func(name, help string, v any) {
		fmt.Fprintf(w, "# HELP %s%s %s\n# TYPE %s%s gauge\n%s%s %v\n", p, name, help, p, name, p, name, v)
	}
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	fmt.Fprintf(w, "# HELP %sraft_state 1 for this node's raft state.\n# TYPE %sraft_state gauge\n", p, p)
	for _, state := range raftStates {
		fmt.Fprintf(w, "%sraft_state{state=\"%s\"} %d\n", p, strings.ToLower(state), b(st.Raft.State == state))
	}
	gauge("raft_leader", "1 when this node is the ready leader (elected and its barrier applied).", b(st.Raft.ReadyLeader))
	gauge("raft_has_leader", "1 when this node knows a leader of its group.", b(st.Raft.LeaderID != ""))
	gauge("raft_term", "The raft term.", st.Raft.Term)
	gauge("raft_last_log_index", "Index of the last raft log entry stored.", st.Raft.LastLogIndex)
	gauge("raft_commit_index", "Index of the last raft log entry known committed.", st.Raft.CommitIndex)
	gauge("raft_applied_index", "Index of the last raft log entry applied to the state.", st.Raft.AppliedIndex)
	gauge("raft_last_snapshot_index", "Index the newest snapshot covers (0: none).", st.Raft.LastSnapshotIndex)
	gauge("raft_voters", "Voting members in raft's configuration.", st.Raft.Voters)
	gauge("raft_membership_mismatch", "1 when raft's membership differs from the configured peers.", b(st.Raft.MembershipMismatch))
	if !st.Raft.LastContact.IsZero() {
		gauge("raft_last_contact_seconds", "Seconds since a follower last heard from its leader.",
			s.cfg.Clock().Sub(st.Raft.LastContact).Seconds())
	}
	counter := func(name, help, label string, values map[string]uint64, order []string) {
		fmt.Fprintf(w, "# HELP %s%s %s\n# TYPE %s%s counter\n", p, name, help, p, name)
		for _, k := range order {
			if label == "" {
				fmt.Fprintf(w, "%s%s %d\n", p, name, values[k])
			} else {
				fmt.Fprintf(w, "%s%s{%s=\"%s\"} %d\n", p, name, label, k, values[k])
			}
		}
	}
	e := st.Elections
	counter("elections_total", "Elections this node decided as leader, by result: success (a new master), still_exist (2011), failed (2012), cleared (2004, no candidate).",
		"result", map[string]uint64{"success": e.Success, "still_exist": e.StillExist, "failed": e.Failed, "cleared": e.Cleared},
		[]string{"success", "still_exist", "failed", "cleared"})
	counter("notifications_total", "NOTIFY_BROKER_ROLE_CHANGED (1008) notices, by result: sent, or failed (broker unreachable).",
		"result", map[string]uint64{"sent": st.NotificationsSent, "failed": st.NotificationsFailed}, []string{"sent", "failed"})
	counter("overloaded_total", "Leader requests refused with SYSTEM_BUSY (queue full).", "", map[string]uint64{"": st.Overloaded}, []string{""})
	counter("unknown_outcomes_total", "Writes whose commit timed out or lost the leadership (answered SYSTEM_ERROR; they may still apply).",
		"", map[string]uint64{"": st.UnknownOutcomes}, []string{""})
	counter("reannounced_total", "Masters announced again because their election's notice was never sent.",
		"", map[string]uint64{"": st.Reannounced}, []string{""})
	gauge("groups", "Broker sets in the replicated state.", st.Groups)
	gauge("groups_without_master", "Broker sets with no master recorded.", st.GroupsWithoutMaster)
	gauge("brokers_alive", "Brokers this node heard from within their heartbeat timeout.", st.BrokersAlive)
	gauge("queued_requests", "Leader requests waiting to be decided.", st.QueuedRequests)
}

// Readiness is why the node is not ready, "" when it is: started, not
// shutting down, and its raft group has a leader (this node or another),
// so brokers' leader requests can be answered.
func (s *Server) Readiness() string {
	select {
	case <-s.started:
	default:
		return "controller not started"
	}
	switch {
	case s.closing.Load():
		return "controller shutting down"
	case !s.node.HasLeader():
		return "controller: its raft group has no leader"
	}
	return ""
}

// RegisterAdmin adds the node's metrics and readiness to an admin
// listener (call it before the listener starts serving).
func (s *Server) RegisterAdmin(a *adminhttp.Server) {
	a.Collect(s.WriteMetrics)
	a.Ready("controller", s.Readiness)
}
