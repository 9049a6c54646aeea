// Benchmarks of the handlers: a written line, and a debug line below the
// level, which Counting has to see.

package logcap

import (
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

func BenchmarkDebugBelowLevel(b *testing.B) {
	var n atomic.Uint64
	match := func(r slog.Record) bool { return strings.HasPrefix(r.Message, "closing connection") }
	for _, tc := range []struct {
		name string
		h    slog.Handler
	}{
		{"capped", New(slog.NewTextHandler(io.Discard, nil), Options{})},
		{"counting", Counting(New(slog.NewTextHandler(io.Discard, nil), Options{}), match, &n)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			log := slog.New(tc.h)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				log.Debug("request refused", "code", 105, "request", "GET_ROUTEINFO_BY_TOPIC", "peer", "127.0.0.1:1", "response", 17, "remark", "No topic route info")
			}
		})
	}
}

func BenchmarkWrittenLine(b *testing.B) {
	log := slog.New(New(slog.NewTextHandler(io.Discard, nil), Options{Burst: -1}))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		log.Info("broker registered", "cluster", "c1", "broker", "broker-a", "id", 0, "addr", "10.0.0.1:10911", "topics", 12)
	}
}
