// Who may open a raft connection: the members (the configured peers and
// raft's own membership), their hosts resolved to the addresses a
// connection's source is compared with, and a log limiter for refusals.

package raftnode

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// memberSource names the members a stream layer and the transport guard
// accept. Node implements it: the configured peers and every server in
// raft's latest configuration, so a membership change applies at once and
// a removed member stops being accepted once it is in neither.
type memberSource interface {
	selfID() string
	members() []Peer
}

// staticMembers is a fixed member list (a layer used without a node).
type staticMembers struct {
	self  string
	peers []Peer
}

func (s staticMembers) selfID() string  { return s.self }
func (s staticMembers) members() []Peer { return s.peers }

// Resolution of the members' host names. A name that resolves late (a
// StatefulSet pod's, before the pod runs) or to a new address (a pod
// rescheduled) is looked up again when a connection comes from an address
// not in the table, at most once per resolveRetry, and in any case every
// resolveTTL. Lookups run in the background: a connection is never held
// for DNS, it is refused and the peer's next dial finds the fresh table.
const (
	resolveRetry   = time.Second
	resolveTTL     = 30 * time.Second
	resolveTimeout = 5 * time.Second
)

// peerTable is the allowed source addresses for one set of member hosts.
type peerTable struct {
	key      string                  // the hosts, sorted and joined
	literals []netip.Addr            // hosts written as addresses
	names    []string                // hosts that need DNS
	resolved map[string][]netip.Addr // the last lookup of each name
	ips      map[netip.Addr]bool     // literals and resolved names
	at       time.Time               // when names were last looked up (zero: never)
}

// fill computes ips from literals and resolved.
func (t *peerTable) fill() {
	t.ips = make(map[netip.Addr]bool, len(t.literals)+2*len(t.resolved))
	for _, a := range t.literals {
		t.ips[a] = true
	}
	for _, addrs := range t.resolved {
		for _, a := range addrs {
			t.ips[a] = true
		}
	}
}

// peerSet answers whether a connection's source address belongs to a
// member. It is safe for concurrent use.
type peerSet struct {
	src    atomic.Pointer[memberSource]
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	log    *slog.Logger
	now    func() time.Time

	table atomic.Pointer[peerTable]

	mu        sync.Mutex // guards resolving, tried, ctx
	resolving bool
	tried     time.Time // last lookup started
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

func newPeerSet(log *slog.Logger) *peerSet {
	ctx, cancel := context.WithCancel(context.Background())
	return &peerSet{
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		log:    log,
		now:    time.Now,
		ctx:    ctx,
		cancel: cancel,
	}
}

// close stops a lookup in progress and waits for it.
func (p *peerSet) close() {
	p.cancel()
	p.wg.Wait()
}

func (p *peerSet) source() memberSource {
	if s := p.src.Load(); s != nil {
		return *s
	}
	return nil
}

// allowID reports whether id names a member.
func (p *peerSet) allowID(id string) bool {
	src := p.source()
	if src == nil || id == "" {
		return false
	}
	for _, m := range src.members() {
		if m.ID == id {
			return true
		}
	}
	return false
}

// idForAddr is the member whose raft address is addr ("" if none).
func (p *peerSet) idForAddr(addr string) string {
	if src := p.source(); src != nil {
		for _, m := range src.members() {
			if m.RaftAddr == addr {
				return m.ID
			}
		}
	}
	return ""
}

// memberHosts are the hosts of the members' raft addresses, sorted, each
// once.
func memberHosts(ms []Peer) []string {
	hosts := make([]string, 0, len(ms))
	for _, m := range ms {
		h, _, err := net.SplitHostPort(m.RaftAddr)
		if err != nil || h == "" {
			continue
		}
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// hosts are the member hosts now, for certificate names.
func (p *peerSet) hosts() []string {
	src := p.source()
	if src == nil {
		return nil
	}
	return memberHosts(src.members())
}

// allowIP reports whether ip is an address of a member's host, from the
// table alone; a miss or a stale table starts a lookup in the background.
func (p *peerSet) allowIP(ip netip.Addr) bool {
	src := p.source()
	if src == nil || !ip.IsValid() {
		return false
	}
	ip = ip.Unmap()
	hosts := memberHosts(src.members())
	key := strings.Join(hosts, ",")
	t := p.table.Load()
	if t == nil || t.key != key {
		t = p.rebuild(key, hosts, t)
	}
	ok := t.ips[ip]
	if len(t.names) > 0 {
		now := p.now()
		if t.at.IsZero() || now.Sub(t.at) >= resolveTTL || (!ok && now.Sub(t.at) >= resolveRetry) {
			p.resolveAsync(t)
		}
	}
	return ok
}

// rebuild makes the table for a new set of hosts: literal addresses at
// once, names with their previous results until the lookup it starts
// replaces them (so a membership change never drops a name that stays).
func (p *peerSet) rebuild(key string, hosts []string, prev *peerTable) *peerTable {
	t := &peerTable{key: key, resolved: map[string][]netip.Addr{}}
	for _, h := range hosts {
		if a, err := netip.ParseAddr(h); err == nil {
			t.literals = append(t.literals, a.Unmap())
			continue
		}
		t.names = append(t.names, h)
		if prev != nil {
			if old, ok := prev.resolved[h]; ok {
				t.resolved[h] = old
			}
		}
	}
	t.fill()
	if prev != nil {
		t.at = prev.at
	}
	if len(t.names) > 0 && (prev == nil || !slices.Equal(prev.names, t.names)) {
		t.at = time.Time{} // new names: look them up now
	}
	p.table.Store(t)
	return t
}

// resolveAsync starts one lookup of t's names unless one runs or one
// started less than resolveRetry ago.
func (p *peerSet) resolveAsync(t *peerTable) {
	p.mu.Lock()
	now := p.now()
	if p.resolving || p.ctx.Err() != nil || (!p.tried.IsZero() && now.Sub(p.tried) < resolveRetry) {
		p.mu.Unlock()
		return
	}
	p.resolving, p.tried = true, now
	p.wg.Add(1)
	ctx := p.ctx
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			p.resolving = false
			p.mu.Unlock()
		}()
		p.resolve(ctx, t)
	}()
}

// resolve looks up t's names and stores a table with the results, unless
// the members changed meanwhile. A name that does not resolve keeps its
// previous addresses: a DNS hiccup must not cut a running group.
func (p *peerSet) resolve(ctx context.Context, t *peerTable) {
	next := &peerTable{key: t.key, literals: t.literals, names: t.names, resolved: map[string][]netip.Addr{}, at: p.now()}
	for _, h := range t.names {
		lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := p.lookup(lctx, h)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("raft: cannot resolve a member's host; connections from it are refused until it resolves",
				"host", h, "err", err)
			addrs = t.resolved[h]
		}
		unmapped := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			unmapped[i] = a.Unmap()
		}
		next.resolved[h] = unmapped
	}
	next.fill()
	p.table.CompareAndSwap(t, next)
}

// logLimiter lets one line a second through for a cause and counts the
// others, so a flood of refusals does not become a flood of lines.
type logLimiter struct {
	mu     sync.Mutex
	last   time.Time
	missed int
}

// allow reports whether a line may be written now and how many were held
// back since the previous one.
func (l *logLimiter) allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < time.Second {
		l.missed++
		return 0, false
	}
	suppressed, l.missed, l.last = l.missed, 0, now
	return suppressed, true
}

// remoteIP is c's source address, invalid when c is not TCP.
func remoteIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}
