// listener.go holds the counters of a listener's own events.

package metrics

import (
	"io"

	vm "github.com/VictoriaMetrics/metrics"

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

// Listener counts a remoting listener's own events.
type Listener struct {
	set              *vm.Set
	badFrames        [len(frameReasons)]*vm.Counter
	connRefused      *vm.Counter
	tlsOK, tlsFailed *vm.Counter
}

// NewListener makes the counters, their series named from prefix.
func NewListener(prefix string) *Listener {
	l := &Listener{set: vm.NewSet()}
	for i, r := range frameReasons {
		l.badFrames[i] = l.set.NewCounter(prefix + `frames_rejected_total{reason="` + r + `"}`)
	}
	l.connRefused = l.set.NewCounter(prefix + `connections_refused_total{reason="max_connections"}`)
	l.tlsOK = l.set.NewCounter(prefix + `tls_handshakes_total{result="ok"}`)
	l.tlsFailed = l.set.NewCounter(prefix + `tls_handshakes_total{result="failed"}`)
	return l
}

// Events are the listener's hooks into these counters.
func (l *Listener) Events() remoting.Events {
	return remoting.Events{FrameRejected: l.badFrame, ConnRefused: l.connRefused.Inc, TLSHandshake: l.tlsHandshake}
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
		l.tlsOK.Inc()
	} else {
		l.tlsFailed.Inc()
	}
}

// Write writes every series in Prometheus text format.
func (l *Listener) Write(w io.Writer) { l.set.WritePrometheus(w) }
