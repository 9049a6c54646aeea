// listener.go holds the counters of a listener's own events.

package metrics

import (
	"io"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
)

// frameReasons are the label values of the rejected-frame counter, a fixed
// set; the last stands for any other.
var frameReasons = [...]string{
	codec.ReasonFrameTooLarge, codec.ReasonFrameTooShort, codec.ReasonBadHeaderLength,
	codec.ReasonUnknownSerializeType, codec.ReasonBadJSONHeader, codec.ReasonBadBinaryHeader,
	"other",
}

// Listener counts a remoting listener's own events; it is a
// prometheus.Collector.
type Listener struct {
	Counters
	badFrames   []Counter
	connRefused []Counter
	tls         []Counter // ok, failed
}

// NewListener makes the counters, their series named from prefix.
func NewListener(prefix string) *Listener {
	l := &Listener{}
	l.badFrames = l.Family(prefix+"frames_rejected_total",
		"Connections closed for a frame that does not decode, by reason.", "reason", frameReasons[:]...)
	l.connRefused = l.Family(prefix+"connections_refused_total",
		"Connections closed at accept, by reason.", "reason", "max_connections")
	l.tls = l.Family(prefix+"tls_handshakes_total", "TLS handshakes, by result.", "result", "ok", "failed")
	return l
}

// Events are the listener's hooks into these counters.
func (l *Listener) Events() remoting.Events {
	return remoting.Events{FrameRejected: l.badFrame, ConnRefused: l.connRefused[0].Inc, TLSHandshake: l.tlsHandshake}
}

func (l *Listener) badFrame(reason string) {
	i := 0
	for i < len(frameReasons)-1 && frameReasons[i] != reason {
		i++
	}
	l.badFrames[i].Inc()
}

func (l *Listener) tlsHandshake(ok bool) {
	if ok {
		l.tls[0].Inc()
	} else {
		l.tls[1].Inc()
	}
}

// Write writes every series in Prometheus text format.
func (l *Listener) Write(w io.Writer) { _ = WriteText(w, l) }

var _ prometheus.Collector = (*Listener)(nil)
