// warm_test.go restarts a NameServer under the official Go client: the
// restarted server, on the same address and snapshot file, answers the
// client's route query and its send reaches the broker before the broker
// registers again. The same restart with route snapshots off shows the
// window warm restart closes: TOPIC_NOT_EXIST.

package interop_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

// startRestartable runs a NameServer on cfg, shut down when the test ends
// unless the test shut it down itself.
func startRestartable(t *testing.T, cfg *config.Config) *server.Server {
	t.Helper()
	s, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx) // an error only says the test shut it down already
	})
	return s
}

// fetchQueues asks nsAddr for topic's publish queues with a fresh admin,
// whose empty route cache makes it query the NameServer.
func fetchQueues(ctx context.Context, t *testing.T, nsAddr, topic string) ([]queue, error) {
	t.Helper()
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{nsAddr})))
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	defer adm.Close()
	mqs, err := adm.FetchPublishMessageQueues(ctx, topic)
	if err != nil {
		return nil, err
	}
	return queuesOf(mqs, topic)
}

// sendOnce sends one message to topic with a fresh producer that does not
// retry: its route comes from nsAddr, the send goes to the broker the
// route names.
func sendOnce(ctx context.Context, t *testing.T, nsAddr, topic, instance string) error {
	t.Helper()
	p, err := producer.NewDefaultProducer(
		producer.WithNameServer(primitive.NamesrvAddr{nsAddr}),
		producer.WithGroupName("interop_warm_pg"),
		producer.WithInstanceName(instance),
		producer.WithRetry(0),
	)
	if err != nil {
		t.Fatalf("NewDefaultProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer Start: %v", err)
	}
	defer p.Shutdown()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("across a restart")))
	if err != nil {
		return err
	}
	if res.Status != primitive.SendOK || res.MessageQueue == nil || res.MessageQueue.BrokerName != "broker-a" {
		return fmt.Errorf("SendSync result %+v", res)
	}
	return nil
}

func sendsTo(b *fakeBroker, topic string) int {
	n := 0
	for _, r := range b.requests() {
		if r.Code == 10 && r.Topic == topic {
			n++
		}
	}
	return n
}

// A broker registers, the official client routes to it, the NameServer is
// shut down and started again on the same port and snapshot file, and
// before any broker registers again the client's first route query and
// send succeed. With routeSnapshotEnable=false the same first query gets
// TOPIC_NOT_EXIST: the test sees the window when it is open.
func TestOfficialGoClientAcrossRestart(t *testing.T) {
	rlog.SetLogLevel("error")
	for _, warm := range []bool{true, false} {
		t.Run("routeSnapshotEnable="+strconv.FormatBool(warm), func(t *testing.T) {
			testClientAcrossRestart(t, warm)
		})
	}
}

func testClientAcrossRestart(t *testing.T, warm bool) {
	const topic = "InteropWarmTopic"
	dir := t.TempDir()
	cfg := config.Default()
	cfg.ListenPort = 0
	cfg.BindAddress = "127.0.0.1"
	cfg.KVConfigPath = filepath.Join(dir, "kv.json")
	cfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	cfg.RouteSnapshotEnable = warm
	cfg.RouteSnapshotPath = filepath.Join(dir, "routes.snapshot")
	first := startRestartable(t, cfg)
	nsAddr := first.Addr()
	broker := startFakeBroker(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The broker's connection stays open until the shutdown closes it: a
	// connection closed earlier unregisters its broker, as in Java.
	reg, err := client.Dial(ctx, nsAddr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer reg.Close()
	topics := &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: 1},
		Topics: []body.TopicConfig{
			{TopicName: topic, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			// A broker's first registration carries more than one topic:
			// a lone one reads as an incremental registration (refused).
			{TopicName: "InteropWarmOther", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		},
	}
	b := client.Broker{Cluster: "InteropCluster", Name: "broker-a", Addr: broker.addr(), HAAddr: "127.0.0.1:1", Version: 409}
	if _, _, err := reg.RegisterBroker(ctx, b, topics); err != nil {
		t.Fatalf("register: %v", err)
	}
	want := brokerQueues("broker-a", 4)
	if got, err := fetchQueues(ctx, t, nsAddr, topic); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("before the restart: queues %v, %v; want %v", got, err, want)
	}
	unique := strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := sendOnce(ctx, t, nsAddr, topic, "interop-warm-before-"+unique); err != nil {
		t.Fatalf("send before the restart: %v", err)
	}

	shutCtx, shutCancel := context.WithTimeout(ctx, 10*time.Second)
	err = first.Shutdown(shutCtx)
	shutCancel()
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	_, port, err := net.SplitHostPort(nsAddr)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ListenPort, err = strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	second := startRestartable(t, cfg)
	if second.Addr() != nsAddr {
		t.Fatalf("restarted on %s, want %s", second.Addr(), nsAddr)
	}
	if ws := second.WarmStart(); ws.Warm != warm {
		t.Fatalf("restart %+v, want warm=%v", ws, warm)
	}

	// Nothing registers from here on: the only broker connection was the
	// first server's, closed by its shutdown.
	got, err := fetchQueues(ctx, t, nsAddr, topic)
	if !warm {
		if !errors.Is(err, rmqerrors.ErrTopicNotExist) {
			t.Fatalf("cold restart: first route query %v, %v; want ErrTopicNotExist", got, err)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("warm restart: first route query %v, %v; want %v", got, err, want)
	}
	before := sendsTo(broker, topic)
	if err := sendOnce(ctx, t, nsAddr, topic, "interop-warm-after-"+unique); err != nil {
		t.Fatalf("send after the restart: %v", err)
	}
	if n := sendsTo(broker, topic); n != before+1 {
		t.Fatalf("the broker got %d sends after the restart, want 1", n-before)
	}
}
