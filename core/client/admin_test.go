// Tests of the admin request helpers: the exact headers and bodies they
// send and how they read the answers, against a fake server.

package client

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
)

func extMap(c *codec.Command) map[string]string {
	m := map[string]string{}
	for _, f := range c.Ext {
		m[f.Key] = f.Value
	}
	return m
}

// checkRequest asserts the code, the version, the flag, the ext fields
// (keys and values, in order) and the body of a request.
func checkRequest(t *testing.T, req *codec.Command, code int32, ext []codec.Field, wantBody string) {
	t.Helper()
	if req.Code != code || req.Flag != 0 || req.Version != codec.ServerVersion {
		t.Errorf("code %d flag %d version %d, want %d 0 %d", req.Code, req.Flag, req.Version, code, codec.ServerVersion)
	}
	if len(req.Ext) != len(ext) || (len(ext) > 0 && !reflect.DeepEqual(req.Ext, ext)) {
		t.Errorf("code %d ext %v, want %v", code, req.Ext, ext)
	}
	if string(req.Body) != wantBody {
		t.Errorf("code %d body %q, want %q", code, req.Body, wantBody)
	}
}

func TestWritePerm(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		name, _ := req.ExtValue("brokerName")
		resp := reply(req, 0, "")
		resp.HasExt = true
		switch name {
		case "nocount":
		case "badcount":
			resp.SetExt("wipeTopicCount", "x")
			resp.SetExt("addTopicCount", "x")
		case "refused":
			return reply(req, 3, "request type 205 not supported")
		default:
			resp.SetExt("wipeTopicCount", "10")
			resp.SetExt("addTopicCount", "7")
		}
		return resp
	})
	c := dial(t, s.addr())
	ctx := context.Background()

	n, err := c.WipeWritePerm(ctx, "broker-a")
	if err != nil || n != 10 {
		t.Errorf("WipeWritePerm = %d, %v; want 10", n, err)
	}
	checkRequest(t, <-got, 205, []codec.Field{{Key: "brokerName", Value: "broker-a"}}, "")
	n, err = c.AddWritePerm(ctx, "broker-a")
	if err != nil || n != 7 {
		t.Errorf("AddWritePerm = %d, %v; want 7", n, err)
	}
	checkRequest(t, <-got, 327, []codec.Field{{Key: "brokerName", Value: "broker-a"}}, "")

	f := func(name, wantErr string) {
		t.Helper()
		if _, err := c.WipeWritePerm(ctx, name); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("WipeWritePerm(%s) error %v, want it to contain %q", name, err, wantErr)
		}
		<-got
	}
	f("nocount", "lacks wipeTopicCount")
	f("badcount", `bad wipeTopicCount "x"`)
	f("refused", "response code 3: request type 205 not supported")

	_, err = c.AddWritePerm(ctx, "refused")
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != 3 {
		t.Errorf("AddWritePerm refused: %v, want *ResponseError code 3", err)
	}
	<-got
}

func TestTopicLists(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		switch req.Code {
		case 206:
			resp.Body = []byte(`{"topicList":["TopicTest","TBW102"]}`)
		case 224:
			if cl, _ := req.ExtValue("cluster"); cl != "DefaultCluster" {
				resp.Body = []byte(`{"topicList":[]}`)
			} else {
				resp.Body = []byte(`{"topicList":["TopicTest"]}`)
			}
		case 304:
			resp.Body = []byte(`{"brokerAddr":"10.0.0.1:10911","topicList":["broker-a","DefaultCluster"]}`)
		case 311:
			resp.Body = []byte(`{"topicList":["U"]}`)
		case 312:
			resp.Body = []byte(`{"topicList":["US","UUS"]}`)
		case 313:
			return reply(req, 1, "disable")
		}
		return resp
	})
	c := dial(t, s.addr())
	ctx := context.Background()

	f := func(call func() ([]string, error), code int32, ext []codec.Field, want []string) {
		t.Helper()
		topics, err := call()
		if err != nil {
			t.Errorf("code %d: %v", code, err)
		}
		if !reflect.DeepEqual(topics, want) {
			t.Errorf("code %d topics %q, want %q", code, topics, want)
		}
		checkRequest(t, <-got, code, ext, "")
	}
	// The fake answers as Java does, ignoring the paging field: its whole
	// list is the only page.
	f(func() ([]string, error) { return c.AllTopicList(ctx) }, 206,
		[]codec.Field{{Key: "rocketnsPageSize", Value: "20000"}}, []string{"TopicTest", "TBW102"})
	f(func() ([]string, error) { return c.TopicsByCluster(ctx, "DefaultCluster") }, 224,
		[]codec.Field{{Key: "cluster", Value: "DefaultCluster"}}, []string{"TopicTest"})
	f(func() ([]string, error) { return c.TopicsByCluster(ctx, "nosuch") }, 224,
		[]codec.Field{{Key: "cluster", Value: "nosuch"}}, []string{})
	f(func() ([]string, error) { return c.UnitTopicList(ctx) }, 311, nil, []string{"U"})
	f(func() ([]string, error) { return c.HasUnitSubTopicList(ctx) }, 312, nil, []string{"US", "UUS"})

	topics, addr, err := c.SystemTopicList(ctx)
	if err != nil || addr != "10.0.0.1:10911" || !reflect.DeepEqual(topics, []string{"broker-a", "DefaultCluster"}) {
		t.Errorf("SystemTopicList = %q %q %v", topics, addr, err)
	}
	checkRequest(t, <-got, 304, nil, "")

	_, err = c.HasUnitSubUnUnitTopicList(ctx)
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != 1 || re.Remark != "disable" {
		t.Errorf("HasUnitSubUnUnitTopicList = %v, want code 1 disable", err)
	}
	checkRequest(t, <-got, 313, nil, "")
}

func TestDeleteAndRegisterTopic(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command { return reply(req, 0, "") })
	c := dial(t, s.addr())
	ctx := context.Background()

	if err := c.DeleteTopic(ctx, "TopicTest", ""); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	checkRequest(t, <-got, 216, []codec.Field{{Key: "topic", Value: "TopicTest"}}, "")
	if err := c.DeleteTopic(ctx, "TopicTest", "DefaultCluster"); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	checkRequest(t, <-got, 216, []codec.Field{{Key: "topic", Value: "TopicTest"}, {Key: "clusterName", Value: "DefaultCluster"}}, "")

	// The body a 5.x broker sends (the reference's example, byte for byte).
	err := c.RegisterTopic(ctx, "TopicTest", []body.QueueData{{BrokerName: "broker-a", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})
	if err != nil {
		t.Fatalf("RegisterTopic: %v", err)
	}
	checkRequest(t, <-got, 217, []codec.Field{{Key: "topic", Value: "TopicTest"}},
		`{"brokerDatas":[],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}`)
}

func TestUpdateNamesrvConfig(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		if bytes.HasPrefix(req.Body, []byte("kvConfigPath=")) {
			return reply(req, 16, "Can not update config in black list.")
		}
		return reply(req, 0, "")
	})
	c := dial(t, s.addr())
	ctx := context.Background()

	if err := c.UpdateNamesrvConfig(ctx, []properties.Property{{Key: "orderMessageEnable", Value: "false"}}); err != nil {
		t.Fatalf("UpdateNamesrvConfig: %v", err)
	}
	// What mqadmin sent in the recording.
	checkRequest(t, <-got, 318, nil, "orderMessageEnable=false\n")

	if err := c.UpdateNamesrvConfigMap(ctx, map[string]string{"enableTopicList": "true", "enableAllTopicList": "false"}); err != nil {
		t.Fatalf("UpdateNamesrvConfigMap: %v", err)
	}
	checkRequest(t, <-got, 318, nil, "enableAllTopicList=false\nenableTopicList=true\n")

	err := c.UpdateNamesrvConfig(ctx, []properties.Property{{Key: "kvConfigPath", Value: "/home/rocketmq/evil-kv.json"}})
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != 16 || re.Remark != "Can not update config in black list." {
		t.Errorf("blacklisted update: %v, want code 16", err)
	}
	<-got
}

func TestGetNamesrvConfig(t *testing.T) {
	const text = "bindAddress=0.0.0.0\nconfigBlackList=configBlackList;configStorePath;kvConfigPath\nlistenPort=9876\nrocketmqHome=C:\\\\rocketmq\n"
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		resp.Body = []byte(text)
		return resp
	})
	c := dial(t, s.addr())
	gotText, pairs, err := c.GetNamesrvConfig(context.Background())
	if err != nil {
		t.Fatalf("GetNamesrvConfig: %v", err)
	}
	checkRequest(t, <-got, 319, nil, "")
	if gotText != text {
		t.Errorf("text %q, want %q", gotText, text)
	}
	want := []properties.Property{
		{Key: "bindAddress", Value: "0.0.0.0", Line: 1},
		{Key: "configBlackList", Value: "configBlackList;configStorePath;kvConfigPath", Line: 2},
		{Key: "listenPort", Value: "9876", Line: 3},
		{Key: "rocketmqHome", Value: `C:\rocketmq`, Line: 4},
	}
	if !reflect.DeepEqual(pairs, want) {
		t.Errorf("pairs %+v, want %+v", pairs, want)
	}
}

func TestGetBrokerMemberGroup(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		cl, _ := req.ExtValue("clusterName")
		name, _ := req.ExtValue("brokerName")
		switch name {
		case "broker-a":
			// Java's legacy form, ids deliberately out of order.
			resp.Body = []byte(`{"brokerMemberGroup":{"brokerAddrs":{2:"10.0.0.3:10911",0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}`)
		case "garbage":
			resp.Body = []byte(`{"other":1}`)
		default:
			resp.Body = body.AppendBrokerMemberGroup(nil, cl, name, nil)
		}
		return resp
	})
	c := dial(t, s.addr())
	ctx := context.Background()

	g, err := c.GetBrokerMemberGroup(ctx, "DefaultCluster", "broker-a")
	if err != nil {
		t.Fatalf("GetBrokerMemberGroup: %v", err)
	}
	checkRequest(t, <-got, 901, []codec.Field{{Key: "clusterName", Value: "DefaultCluster"}, {Key: "brokerName", Value: "broker-a"}}, "")
	want := &BrokerMemberGroup{Cluster: "DefaultCluster", BrokerName: "broker-a", Addrs: []body.BrokerAddr{
		{ID: 0, Addr: "10.0.0.1:10911"}, {ID: 1, Addr: "10.0.0.2:10911"}, {ID: 2, Addr: "10.0.0.3:10911"}}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("group %+v, want %+v", g, want)
	}

	g, err = c.GetBrokerMemberGroup(ctx, "c", "nosuch")
	if err != nil || g.Cluster != "c" || g.BrokerName != "nosuch" || len(g.Addrs) != 0 {
		t.Errorf("unknown group = %+v, %v", g, err)
	}
	<-got

	if _, err := c.GetBrokerMemberGroup(ctx, "c", "garbage"); err == nil || !strings.Contains(err.Error(), "no brokerMemberGroup") {
		t.Errorf("garbage body: %v", err)
	}
	<-got
}

func TestBrokerDataVersion(t *testing.T) {
	s := startFake(t)
	got := serve(t, s, func(req *codec.Command) *codec.Command {
		resp := reply(req, 0, "")
		resp.SetExt("changed", "true")
		if name, _ := req.ExtValue("brokerName"); name == "broker-a" {
			resp.Body = []byte(`{"counter":42,"stateVersion":3,"timestamp":1700000000123}`)
		}
		return resp
	})
	c := dial(t, s.addr())
	ctx := context.Background()

	b := Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.1:10911", ID: 1}
	dv, known, err := c.BrokerDataVersion(ctx, b)
	if err != nil || !known || dv != (body.DataVersion{StateVersion: 3, Timestamp: 1700000000123, Counter: 42}) {
		t.Errorf("BrokerDataVersion = %+v %v %v", dv, known, err)
	}
	req := <-got
	if req.Code != 322 || req.Flag != 0 || req.Version != DefaultBrokerVersion {
		t.Errorf("code %d flag %d version %d", req.Code, req.Flag, req.Version)
	}
	want := map[string]string{"brokerId": "1", "clusterName": "DefaultCluster", "brokerAddr": "10.0.0.1:10911", "brokerName": "broker-a"}
	if m := extMap(req); !reflect.DeepEqual(m, want) {
		t.Errorf("ext %v, want %v", m, want)
	}
	if string(req.Body) != `{"counter":0,"stateVersion":0,"timestamp":0}` {
		t.Errorf("body %q", req.Body)
	}

	b.Name = "nosuch"
	if dv, known, err := c.BrokerDataVersion(ctx, b); err != nil || known || dv != (body.DataVersion{}) {
		t.Errorf("unknown broker = %+v %v %v", dv, known, err)
	}
	<-got
}
