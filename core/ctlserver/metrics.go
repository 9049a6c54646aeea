// A node's /metrics and /readyz: request and listener counters (core/metrics)
// and, read at scrape time, raft's state, the elections, the notices and
// the broker sets, all under rocketns_controller_; and the readiness test.

package ctlserver

import (
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/metrics"
)

// MetricsPrefix starts every series a controller node writes, so that it
// stays apart from the NameServer's in one process.
const MetricsPrefix = "rocketns_controller_"

// Request classes, the label of the latency histogram. A code's class
// (in the code table) also says where it is answered.
const (
	classHeartbeat = iota // 904: on every node, into its own liveness table
	classLeader           // by the ready leader from the state; 2007 on any other node
	classNode             // on every node from its own view (1005, 1009, 1010), and unknown codes
)

var requestClasses = []string{"heartbeat", "leader", "node"}

// requestMetrics builds the node's request counters from its code table.
func requestMetrics(codes []requestCode) (*metrics.Requests, error) {
	o := metrics.RequestOptions{
		Prefix:       MetricsPrefix,
		Classes:      requestClasses,
		UnknownClass: classNode,
		Responses: metrics.Responses(codec.SystemError, codec.SystemBusy, codec.RequestCodeNotSupported,
			codec.NoPermission, codec.ControllerNotLeader),
	}
	for _, c := range codes {
		o.Codes = append(o.Codes, metrics.Code{Code: c.code, Name: codec.RequestCodeName(c.code), Class: c.class})
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

// scrapeFamilies are the node's series read at scrape time from Stats.
var scrapeFamilies = func() []metrics.Family {
	p := MetricsPrefix
	g := func(name, help string, labels ...string) metrics.Family {
		return metrics.Family{Name: p + name, Help: help, Type: prometheus.GaugeValue, Labels: labels}
	}
	c := func(name, help string, labels ...string) metrics.Family {
		return metrics.Family{Name: p + name, Help: help, Type: prometheus.CounterValue, Labels: labels}
	}
	return []metrics.Family{
		g("raft_state", "1 for this node's raft state.", "state"),
		g("raft_leader", "1 when this node is the ready leader (elected and its barrier applied)."),
		g("raft_has_leader", "1 when this node knows a leader of its group."),
		g("raft_term", "The raft term."),
		g("raft_last_log_index", "Index of the last raft log entry stored."),
		g("raft_commit_index", "Index of the last raft log entry known committed."),
		g("raft_applied_index", "Index of the last raft log entry applied to the state."),
		g("raft_last_snapshot_index", "Index the newest snapshot covers (0: none)."),
		g("raft_voters", "Voting members in raft's configuration."),
		g("raft_membership_mismatch", "1 when raft's membership differs from the configured peers."),
		g("raft_last_contact_seconds", "Seconds since a follower last heard from its leader."),
		c("raft_refused_connections_total", "Raft connections closed before raft saw them: from no member's address, past a connection cap, or failing the opening exchange (the cluster secret, TLS, a non-member's id)."),
		c("raft_refused_rpcs_total", "Raft RPCs refused: from a non-member, with an absurd term, or a TimeoutNow not from the current leader."),
		c("elections_total", "Elections this node decided as leader, by result: success (a new master), still_exist (2011), failed (2012), cleared (2004, no candidate).", "result"),
		c("notifications_total", "NOTIFY_BROKER_ROLE_CHANGED (1008) notices, by result: sent, or failed (broker unreachable).", "result"),
		c("overloaded_total", "Leader requests refused with SYSTEM_BUSY (queue full)."),
		c("unknown_outcomes_total", "Writes whose commit timed out or lost the leadership (answered SYSTEM_ERROR; they may still apply)."),
		c("reannounced_total", "Masters announced again because their election's notice was never sent."),
		c("refusals_total", "Requests refused before they changed anything, by reason: an authorization reason (address, unsigned, unknown_account, bad_signature, role, binding, not_strict, stale, replay, replay_cache_full, foreign), heartbeat_takeover, or a bound (broker_sets, brokers_per_set, liveness, field_size).", "reason"),
		g("groups", "Broker sets in the replicated state."),
		g("groups_without_master", "Broker sets with no master recorded."),
		g("brokers_alive", "Brokers this node heard from within their heartbeat timeout."),
		g("queued_requests", "Leader requests waiting to be decided."),
	}
}()

// Collectors are the node's metrics: the remoting port's request and
// listener counters, and the series read at each scrape from Stats.
func (s *Server) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.requests, s.listener, metrics.NewScrape(s.collect, scrapeFamilies...)}
}

// WriteMetrics writes the node's series in Prometheus text format.
func (s *Server) WriteMetrics(w io.Writer) { _ = metrics.WriteText(w, s.Collectors()...) }

func (s *Server) collect(e metrics.Emitter) {
	st := s.Stats()
	emit := func(name string, v float64, labels ...string) { e.Emit(MetricsPrefix+name, v, labels...) }
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, state := range raftStates {
		emit("raft_state", b(st.Raft.State == state), strings.ToLower(state))
	}
	emit("raft_leader", b(st.Raft.ReadyLeader))
	emit("raft_has_leader", b(st.Raft.LeaderID != ""))
	emit("raft_term", float64(st.Raft.Term))
	emit("raft_last_log_index", float64(st.Raft.LastLogIndex))
	emit("raft_commit_index", float64(st.Raft.CommitIndex))
	emit("raft_applied_index", float64(st.Raft.AppliedIndex))
	emit("raft_last_snapshot_index", float64(st.Raft.LastSnapshotIndex))
	emit("raft_voters", float64(st.Raft.Voters))
	emit("raft_membership_mismatch", b(st.Raft.MembershipMismatch))
	emit("raft_refused_connections_total", float64(st.Raft.RefusedConnections))
	emit("raft_refused_rpcs_total", float64(st.Raft.RefusedRPCs))
	if !st.Raft.LastContact.IsZero() {
		emit("raft_last_contact_seconds", s.cfg.Clock().Sub(st.Raft.LastContact).Seconds())
	}
	el := st.Elections
	emit("elections_total", float64(el.Success), "success")
	emit("elections_total", float64(el.StillExist), "still_exist")
	emit("elections_total", float64(el.Failed), "failed")
	emit("elections_total", float64(el.Cleared), "cleared")
	emit("notifications_total", float64(st.NotificationsSent), "sent")
	emit("notifications_total", float64(st.NotificationsFailed), "failed")
	emit("overloaded_total", float64(st.Overloaded))
	emit("unknown_outcomes_total", float64(st.UnknownOutcomes))
	emit("reannounced_total", float64(st.Reannounced))
	for i := range s.counts.refusals {
		emit("refusals_total", float64(s.counts.refusals[i].Load()), refusalNames[i])
	}
	emit("groups", float64(st.Groups))
	emit("groups_without_master", float64(st.GroupsWithoutMaster))
	emit("brokers_alive", float64(st.BrokersAlive))
	emit("queued_requests", float64(st.QueuedRequests))
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
	a.Register(s.Collectors()...)
	a.Ready("controller", s.Readiness)
}
