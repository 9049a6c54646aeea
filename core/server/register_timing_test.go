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

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
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
func registerOnce(tb testing.TB, s *Server, c *conn, frame []byte) {
	in := netpoll.NewLinkBuffer()
	if _, err := in.WriteBinary(frame); err != nil {
		tb.Fatal(err)
	}
	in.Flush()
	if err := codec.ReadCommand(in, 1<<30, &c.req); err != nil {
		tb.Fatal(err)
	}
	s.handle(c)
	in.Release()
	c.out.Flush()
	out := c.out.(*netpoll.LinkBuffer)
	p, _ := out.Next(out.Len())
	var resp codec.Command
	if err := codec.Decode(p[4:], &resp); err != nil || resp.Code != codec.Success {
		tb.Fatalf("register: %v code %d %s", err, resp.Code, resp.Remark)
	}
	out.Release()
	c.releaseHeld()
}

func BenchmarkRegisterBigInProcess(b *testing.B) {
	const topics = 100000
	first := bigRegistrationFrame(b, topics, 1)
	second := bigRegistrationFrame(b, topics, 2)
	newConn := func(s *Server) *conn { return &conn{pool: &s.bufPool, out: netpoll.NewLinkBuffer(), peer: "bench"} }
	b.Run("first", func(b *testing.B) {
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s, err := New(testConfig(b), quietLog)
			if err != nil {
				b.Fatal(err)
			}
			c := newConn(s)
			b.StartTimer()
			registerOnce(b, s, c, first)
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		s, _ := New(testConfig(b), quietLog)
		c := newConn(s)
		registerOnce(b, s, c, first)
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			registerOnce(b, s, c, first)
		}
	})
	b.Run("new-version", func(b *testing.B) {
		s, _ := New(testConfig(b), quietLog)
		c := newConn(s)
		b.SetBytes(int64(len(first)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%2 == 0 {
				registerOnce(b, s, c, first)
			} else {
				registerOnce(b, s, c, second)
			}
		}
	})
}

var quietLog = slog.New(slog.DiscardHandler)
