// register_timing_test.go measures a big broker's registration in process:
// the frame read from a netpoll buffer, CRC-checked, decoded and applied,
// with the reply encoded; no sockets, so the figure is the server's own cost.

package server

import (
	"fmt"
	"hash/crc32"
	"log/slog"
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/remoting"
)

func bigRegistrationFrame(tb testing.TB, topics int, counter int64) []byte {
	tb.Helper()
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: counter, Timestamp: 1700000000000}}
	rb.Topics = make([]body.TopicConfig, topics)
	for i := range rb.Topics {
		rb.Topics[i] = body.TopicConfig{TopicName: fmt.Sprintf("BigTopic-%d", i), ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	}
	b, err := body.EncodeRegisterBroker(rb, false, 479)
	if err != nil {
		tb.Fatal(err)
	}
	req := request(codec.RegisterBroker, 1, "brokerName", "broker-big", "brokerAddr", "10.0.0.9:10911", "clusterName", "DefaultCluster",
		"haServerAddr", "10.0.0.9:10912", "brokerId", "0", "enableActingMaster", "false", "compressed", "false",
		"bodyCrc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)&0x7FFFFFFF), 10))
	req.Body = b
	return codec.AppendFrame(nil, req)
}

// registerOnce feeds one frame through the connection path and checks the
// reply is SUCCESS.
func registerOnce(tb testing.TB, p *remoting.Pipe, frame []byte) {
	if err := p.Send(frame); err != nil {
		tb.Fatal(err)
	}
	if !p.Serve() {
		tb.Fatal("connection closed")
	}
	out := p.Replies()
	var resp codec.Command
	if err := codec.Decode(out[4:], &resp); err != nil || resp.Code != codec.Success {
		tb.Fatalf("register: %v code %d %s", err, resp.Code, resp.Remark)
	}
}

// bigFrameServer accepts frames as large as a 100k-topic registration.
func bigFrameServer(b *testing.B) (*Server, *remoting.Pipe) {
	cfg := testConfig(b)
	cfg.FrameMaxLength = 1 << 30
	s, err := New(cfg, quietLog)
	if err != nil {
		b.Fatal(err)
	}
	return s, pipe(b, s)
}

func BenchmarkRegisterBigInProcess(b *testing.B) {
	const topics = 100000
	first := bigRegistrationFrame(b, topics, 1)
	second := bigRegistrationFrame(b, topics, 2)
	b.Run("first", func(b *testing.B) {
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			_, p := bigFrameServer(b)
			b.StartTimer()
			registerOnce(b, p, first)
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		_, p := bigFrameServer(b)
		registerOnce(b, p, first)
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			registerOnce(b, p, first)
		}
	})
	b.Run("new-version", func(b *testing.B) {
		_, p := bigFrameServer(b)
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%2 == 0 {
				registerOnce(b, p, first)
			} else {
				registerOnce(b, p, second)
			}
		}
	})
}

// pipe is an in-process connection to s's listener, which it builds
// without starting it.
func pipe(tb testing.TB, s *Server) *remoting.Pipe {
	tb.Helper()
	r, err := s.listener()
	if err != nil {
		tb.Fatal(err)
	}
	return r.Pipe("bench")
}

var quietLog = slog.New(slog.DiscardHandler)
