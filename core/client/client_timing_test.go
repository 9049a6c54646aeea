// Benchmarks of the client's request path against the loopback fake server.

package client

import (
	"context"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

func BenchmarkInvokeRouteQuery(b *testing.B) {
	s := startFake(b)
	serve(b, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(b, s.addr())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &codec.Command{Code: codec.GetRouteInfoByTopic, Version: codec.ServerVersion}
		req.SetExt("topic", "TopicTest")
		for pb.Next() {
			if _, err := c.Invoke(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
