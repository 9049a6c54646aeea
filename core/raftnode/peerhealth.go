// The leader's view of its peers' health, from raft's heartbeat
// observations: when a peer stopped answering, since when and how often,
// for the status page and for one log line when a peer goes down and one
// when it is back.

package raftnode

import (
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// PeerStats is one configured peer as this node sees it.
type PeerStats struct {
	ID        string
	RaftAddr  string
	ServeAddr string
	Self      bool // this node
	Leader    bool // the leader this node knows of
	// Tracked is set on the leader, the only node that heartbeats every
	// peer; the fields below are meaningful only then.
	Tracked bool
	// Reachable is false from a failed heartbeat until one succeeds again.
	Reachable bool
	// DownSince is the first failed heartbeat of the current outage,
	// LastContact raft's last contact with the peer then (its last answer,
	// or when this node began to lead if it had not answered since),
	// Failures the failed heartbeats since.
	DownSince   time.Time
	LastContact time.Time
	Failures    uint64
}

// outage is one peer's current run of failed heartbeats.
type outage struct {
	since, lastContact time.Time
	lastLog            time.Time
	lastFailure        time.Time
	// term is the leadership term of the last failure: a peer is shown
	// down only in a term in which a heartbeat to it failed.
	term     uint64
	failures uint64
}

// peerHealth records the peers' outages. An outage outlives a change of
// leadership (on a busy group this node may lose and win it again while a
// peer stays down, and the peer's outage is one, logged once) but it is
// shown only while this node's heartbeats in the current term fail.
type peerHealth struct {
	log  *slog.Logger
	now  func() time.Time
	mu   sync.Mutex
	down map[string]*outage // by peer id: at most one per configured peer
}

func newPeerHealth(log *slog.Logger, now func() time.Time) *peerHealth {
	return &peerHealth{log: log, now: now, down: map[string]*outage{}}
}

// failed records a failed heartbeat to peer id in term; lastContact is
// raft's last successful contact with it. A failure within repeatEvery of
// the peer's last one continues its outage, whatever the term: raft's
// heartbeats restart with each leadership, and say nothing of a peer that
// answered meanwhile.
func (h *peerHealth) failed(term uint64, id string, lastContact time.Time, peers map[string]Peer) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.down[id]
	if o != nil && now.Sub(o.lastFailure) >= repeatEvery {
		o = nil // the peer was back while this node did not lead
	}
	if o == nil {
		h.down[id] = &outage{since: now, lastContact: lastContact, lastLog: now, lastFailure: now, term: term, failures: 1}
		args := []any{"peer", id, "raft_addr", peers[id].RaftAddr}
		if !lastContact.IsZero() {
			args = append(args, "last_contact_ago", now.Sub(lastContact).Round(time.Millisecond))
		}
		h.log.Warn("raft: peer unreachable; the group goes on while a majority of its peers answer", args...)
		return
	}
	o.failures++
	o.lastFailure, o.term = now, term
	if now.Sub(o.lastLog) >= repeatEvery {
		o.lastLog = now
		h.log.Warn("raft: peer still unreachable", "peer", id, "raft_addr", peers[id].RaftAddr,
			"down_for", now.Sub(o.since).Round(time.Millisecond), "failed_heartbeats", o.failures)
	}
}

// resumed closes peer id's outage, if it has one.
func (h *peerHealth) resumed(id string, peers map[string]Peer) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.down[id]
	if o == nil {
		return
	}
	delete(h.down, id)
	h.log.Info("raft: peer reachable again", "peer", id, "raft_addr", peers[id].RaftAddr,
		"down_for", now.Sub(o.since).Round(time.Millisecond), "failed_heartbeats", o.failures)
}

// outages returns a copy of the outages whose peer failed a heartbeat in
// term.
func (h *peerHealth) outages(term uint64) map[string]outage {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]outage, len(h.down))
	for id, o := range h.down {
		if o.term == term {
			out[id] = *o
		}
	}
	return out
}

// watchPeers feeds raft's heartbeat observations to n.health until the
// node stops. The observer blocks raft's heartbeat goroutine until the
// observation is taken, so none is lost (a lost "resumed" would show a
// peer down for ever); the goroutine takes them until after raft has shut
// down (Close closes n.stop only then).
func (n *Node) watchPeers() {
	n.health = newPeerHealth(n.log, time.Now)
	ch := make(chan raft.Observation, 16)
	n.raft.RegisterObserver(raft.NewObserver(ch, true, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation:
			return true
		}
		return false
	}))
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			select {
			case o := <-ch:
				switch d := o.Data.(type) {
				case raft.FailedHeartbeatObservation:
					n.health.failed(n.raft.CurrentTerm(), string(d.PeerID), d.LastContact, n.peers)
				case raft.ResumedHeartbeatObservation:
					n.health.resumed(string(d.PeerID), n.peers)
				}
			case <-n.stop:
				return
			}
		}
	}()
}

// peerStats lists the configured peers in configuration order, with their
// health when this node leads.
func (n *Node) peerStats(leaderID string) []PeerStats {
	leading := n.raft.State() == raft.Leader
	var down map[string]outage
	if leading {
		down = n.health.outages(n.raft.CurrentTerm())
	}
	out := make([]PeerStats, len(n.cfg.Peers))
	for i, p := range n.cfg.Peers {
		ps := PeerStats{ID: p.ID, RaftAddr: p.RaftAddr, ServeAddr: p.ServeAddr, Self: p.ID == n.cfg.ID,
			Leader: p.ID == leaderID, Tracked: leading, Reachable: true}
		if o, ok := down[p.ID]; ok {
			ps.Reachable, ps.DownSince, ps.LastContact, ps.Failures = false, o.since, o.lastContact, o.failures
		}
		out[i] = ps
	}
	return out
}
