// A 905 notification sent after its UNREGISTER_BROKER frame was released
// and the buffer reused must still name the broker that went offline.
package server

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

// The 905 sender logs the offline address from its own goroutine, after the
// UNREGISTER_BROKER frame it came from was released; that string aliases
// the request buffer unless the eviction owns a copy.
func TestNotifyOutlivesItsRequestBuffer(t *testing.T) {
	cfg := adminConfig(t)
	cfg.NotifyMinBrokerIdChanged = true
	gates := make(chan chan struct{}, 2)
	first, second := make(chan struct{}), make(chan struct{})
	gates <- first
	gates <- second
	s, logs := startHooked(t, cfg, func(s *Server) {
		s.admin.notify.dial = func(network, addr string, to time.Duration) (net.Conn, error) {
			<-<-gates // send only after the request buffer was released and reused
			return net.DialTimeout(network, addr, to)
		}
	})
	w := dialWire(t, s.Addr())
	addr2, got2 := fakeBrokerPort(t)
	addr1 := "127.0.0.1:1" // the address that goes offline
	topics := []body.TopicConfig{topicCfg("T", 4, 6, 0), topicCfg("U", 4, 6, 0)}
	mustOK(t, w.Call(brokerReg{cluster: "c", name: "a", addr: addr2, id: 2, acting: true, counter: 1, topics: topics}.frame(t, 1)), "id 2")
	mustOK(t, w.Call(brokerReg{cluster: "c", name: "a", addr: addr1, id: 1, acting: true, counter: 1, topics: topics}.frame(t, 2)), "id 1")
	close(first) // let the registration's notification go
	<-got2
	s.admin.notify.wait()

	// A frame > 8 KiB spans netpoll nodes, so Next copies it into an mcache
	// buffer that Release gives back to the pool.
	pad := strings.Repeat("p", 12000)
	unreg := request(codec.UnregisterBroker, 3, "brokerName", "a", "brokerAddr", addr1, "clusterName", "c", "brokerId", "1", "pad", pad)
	mustOK(t, w.Call(unreg), "unregister")
	// Same-sized frames with other bytes reuse that buffer.
	for i := 0; i < 20; i++ {
		other := request(codec.GetKVConfig, int32(10+i), "namespace", "n", "key", "kkkkkkkkkkkk", "pad", strings.Repeat("Z", 12000+len(addr1)+len("brokerAddr")+len("brokerName")+len("clusterName")+len("brokerId")+3-len("namespace")-len("key")-13))
		w.Call(other)
	}
	close(second)
	<-got2
	s.admin.notify.wait()
	all := regexp.MustCompile(`min broker id change sent.*offline=(\S+)`).FindAllStringSubmatch(logs.String(), -1)
	if len(all) < 2 {
		t.Fatalf("no sent line in logs:\n%s", logs.String())
	}
	m := all[len(all)-1]
	if m[1] != addr1 {
		t.Fatalf("logged offline address %q, want %q: the string points into a released request buffer", m[1], addr1)
	}
}
