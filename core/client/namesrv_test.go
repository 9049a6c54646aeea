// Tests of the NameServer request helpers: the headers they send and how
// they read the answers, against a fake server.

package client

import (
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/codectest"
)

func extKeys(c *codec.Command) []string {
	var keys []string
	for _, f := range c.Ext {
		keys = append(keys, f.Key)
	}
	return keys
}

func sampleRegisterBody() *body.RegisterBroker {
	return &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: 1700000000123, Counter: 42},
		Topics: []body.TopicConfig{{
			TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG",
		}},
	}
}

func TestRegisterBrokerHeader(t *testing.T) {
	yes := true
	f := func(b Broker, wantKeys []string, wantVersion int32) {
		t.Helper()
		s := startFake(t)
		got := serve(t, s, func(req *codec.Command) *codec.Command {
			resp := reply(req, 0, "")
			resp.HasExt = true
			if id, _ := req.ExtValue("brokerId"); id != "0" {
				resp.SetExt("haServerAddr", "10.0.0.1:10912")
				resp.SetExt("masterAddr", "10.0.0.1:10911")
			}
			return resp
		})
		c := dial(t, s.addr())
		master, ha, err := c.RegisterBroker(context.Background(), b, sampleRegisterBody())
		if err != nil {
			t.Fatalf("RegisterBroker: %v", err)
		}
		req := <-got
		if req.Code != 103 || req.Version != wantVersion || req.Flag != 0 {
			t.Errorf("code %d version %d flag %d, want 103 %d 0", req.Code, req.Version, req.Flag, wantVersion)
		}
		if keys := extKeys(req); !reflect.DeepEqual(keys, wantKeys) {
			t.Errorf("ext keys %v, want %v", keys, wantKeys)
		}
		crc, _ := req.ExtValue("bodyCrc32")
		if want := strconv.FormatUint(uint64(crc32.ChecksumIEEE(req.Body)&0x7FFFFFFF), 10); crc != want {
			t.Errorf("bodyCrc32 %s, want %s", crc, want)
		}
		for k, want := range map[string]string{
			"brokerId": strconv.FormatInt(b.ID, 10), "clusterName": b.Cluster, "brokerAddr": b.Addr,
			"haServerAddr": b.HAAddr, "brokerName": b.Name, "compressed": strconv.FormatBool(b.Compressed),
		} {
			if v, _ := req.ExtValue(k); v != want {
				t.Errorf("ext %s = %q, want %q", k, v, want)
			}
		}
		if b.ID == 0 && (master != "" || ha != "") {
			t.Errorf("master got master %q ha %q, want none", master, ha)
		}
		if b.ID != 0 && (master != "10.0.0.1:10911" || ha != "10.0.0.1:10912") {
			t.Errorf("slave got master %q ha %q", master, ha)
		}
	}
	// A 4.x broker: no enableActingMaster, no heartbeatTimeoutMillis.
	f(Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.1:10911", HAAddr: "10.0.0.1:10912", Version: 409},
		[]string{"brokerId", "bodyCrc32", "clusterName", "brokerAddr", "haServerAddr", "compressed", "brokerName"}, 409)
	// A 5.x acting-master slave, default version.
	f(Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.2:10911", HAAddr: "10.0.0.2:10912", ID: 1,
		EnableActingMaster: &yes, HeartbeatTimeoutMillis: 10000},
		[]string{"heartbeatTimeoutMillis", "brokerId", "bodyCrc32", "clusterName", "brokerAddr", "enableActingMaster", "haServerAddr", "compressed", "brokerName"}, 479)
	// Zone mode adds the zone key.
	f(Broker{Cluster: "c", Name: "b", Addr: "10.0.0.3:10911", HAAddr: "10.0.0.3:10912", Zone: "z1"},
		[]string{"brokerId", "bodyCrc32", "clusterName", "brokerAddr", "haServerAddr", "compressed", "brokerName", "__ZONE_NAME"}, 479)
}

// The header of a recorded 5.x broker registration has the same keys in
// the same order as ours.
func TestRegisterBrokerHeaderMatchesRecording(t *testing.T) {
	frames, err := codectest.Load(filepath.Join(codectest.Dir(), "broker5-master-slave-to-4.9.8-ns-oneway-322-heartbeats.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec codec.Command
	for _, fr := range frames {
		if fr.Dir == "req" {
			if err := codec.Decode(fr.Raw()[4:], &rec); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if rec.Code != 103 {
		t.Fatalf("first recorded request has code %d, want 103", rec.Code)
	}
	yes := true
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	b := Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "127.0.0.1:10911", HAAddr: "127.0.0.1:10912",
		EnableActingMaster: &yes, HeartbeatTimeoutMillis: 10000, Version: 413}
	if _, _, err := c.RegisterBroker(context.Background(), b, sampleRegisterBody()); err != nil {
		t.Fatalf("RegisterBroker: %v", err)
	}
	req := <-got
	if !reflect.DeepEqual(extKeys(req), extKeys(&rec)) {
		t.Errorf("ext keys %v, recorded %v", extKeys(req), extKeys(&rec))
	}
	for _, f := range rec.Ext {
		if f.Key == "bodyCrc32" {
			continue
		}
		if v, _ := req.ExtValue(f.Key); v != f.Value {
			t.Errorf("ext %s = %q, recorded %q", f.Key, v, f.Value)
		}
	}
}

func TestUnregisterAndHeartbeat(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	b := Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.1:10911", ID: 2}

	if err := c.Heartbeat(b); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	hb := <-got
	if hb.Code != 904 || hb.Flag != codec.FlagOneway {
		t.Errorf("heartbeat code %d flag %d, want 904 oneway", hb.Code, hb.Flag)
	}
	if keys := extKeys(hb); !reflect.DeepEqual(keys, []string{"clusterName", "brokerAddr", "brokerName"}) {
		t.Errorf("heartbeat ext keys %v", keys)
	}

	if err := c.UnregisterBroker(context.Background(), b); err != nil {
		t.Fatalf("UnregisterBroker: %v", err)
	}
	un := <-got
	if un.Code != 104 {
		t.Errorf("unregister code %d, want 104", un.Code)
	}
	for k, want := range map[string]string{"brokerId": "2", "clusterName": "DefaultCluster", "brokerAddr": "10.0.0.1:10911", "brokerName": "broker-a"} {
		if v, _ := un.ExtValue(k); v != want {
			t.Errorf("unregister ext %s = %q, want %q", k, v, want)
		}
	}
}

func TestQueryDataVersion(t *testing.T) {
	stored := body.DataVersion{Timestamp: 1700000000123, Counter: 42}
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		dv, _, err := body.DecodeDataVersion(req.Body)
		resp.SetExt("changed", strconv.FormatBool(err != nil || dv != stored))
		return resp
	})
	c := dial(t, s.addr())
	b := Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.1:10911"}
	f := func(dv body.DataVersion, want bool) {
		t.Helper()
		changed, err := c.QueryDataVersion(context.Background(), b, dv)
		if err != nil {
			t.Fatalf("QueryDataVersion: %v", err)
		}
		if changed != want {
			t.Errorf("changed = %v for %+v, want %v", changed, dv, want)
		}
		req := <-got
		if req.Code != 322 || req.Flag != 0 {
			t.Errorf("code %d flag %d, want 322 0", req.Code, req.Flag)
		}
	}
	f(stored, false)
	f(body.DataVersion{Timestamp: 1, Counter: 1}, true)
	f(body.DataVersion{StateVersion: 1, Timestamp: 1700000000123, Counter: 42}, true)
}

func TestRoute(t *testing.T) {
	const routeJSON = `{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		topic, _ := req.ExtValue("topic")
		if topic != "TopicTest" {
			return reply(req, 17, "No topic route info in name server for the topic: "+topic)
		}
		resp := reply(req, 0, "")
		resp.Body = []byte(routeJSON)
		return resp
	})
	c := dial(t, s.addr())

	tr, err := c.Route(context.Background(), "TopicTest")
	if err != nil {
		t.Fatalf("Route: %v", err)
	}
	if req := <-got; req.Version != codec.ServerVersion {
		t.Errorf("route request version %d, want %d", req.Version, codec.ServerVersion)
	}
	want := &body.TopicRoute{
		BrokerDatas: []body.BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a",
			Addrs: []body.BrokerAddr{{ID: 0, Addr: "10.0.0.1:10911"}, {ID: 1, Addr: "10.0.0.2:10911"}}}},
		QueueDatas: []body.QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
	}
	if !reflect.DeepEqual(tr.BrokerDatas, want.BrokerDatas) || !reflect.DeepEqual(tr.QueueDatas, want.QueueDatas) {
		t.Errorf("route = %+v, want %+v", tr, want)
	}

	_, err = c.Route(context.Background(), "Nope")
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != 17 {
		t.Fatalf("Route of a missing topic = %v, want *ResponseError code 17", err)
	}
	<-got

	code, remark, raw, err := c.RouteBody(context.Background(), "TopicTest", 317)
	if err != nil || code != 0 || remark != "" || string(raw) != routeJSON {
		t.Errorf("RouteBody = %d %q %q %v", code, remark, raw, err)
	}
	if req := <-got; req.Version != 317 {
		t.Errorf("RouteBody request version %d, want 317", req.Version)
	}
}

func TestClusterInfo(t *testing.T) {
	const ciJSON = `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	s := startFake(t)
	serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		resp.Body = []byte(ciJSON)
		return resp
	})
	c := dial(t, s.addr())
	ci, err := c.ClusterInfo(context.Background())
	if err != nil {
		t.Fatalf("ClusterInfo: %v", err)
	}
	if len(ci.Brokers) != 1 || ci.Brokers[0].BrokerName != "broker-a" || len(ci.Brokers[0].Addrs) != 1 ||
		ci.Brokers[0].Addrs[0].Addr != "10.0.0.1:10911" {
		t.Errorf("brokers = %+v", ci.Brokers)
	}
	if !reflect.DeepEqual(ci.Clusters, map[string][]string{"DefaultCluster": {"broker-a"}}) {
		t.Errorf("clusters = %v", ci.Clusters)
	}
}

// kvServer is a fake NameServer KV store with Java's answers.
func kvServer(t *testing.T) *Client {
	t.Helper()
	table := map[string]map[string]string{}
	s := startFake(t)
	serve(t, s, func(req *codec.Command) *codec.Command {
		ns, _ := req.ExtValue("namespace")
		key, _ := req.ExtValue("key")
		switch req.Code {
		case 100:
			v, _ := req.ExtValue("value")
			if table[ns] == nil {
				table[ns] = map[string]string{}
			}
			table[ns][key] = v
		case 101:
			v, ok := table[ns][key]
			if !ok {
				return reply(req, 22, "No config item, Namespace: "+ns+" Key: "+key)
			}
			resp := reply(req, 0, "")
			resp.SetExt("value", v)
			return resp
		case 102:
			delete(table[ns], key)
		case 219:
			m, ok := table[ns]
			if !ok {
				return reply(req, 22, "No config item, Namespace: "+ns)
			}
			b, _ := json.Marshal(map[string]any{"table": m})
			resp := reply(req, 0, "")
			resp.Body = b
			return resp
		}
		return reply(req, 0, "")
	})
	return dial(t, s.addr())
}

func TestKV(t *testing.T) {
	c := kvServer(t)
	ctx := context.Background()
	if err := c.PutKV(ctx, "NS", "k1", "v1"); err != nil {
		t.Fatalf("PutKV: %v", err)
	}
	if err := c.PutKV(ctx, "NS", "k2", "v2 ünïcode"); err != nil {
		t.Fatalf("PutKV: %v", err)
	}
	if v, err := c.GetKV(ctx, "NS", "k2"); err != nil || v != "v2 ünïcode" {
		t.Errorf("GetKV = %q, %v", v, err)
	}
	m, err := c.KVList(ctx, "NS")
	if err != nil || !reflect.DeepEqual(m, map[string]string{"k1": "v1", "k2": "v2 ünïcode"}) {
		t.Errorf("KVList = %v, %v", m, err)
	}
	if err := c.DeleteKV(ctx, "NS", "k1"); err != nil {
		t.Fatalf("DeleteKV: %v", err)
	}
	var re *ResponseError
	if _, err := c.GetKV(ctx, "NS", "k1"); !errors.As(err, &re) || re.Code != 22 {
		t.Errorf("GetKV of a deleted key = %v, want code 22", err)
	}
	if _, err := c.KVList(ctx, "Nope"); !errors.As(err, &re) || re.Code != 22 {
		t.Errorf("KVList of a missing namespace = %v, want code 22", err)
	}
}

// The liveness heartbeat is the oneway QUERY_DATA_VERSION a recorded 5.x
// broker in compatibleWithOldNameSrv mode sent: same code, flag, header
// keys in the same order and values, and its data version as the body.
func TestDataVersionHeartbeatMatchesRecording(t *testing.T) {
	frames, err := codectest.Load(filepath.Join(codectest.Dir(), "broker5-master-slave-to-4.9.8-ns-oneway-322-heartbeats.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec *codec.Command
	for _, fr := range frames {
		var c codec.Command
		if fr.Dir != "req" {
			continue
		}
		if err := codec.Decode(fr.Raw()[4:], &c); err != nil {
			t.Fatal(err)
		}
		if c.Code == codec.QueryDataVersion && c.Flag == codec.FlagOneway {
			rec = &c
			break
		}
	}
	if rec == nil {
		t.Fatal("no oneway 322 in the recording")
	}
	dv, ok, err := body.DecodeDataVersion(rec.Body)
	if err != nil || !ok {
		t.Fatalf("recorded body %q: %v", rec.Body, err)
	}
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	b := Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "127.0.0.1:10911", Version: rec.Version}
	if err := c.DataVersionHeartbeat(context.Background(), b, dv); err != nil {
		t.Fatalf("DataVersionHeartbeat: %v", err)
	}
	req := <-got
	if req.Code != rec.Code || req.Flag != rec.Flag || req.Version != rec.Version {
		t.Errorf("code %d flag %d version %d, recorded %d %d %d", req.Code, req.Flag, req.Version, rec.Code, rec.Flag, rec.Version)
	}
	if !reflect.DeepEqual(extKeys(req), extKeys(rec)) {
		t.Errorf("ext keys %v, recorded %v", extKeys(req), extKeys(rec))
	}
	for _, f := range rec.Ext {
		if v, _ := req.ExtValue(f.Key); v != f.Value {
			t.Errorf("ext %s = %q, recorded %q", f.Key, v, f.Value)
		}
	}
	if string(req.Body) != string(rec.Body) {
		t.Errorf("body %s, recorded %s", req.Body, rec.Body)
	}
}
