// Drives the server with the official Go client (rocketmq-client-go): what
// it parses from our routes, and an end-to-end send to a fake broker whose
// address only the route carried.
package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/remoting"
)

// fakeBroker answers every request with SUCCESS, echoing the opaque and,
// for SEND_MESSAGE, the queueId, which is all SendSync needs. It records
// the code and topic of each request.
type fakeBroker struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	got  []brokerRequest // guarded by mu
	conn map[net.Conn]bool
}

type brokerRequest struct {
	Code  int32
	Topic string
	Group string // consumerGroup, for GET_CONSUMER_LIST_BY_GROUP
}

func startFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake broker listen: %v", err)
	}
	b := &fakeBroker{ln: ln, conn: map[net.Conn]bool{}}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.stop)
	return b
}

func (b *fakeBroker) addr() string { return b.ln.Addr().String() }

func (b *fakeBroker) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conn[c] = true
		b.mu.Unlock()
		b.wg.Add(1)
		go b.serve(c)
	}
}

func (b *fakeBroker) stop() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conn {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *fakeBroker) serve(c net.Conn) {
	defer b.wg.Done()
	defer c.Close()
	var prefix [4]byte
	for {
		if _, err := io.ReadFull(c, prefix[:]); err != nil {
			return
		}
		n, err := codec.FrameLength(prefix[:], codec.DefaultMaxFrame)
		if err != nil {
			return
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(c, frame); err != nil {
			return
		}
		var req codec.Command
		if err := codec.Decode(frame, &req); err != nil {
			return
		}
		if req.Flag&codec.FlagResponse != 0 {
			continue
		}
		topic, _ := req.ExtValue("topic")
		group, _ := req.ExtValue("consumerGroup")
		b.mu.Lock()
		b.got = append(b.got, brokerRequest{Code: req.Code, Topic: topic, Group: group})
		b.mu.Unlock()
		if req.Flag&codec.FlagOneway != 0 {
			continue
		}
		resp := &codec.Command{Code: 0, Opaque: req.Opaque, Flag: req.Flag | codec.FlagResponse, Version: codec.ServerVersion}
		if req.Code == 10 {
			q, _ := req.ExtValue("queueId")
			resp.SetExt("queueId", q)
			resp.SetExt("queueOffset", "0")
			resp.SetExt("msgId", "7F00000100002A9F0000000000000000")
		}
		if _, err := c.Write(codec.AppendFrame(nil, resp)); err != nil {
			return
		}
	}
}

func (b *fakeBroker) requests() []brokerRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]brokerRequest(nil), b.got...)
}

type queue struct {
	Broker string
	ID     int
}

func queuesOf(mqs []*primitive.MessageQueue, topic string) ([]queue, error) {
	var out []queue
	for _, mq := range mqs {
		if mq.Topic != topic {
			return nil, fmt.Errorf("queue of topic %q in the answer for %q", mq.Topic, topic)
		}
		out = append(out, queue{mq.BrokerName, mq.QueueId})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Broker != out[j].Broker {
			return out[i].Broker < out[j].Broker
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func brokerQueues(broker string, n int) []queue {
	out := make([]queue, n)
	for i := range out {
		out[i] = queue{broker, i}
	}
	return out
}

func TestInteropOfficialGoClient(t *testing.T) {
	rlog.SetLogLevel("error")
	srv := startServer(t)
	nsAddr := srv.Addr()
	master := startFakeBroker(t)
	slave := startFakeBroker(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg, err := client.Dial(ctx, nsAddr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer reg.Close()

	topics := &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: 1},
		Topics: []body.TopicConfig{
			{TopicName: "InteropTopic4", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "InteropTopic8", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "InteropReadOnly", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 4, TopicFilterType: "SINGLE_TAG"},
		},
	}
	mb := client.Broker{Cluster: "InteropCluster", Name: "broker-a", Addr: master.addr(), HAAddr: "127.0.0.1:1", Version: 409}
	if _, _, err := reg.RegisterBroker(ctx, mb, topics); err != nil {
		t.Fatalf("register master: %v", err)
	}
	sb := client.Broker{Cluster: "InteropCluster", Name: "broker-a", Addr: slave.addr(), HAAddr: "127.0.0.1:2", ID: 1, Version: 409}
	gotMaster, gotHA, err := reg.RegisterBroker(ctx, sb, topics)
	if err != nil {
		t.Fatalf("register slave: %v", err)
	}
	if gotMaster != mb.Addr || gotHA != mb.HAAddr {
		t.Errorf("slave registration answered master %q ha %q, want %q %q", gotMaster, gotHA, mb.Addr, mb.HAAddr)
	}

	unique := fmt.Sprintf("%d", time.Now().UnixNano())
	resolver := primitive.NewPassthroughResolver([]string{nsAddr})

	t.Run("FetchPublishMessageQueues", func(t *testing.T) {
		f := func(topic string, want []queue) {
			t.Helper()
			// A fresh admin per topic: its route cache never refreshes.
			adm, err := admin.NewAdmin(admin.WithResolver(resolver))
			if err != nil {
				t.Fatalf("NewAdmin: %v", err)
			}
			defer adm.Close()
			mqs, err := adm.FetchPublishMessageQueues(ctx, topic)
			if err != nil {
				t.Fatalf("FetchPublishMessageQueues(%s): %v", topic, err)
			}
			got, err := queuesOf(mqs, topic)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("%s publish queues %v, want %v", topic, got, want)
			}
		}
		f("InteropTopic4", brokerQueues("broker-a", 4))
		f("InteropTopic8", brokerQueues("broker-a", 8))
		f("InteropReadOnly", nil)
	})

	t.Run("MissingTopic", func(t *testing.T) {
		adm, err := admin.NewAdmin(admin.WithResolver(resolver))
		if err != nil {
			t.Fatalf("NewAdmin: %v", err)
		}
		defer adm.Close()
		_, err = adm.FetchPublishMessageQueues(ctx, "InteropNoSuchTopic")
		if !errors.Is(err, rmqerrors.ErrTopicNotExist) {
			t.Errorf("FetchPublishMessageQueues of a missing topic = %v, want ErrTopicNotExist", err)
		}
	})

	t.Run("PullConsumerReadQueues", func(t *testing.T) {
		f := func(topic string, want []queue) {
			t.Helper()
			pc, err := consumer.NewPullConsumer(
				consumer.WithGroupName("interop_cg_"+topic),
				consumer.WithNameServer(primitive.NamesrvAddr{nsAddr}),
				consumer.WithInstance("interop-pull-"+topic+"-"+unique),
			)
			if err != nil {
				t.Fatalf("NewPullConsumer: %v", err)
			}
			if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
				t.Fatalf("Subscribe: %v", err)
			}
			if err := pc.Start(); err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer func() {
				// The client's Start launches a rebalance that reads a
				// field its Shutdown writes without synchronisation (a
				// race inside rocketmq-client-go). The rebalance asks the
				// broker for the group's consumers (code 38): once the
				// fake broker has seen that, the read is over.
				group := "interop_cg_" + topic
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if slices.ContainsFunc(master.requests(), func(r brokerRequest) bool { return r.Code == 38 && r.Group == group }) {
						break
					}
				}
				pc.Shutdown()
			}()
			mqs, err := pc.GetTopicRouteInfo(topic)
			if err != nil {
				t.Fatalf("GetTopicRouteInfo(%s): %v", topic, err)
			}
			got, err := queuesOf(mqs, topic)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s read queues %v, want %v", topic, got, want)
			}
		}
		f("InteropTopic8", brokerQueues("broker-a", 8))
		f("InteropReadOnly", brokerQueues("broker-a", 4))
	})

	t.Run("ProducerSendSync", func(t *testing.T) {
		p, err := producer.NewDefaultProducer(
			producer.WithNameServer(primitive.NamesrvAddr{nsAddr}),
			producer.WithGroupName("interop_pg"),
			producer.WithInstanceName("interop-producer-"+unique),
			producer.WithRetry(0),
		)
		if err != nil {
			t.Fatalf("NewDefaultProducer: %v", err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("producer Start: %v", err)
		}
		defer p.Shutdown()
		res, err := p.SendSync(ctx, primitive.NewMessage("InteropTopic4", []byte("hello")))
		if err != nil {
			t.Fatalf("SendSync: %v", err)
		}
		if res.Status != primitive.SendOK || res.MessageQueue == nil || res.MessageQueue.BrokerName != "broker-a" {
			t.Errorf("SendSync result %+v", res)
		}
		sent := false
		for _, r := range master.requests() {
			if r.Code == 10 && r.Topic == "InteropTopic4" {
				sent = true
			}
		}
		if !sent {
			t.Errorf("the master (the route's id-0 address) got no SEND_MESSAGE for InteropTopic4; it got %v", master.requests())
		}
		for _, r := range slave.requests() {
			if r.Code == 10 {
				t.Errorf("the slave got a SEND_MESSAGE: %+v", r)
			}
		}
	})
}

// The official Go client signs its route queries when given credentials.
// 105 is open on a NameServer, so this serves it on a listener of its own
// whose only route checks the signature as a protected code (readonly may
// send it) before answering a fixed route: signatures the real client
// computed verify here, a wrong secret and none are refused.
func TestOfficialGoClientSignaturesVerify(t *testing.T) {
	rlog.SetLogLevel("error")
	policy, err := auth.New(auth.Options{Signatures: true, Accounts: []auth.Account{
		{AccessKey: "admin-key", SecretKey: "admin-secret", Role: auth.RoleAdmin},
		{AccessKey: "reader-key", SecretKey: "reader-secret", Role: auth.RoleReadOnly},
	}})
	if err != nil {
		t.Fatal(err)
	}
	route := body.AppendTopicRoute(nil, &body.TopicRoute{
		BrokerDatas: []body.BrokerData{{Cluster: "c1", BrokerName: "broker-a", Addrs: []body.BrokerAddr{{ID: 0, Addr: "127.0.0.1:10911"}}}},
		QueueDatas:  []body.QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
	}, body.Standard)
	refused := make(chan string, 8)
	l, err := remoting.New(remoting.Options{
		Addr:    "127.0.0.1:0",
		Log:     slog.New(slog.DiscardHandler),
		Version: codec.ServerVersion,
		Routes: []remoting.Route{{Code: codec.GetRouteInfoByTopic, Handler: func(c *remoting.Conn, req, resp *codec.Command) error {
			if err := policy.Check(auth.ClassConfigRead, req, c.Peer()); err != nil {
				var d *auth.Denial
				errors.As(err, &d)
				refused <- d.Reason.String()
				return remoting.Refuse(codec.NoPermission, err.Error())
			}
			resp.Body = route
			return nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resolver := primitive.NewPassthroughResolver([]string{l.Addr().String()})
	fetch := func(cr *primitive.Credentials) error {
		opts := []admin.AdminOption{admin.WithResolver(resolver)}
		if cr != nil {
			opts = append(opts, admin.WithCredentials(*cr))
		}
		adm, err := admin.NewAdmin(opts...)
		if err != nil {
			t.Fatalf("NewAdmin: %v", err)
		}
		defer adm.Close()
		mqs, err := adm.FetchPublishMessageQueues(ctx, "SignedTopic")
		if err == nil && len(mqs) != 4 {
			t.Fatalf("%d queues, want 4", len(mqs))
		}
		return err
	}
	for _, cr := range []primitive.Credentials{
		{AccessKey: "reader-key", SecretKey: "reader-secret"},
		{AccessKey: "admin-key", SecretKey: "admin-secret"},
	} {
		if err := fetch(&cr); err != nil {
			t.Fatalf("%s: signed route query refused: %v", cr.AccessKey, err)
		}
	}
	if err := fetch(&primitive.Credentials{AccessKey: "reader-key", SecretKey: "wrong-secret"}); err == nil {
		t.Fatal("route query signed with a wrong secret was served")
	}
	if r := <-refused; r != "bad signature" {
		t.Fatalf("wrong secret refused as %q", r)
	}
	if err := fetch(nil); err == nil {
		t.Fatal("unsigned route query was served")
	}
	if r := <-refused; r != "not signed" {
		t.Fatalf("unsigned query refused as %q", r)
	}
}
