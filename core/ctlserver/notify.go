// NOTIFY_BROKER_ROLE_CHANGED (1008): the oneway notices the leader sends
// the live members of a set after an election, over one pooled connection
// per broker address that stays open for the next election.

package ctlserver

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/controller"
)

// notifier sends 1008s. Each broker address has a queue and at most one
// goroutine sending from it, so one election's notices go out in
// parallel and each address gets its notices in order. A notice still
// queued is replaced by a newer one for the same set (Java cancels the
// older-epoch task): a broker only acts on the highest masterEpoch anyway.
type notifier struct {
	log     *slog.Logger
	timeout time.Duration
	version int32
	ctx     context.Context // cancelled by close: ends dials and sends
	cancel  context.CancelFunc

	mu     sync.Mutex
	peers  map[string]*notifyPeer
	closed bool
	wg     sync.WaitGroup

	sent, failed atomic.Uint64
	// delivered, when set (tests), is told of each notice written.
	delivered func(addr string, rc *controller.RoleChange)
}

// notifyPeer is one broker address: its queue (under notifier.mu) and its
// pooled connection (only the sending goroutine touches it while one runs;
// close takes it after every goroutine ended).
type notifyPeer struct {
	addr    string
	queue   []*controller.RoleChange
	running bool
	conn    *client.Client
}

func newNotifier(log *slog.Logger, timeout time.Duration, version int32) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{log: log, timeout: timeout, version: version, ctx: ctx, cancel: cancel, peers: map[string]*notifyPeer{}}
}

// send queues rc for each address.
func (n *notifier) send(rc *controller.RoleChange, addrs []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for _, addr := range addrs {
		p := n.peers[addr]
		if p == nil {
			p = &notifyPeer{addr: addr}
			n.peers[addr] = p
		}
		queued := false
		for i, old := range p.queue {
			if old.BrokerName == rc.BrokerName {
				if rc.MasterEpoch > old.MasterEpoch {
					p.queue[i] = rc
				}
				queued = true
				break
			}
		}
		if !queued {
			p.queue = append(p.queue, rc)
		}
		if !p.running {
			p.running = true
			n.wg.Add(1)
			go n.run(p)
		}
	}
}

// run sends p's queue until it is empty.
func (n *notifier) run(p *notifyPeer) {
	defer n.wg.Done()
	for {
		n.mu.Lock()
		if len(p.queue) == 0 || n.closed {
			p.running = false
			n.mu.Unlock()
			return
		}
		rc := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		n.mu.Unlock()
		n.deliver(p, rc)
	}
}

// deliver writes one notice: on the pooled connection if there is one and
// it still works, else on a new one. A dial that fails is logged and the
// notice dropped, as Java drops it: the broker learns its role from its
// next 1004 poll.
func (n *notifier) deliver(p *notifyPeer, rc *controller.RoleChange) {
	var cmd codec.Command
	rc.NotifyCommand(&cmd)
	cmd.Version = n.version
	attrs := []any{"broker", p.addr, "broker_name", rc.BrokerName, "master_id", rc.MasterID, "master_epoch", rc.MasterEpoch}
	if p.conn != nil {
		if err := n.write(p.conn, &cmd); err == nil {
			n.delivered1(p.addr, rc)
			return
		}
		// The broker closed it (a restart, its idle timeout): one fresh
		// connection is the retry.
		p.conn.Close()
		p.conn = nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.timeout)
	c, err := client.Dial(ctx, p.addr)
	cancel()
	if err != nil {
		n.failed.Add(1)
		n.log.Warn("controller: role change notice not sent, broker unreachable", append(attrs, "err", err)...)
		return
	}
	p.conn = c
	if err := n.write(c, &cmd); err != nil {
		n.failed.Add(1)
		n.log.Warn("controller: role change notice not sent", append(attrs, "err", err)...)
		c.Close()
		p.conn = nil
		return
	}
	n.delivered1(p.addr, rc)
}

func (n *notifier) write(c *client.Client, cmd *codec.Command) error {
	ctx, cancel := context.WithTimeout(n.ctx, n.timeout)
	defer cancel()
	return c.InvokeOnewayContext(ctx, cmd)
}

func (n *notifier) delivered1(addr string, rc *controller.RoleChange) {
	n.sent.Add(1)
	n.log.Info("controller: role change notice sent", "broker", addr, "broker_name", rc.BrokerName,
		"master_id", rc.MasterID, "master_epoch", rc.MasterEpoch)
	if n.delivered != nil {
		n.delivered(addr, rc)
	}
}

// close drops what is queued, ends the senders and closes the pooled
// connections.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	n.wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.peers {
		if p.conn != nil {
			p.conn.Close()
			p.conn = nil
		}
		p.queue = nil
	}
}

// pooled is the number of open notice connections (tests).
func (n *notifier) pooled() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, p := range n.peers {
		if !p.running && p.conn != nil {
			k++
		}
	}
	return k
}
