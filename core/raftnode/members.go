// Comparing raft's membership with the configured peers, and the optional
// reconciliation the ready leader runs.

package raftnode

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// memberChange is one step that brings raft's membership to the configured
// one: an add (or an address change, which raft's AddVoter does for a known
// id) or a removal.
type memberChange struct {
	add    bool
	id     string
	addr   string
	reason string
}

// membershipDiff lists the changes from have (raft's configuration) to want
// (the configured peers): adds and address changes first, removals after,
// and the removal of self last of all, since a leader that removes itself
// steps down and the rest would be left to the next leader.
func membershipDiff(have raft.Configuration, want []Peer, self string) []memberChange {
	var out []memberChange
	current := map[string]raft.Server{}
	for _, s := range have.Servers {
		current[string(s.ID)] = s
	}
	for _, p := range want {
		s, ok := current[p.ID]
		switch {
		case !ok:
			out = append(out, memberChange{add: true, id: p.ID, addr: p.RaftAddr, reason: "not a member"})
		case string(s.Address) != p.RaftAddr:
			out = append(out, memberChange{add: true, id: p.ID, addr: p.RaftAddr, reason: "address " + string(s.Address) + " in raft"})
		case s.Suffrage != raft.Voter:
			out = append(out, memberChange{add: true, id: p.ID, addr: p.RaftAddr, reason: "not a voter"})
		}
	}
	configured := map[string]bool{}
	for _, p := range want {
		configured[p.ID] = true
	}
	var removeSelf *memberChange
	ids := make([]string, 0, len(current))
	for id := range current {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if configured[id] {
			continue
		}
		c := memberChange{id: id, addr: string(current[id].Address), reason: "not configured"}
		if id == self {
			removeSelf = &c
			continue
		}
		out = append(out, c)
	}
	if removeSelf != nil {
		out = append(out, *removeSelf)
	}
	return out
}

func describe(changes []memberChange) []string {
	var out []string
	for _, c := range changes {
		verb := "remove"
		if c.add {
			verb = "add"
		}
		out = append(out, fmt.Sprintf("%s %s %s (%s)", verb, c.id, c.addr, c.reason))
	}
	return out
}

// checkMembership compares raft's latest configuration with the configured
// peers, logs a difference and returns the changes.
func (n *Node) checkMembership() ([]memberChange, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("raft configuration: %w", err)
	}
	changes := membershipDiff(f.Configuration(), n.cfg.Peers, n.cfg.ID)
	n.mismatch.Store(len(changes) > 0)
	if len(changes) > 0 {
		msg := "raft membership differs from the configured peers; raft's (from the log) is in force"
		if !n.cfg.ApplyMembershipChanges {
			msg += "; the configured one is not applied"
		}
		n.log.Warn(msg, "changes", describe(changes))
	}
	return changes, nil
}

// leaderMembership runs once per ready leadership.
func (n *Node) leaderMembership() {
	defer n.wg.Done()
	if !n.cfg.ApplyMembershipChanges {
		n.checkMembership()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-n.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := n.ReconcileMembership(ctx); err != nil {
		n.log.Warn("raft membership not reconciled", "err", err)
	}
}

// ReconcileMembership makes raft's membership equal to the configured peers,
// one change at a time, each committed before the next (single-server
// changes keep every intermediate majority overlapping). Only the ready
// leader can do it. A node added this way that bootstrapped itself on its
// first start keeps its one bootstrap entry at index 1 until a snapshot
// replaces its log; raft's latest configuration entry is what counts.
func (n *Node) ReconcileMembership(ctx context.Context) error {
	for {
		if !n.ReadyLeader() {
			return n.notLeader()
		}
		changes, err := n.checkMembership()
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil
		}
		c := changes[0]
		timeout := n.cfg.ApplyTimeout
		if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
			timeout = time.Until(d)
		}
		// No prevIndex: raft's GetConfiguration reports none (always 0,
		// which asks for no check). raft takes a change only once the
		// latest one is committed, and the next change is computed from
		// the configuration read after it, towards the same peers.
		var f raft.IndexFuture
		if c.add {
			f = n.raft.AddVoter(raft.ServerID(c.id), raft.ServerAddress(c.addr), 0, timeout)
		} else {
			f = n.raft.RemoveServer(raft.ServerID(c.id), 0, timeout)
		}
		if err := f.Error(); err != nil {
			return fmt.Errorf("raft membership %s: %w", describe(changes[:1])[0], n.mapApplyError(err))
		}
		n.log.Info("raft membership changed", "change", describe(changes[:1])[0])
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %v", ErrTimeout, err)
		}
	}
}

// Members returns raft's current membership (from the log, not the config).
func (n *Node) Members() ([]Peer, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("raft configuration: %w", err)
	}
	var out []Peer
	for _, s := range f.Configuration().Servers {
		p := Peer{ID: string(s.ID), RaftAddr: string(s.Address)}
		if c, ok := n.peers[p.ID]; ok {
			p.ServeAddr = c.ServeAddr
		}
		out = append(out, p)
	}
	return out, nil
}

// What the stream layer and the transport guard read of the node
// (memberSource, guardView); they run before New has set n.raft.

func (n *Node) selfID() string { return n.cfg.ID }

// members are the configured peers and every server of raft's latest
// configuration: a peer accepted by either. A member added by the log is
// accepted at once; one removed is refused once it is in neither (its
// node's configuration changed, and raft's membership with it).
func (n *Node) members() []Peer {
	out := make([]Peer, 0, 2*len(n.cfg.Peers))
	out = append(out, n.cfg.Peers...)
	if r := n.raftp.Load(); r != nil {
		for _, s := range r.GetConfiguration().Configuration().Servers {
			out = append(out, Peer{ID: string(s.ID), RaftAddr: string(s.Address)})
		}
	}
	return out
}

func (n *Node) term() uint64 {
	if r := n.raftp.Load(); r != nil {
		return r.CurrentTerm()
	}
	return 0
}

func (n *Node) state() raft.RaftState {
	if r := n.raftp.Load(); r != nil {
		return r.State()
	}
	return raft.Shutdown
}

func (n *Node) leader() (raft.ServerAddress, raft.ServerID) {
	if r := n.raftp.Load(); r != nil {
		return r.LeaderWithID()
	}
	return "", ""
}
