// Test helpers: a fake clock, registration builders and a compact route
// printer, so each scenario reads as a short script.

package route

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// clock is a fake clock. trap, when set, runs at the next reading, inside
// the writer that reads it, and is cleared.
type clock struct {
	ms   int64
	trap func()
}

func (c *clock) now() int64 {
	if f := c.trap; f != nil {
		c.trap = nil
		f()
	}
	return c.ms
}

func newTable(opts Options) (*Table, *clock) {
	c := &clock{ms: 1_000_000}
	return New(opts, c.now), c
}

func boolp(b bool) *bool { return &b }

func tc(name string, queues int32, perm int32) body.TopicConfig {
	return body.TopicConfig{TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm}
}

// reg builds a 4.x registration (no enableActingMaster) in cluster "c".
func reg(name, addr string, id, counter int64, topics ...body.TopicConfig) *Registration {
	return &Registration{
		Cluster:      "c",
		BrokerAddr:   addr,
		BrokerName:   name,
		HAServerAddr: "ha-" + addr,
		BrokerID:     id,
		Body: &body.RegisterBroker{
			FilterServerList: []string{},
			DataVersion:      body.DataVersion{Timestamp: 1, Counter: counter},
			Topics:           topics,
		},
	}
}

// reg5 is reg for a 5.x broker.
func reg5(name, addr string, id, counter int64, acting bool, topics ...body.TopicConfig) *Registration {
	r := reg(name, addr, id, counter, topics...)
	r.EnableActingMaster = boolp(acting)
	return r
}

func mustRegister(t *testing.T, tb *Table, r *Registration) RegisterResult {
	t.Helper()
	res, err := tb.Register(r)
	if err != nil {
		t.Fatalf("register %s/%d: %v", r.BrokerName, r.BrokerID, err)
	}
	return res
}

// routeString prints a route as
// "a{0:x,1:y}* b{0:z} | a:4/4/6 b:8/8/6 | fs{x:[f]}", * marking acting master.
func routeString(r *body.TopicRoute, ok bool) string {
	if !ok {
		return "none"
	}
	var sb strings.Builder
	for i, bd := range r.BrokerDatas {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(bd.BrokerName + "{")
		for j, a := range bd.Addrs {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%d:%s", a.ID, a.Addr)
		}
		sb.WriteByte('}')
		if bd.EnableActingMaster {
			sb.WriteByte('*')
		}
		if bd.ZoneName != "" {
			sb.WriteString("@" + bd.ZoneName)
		}
	}
	sb.WriteString(" |")
	for _, q := range r.QueueDatas {
		fmt.Fprintf(&sb, " %s:%d/%d/%d", q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm)
		if q.TopicSysFlag != 0 {
			fmt.Fprintf(&sb, "/f%d", q.TopicSysFlag)
		}
	}
	if len(r.FilterServerTable) > 0 {
		keys := make([]string, 0, len(r.FilterServerTable))
		for k := range r.FilterServerTable {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteString(" | fs{")
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%s:%v", k, r.FilterServerTable[k])
		}
		sb.WriteByte('}')
	}
	return sb.String()
}

func checkRoute(t *testing.T, tb *Table, topic, want string) {
	t.Helper()
	if got := routeString(tb.Route(topic)); got != want {
		t.Fatalf("route %s:\n got %s\nwant %s", topic, got, want)
	}
}

// bodyPtr identifies a cached route body, to tell re-encodes apart.
func bodyPtr(t *testing.T, tb *Table, topic string) *byte {
	t.Helper()
	b, ok := tb.RouteBody(topic, body.Standard)
	if !ok || len(b) == 0 {
		t.Fatalf("no route body for %s", topic)
	}
	return &b[0]
}

func entryOf(tb *Table, topic string) *topicEntry {
	e, _ := tb.topics.Load(topic)
	return e
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

// checkBodies fails unless every cached body of the topics (both dialects,
// both acting-master slots, and the ordered slot) is what a fresh assembly
// encodes now. It fills the caches it reads, so a call before a change arms
// the call after it: a writer that changed a route without dropping its
// cached bodies is caught.
func checkBodies(t *testing.T, tb *Table, topics ...string) {
	t.Helper()
	defer tb.SetSupportActingMaster(tb.actingMaster.Load())
	const conf = "a:4"
	for _, acting := range []bool{false, true} {
		tb.SetSupportActingMaster(acting)
		for _, topic := range topics {
			r, ok := tb.Route(topic)
			for _, d := range []body.Dialect{body.Standard, body.Legacy} {
				want, wantOrdered := "none", "none"
				if ok {
					want = string(body.AppendTopicRoute(nil, r, d))
					o := *r
					o.OrderTopicConf = conf
					wantOrdered = string(body.AppendTopicRoute(nil, &o, d))
				}
				got, gotOrdered := "none", "none"
				if b, ok := tb.RouteBody(topic, d); ok {
					got = string(b)
				}
				if b, ok := tb.RouteBodyOrdered(topic, d, conf); ok {
					gotOrdered = string(b)
				}
				if got != want {
					t.Fatalf("%s (acting %v, dialect %d): cached body\n%s\nfresh\n%s", topic, acting, d, got, want)
				}
				if gotOrdered != wantOrdered {
					t.Fatalf("%s (acting %v, dialect %d): cached ordered body\n%s\nfresh\n%s", topic, acting, d, gotOrdered, wantOrdered)
				}
			}
		}
	}
}
