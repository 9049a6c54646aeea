// notify.go sends NOTIFY_MIN_BROKER_ID_CHANGE (905) to a broker group's
// members, the one request the NameServer originates.

package server

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/route"
)

// notifyTimeout bounds the dial and the write of one notification, Java's
// 300 ms oneway timeout.
const notifyTimeout = 300 * time.Millisecond

// maxNotifySenders bounds the goroutines sending notifications at once. A
// notification beyond it is dropped with a log line: it is advisory (brokers
// also learn the group from their periodic member-group queries) and the
// request path must never wait for it.
const maxNotifySenders = 16

// notifier sends notifications off the request path. Its zero value is
// ready.
type notifier struct {
	once   sync.Once
	slots  chan struct{}
	opaque atomic.Int32
	// inflight counts the senders running, under mu; idle is signalled when
	// it drops to zero. Not a WaitGroup: a request may start a sender while
	// wait runs, which a WaitGroup forbids (Add at zero concurrent with Wait).
	mu       sync.Mutex
	inflight int
	idle     sync.Cond
	// dial is net.DialTimeout unless a test replaces it.
	dial func(network, addr string, timeout time.Duration) (net.Conn, error)
}

func (n *notifier) init() {
	n.once.Do(func() {
		n.slots = make(chan struct{}, maxNotifySenders)
		n.idle.L = &n.mu
		if n.dial == nil {
			n.dial = net.DialTimeout
		}
	})
}

// wait blocks until no notification is being sent.
func (n *notifier) wait() {
	n.init()
	n.mu.Lock()
	for n.inflight > 0 {
		n.idle.Wait()
	}
	n.mu.Unlock()
}

func (n *notifier) started() {
	n.mu.Lock()
	n.inflight++
	n.mu.Unlock()
}

func (n *notifier) done() {
	n.mu.Lock()
	n.inflight--
	if n.inflight == 0 {
		n.idle.Broadcast()
	}
	n.mu.Unlock()
}

// minIDChangeCommand is the oneway 905 request; brokerName is never set,
// like Java's.
func minIDChangeCommand(ch *route.MinBrokerIDChange, opaque int32) *codec.Command {
	cmd := &codec.Command{
		Code:     codec.NotifyMinBrokerIDChange,
		Flag:     codec.FlagOneway,
		Opaque:   opaque,
		Version:  codec.ServerVersion,
		Language: codec.LanguageJava,
	}
	cmd.HasExt = true
	cmd.SetExt("minBrokerId", strconv.FormatInt(ch.MinBrokerID, 10))
	cmd.SetExt("minBrokerAddr", ch.MinBrokerAddr)
	if ch.OfflineBrokerAddr != "" {
		cmd.SetExt("offlineBrokerAddr", ch.OfflineBrokerAddr)
	}
	if ch.HABrokerAddr != "" {
		cmd.SetExt("haBrokerAddr", ch.HABrokerAddr)
	}
	return cmd
}

// notifyMinBrokerID sends ch to its targets in the background when
// notifyMinBrokerIdChanged is on. It never blocks.
func (s *Server) notifyMinBrokerID(ch *route.MinBrokerIDChange) {
	if ch == nil || len(ch.Targets) == 0 || !s.conf().NotifyMinBrokerIdChanged {
		return
	}
	n := &s.admin.notify
	n.init()
	select {
	case n.slots <- struct{}{}:
	default:
		s.log.Warn("min broker id change not sent: too many notifications in flight", "broker", ch.BrokerName)
		return
	}
	// The header carries addresses brokers sent: EncodeFrame refuses one
	// too long to frame rather than send brokers a corrupt frame.
	frame, err := codec.EncodeFrame(nil, minIDChangeCommand(ch, n.opaque.Add(1)))
	if err != nil {
		<-n.slots
		s.log.Warn("min broker id change not sent", "broker", echoed(ch.BrokerName), "err", err)
		return
	}
	n.started()
	go func() {
		defer n.done()
		defer func() { <-n.slots }()
		for _, addr := range ch.Targets {
			if err := sendOneway(n.dial, addr, frame); err != nil {
				s.log.Warn("min broker id change not sent", "broker", ch.BrokerName, "addr", addr, "err", err)
				continue
			}
			s.log.Info("min broker id change sent", "broker", ch.BrokerName, "addr", addr,
				"min_id", ch.MinBrokerID, "min_addr", ch.MinBrokerAddr, "offline", ch.OfflineBrokerAddr)
		}
	}()
}

// sendOneway writes frame to addr over a short-lived connection.
func sendOneway(dial func(string, string, time.Duration) (net.Conn, error), addr string, frame []byte) error {
	nc, err := dial("tcp", addr, notifyTimeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := nc.SetWriteDeadline(time.Now().Add(notifyTimeout)); err != nil {
		return err
	}
	_, err = nc.Write(frame)
	return err
}
