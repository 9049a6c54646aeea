// Tests of every subcommand against an in-process NameServer: table and JSON
// output, writes fanned out to several servers, and the error paths.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// startNS runs a NameServer on a loopback port for the test.
func startNS(t *testing.T) string {
	t.Helper()
	return startNSWith(t, nil)
}

// startNSWith is startNS with setup applied to the config (in a fresh temp
// dir) before the server is built.
func startNSWith(t *testing.T, setup func(cfg *config.Config, dir string)) string {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	if setup != nil {
		setup(cfg, dir)
	}
	s, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s.Addr()
}

// registerBrokers registers broker-a (master and slave, DefaultCluster)
// and broker-b (OtherCluster). The connection stays open for the whole test:
// the NameServer drops a broker whose registering connection closes.
func registerBrokers(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	topic := func(name string, q, perm int32) body.TopicConfig {
		return body.TopicConfig{TopicName: name, ReadQueueNums: q, WriteQueueNums: q, Perm: perm, TopicFilterType: "SINGLE_TAG"}
	}
	brokerA0 := client.Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.1:10911", HAAddr: "10.0.0.1:10912"}
	brokerA1 := client.Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.0.0.2:10911", HAAddr: "10.0.0.2:10912", ID: 1}
	brokerB0 := client.Broker{Cluster: "OtherCluster", Name: "broker-b", Addr: "10.0.0.3:10911", HAAddr: "10.0.0.3:10912"}
	// queryDataVersion tests expect broker-a's version.
	a := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{StateVersion: 2, Timestamp: 1700000000123, Counter: 42},
		Topics: []body.TopicConfig{topic("TopicTest", 4, 6), topic("TBW102", 8, 7)}}
	b := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Timestamp: 1700000000999, Counter: 1},
		Topics: []body.TopicConfig{topic("TopicB", 2, 6), topic("TBW102", 8, 7)}}
	for _, r := range []struct {
		b  client.Broker
		rb *body.RegisterBroker
	}{{brokerA0, a}, {brokerA1, a}, {brokerB0, b}} {
		if _, _, err := c.RegisterBroker(ctx, r.b, r.rb); err != nil {
			t.Fatalf("register %s/%d: %v", r.b.Name, r.b.ID, err)
		}
	}
}

type result struct {
	code           int
	stdout, stderr string
}

// runPatient is runEnv with a -timeout of a minute unless args set one: the
// default 3 s is an operator's bound for a NameServer that does not
// answer, and a TLS handshake and a request can take longer than that on
// a loaded machine under -race.
func runPatient(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && lookup(args[0]) != nil &&
		!slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "timeout") }) {
		args = slices.Concat(args[:1], []string{"-timeout", "1m"}, args[1:])
	}
	return runEnv(args, stdout, stderr, getenv)
}

func nsadmin(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runPatient(args, &stdout, &stderr, func(string) string { return "" })
	return result{code, stdout.String(), stderr.String()}
}

// ok runs a command that must succeed with nothing on stderr.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := nsadmin(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("nsadmin %q: exit %d, stderr %q, stdout %q", args, r.code, r.stderr, r.stdout)
	}
	return r.stdout
}

// okJSON runs a command with -o json and decodes its output into v.
func okJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := ok(t, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("nsadmin %q: output is not JSON: %v\n%s", args, err, out)
	}
}

// fails runs a command that must fail with exit code and a one-line stderr
// containing every part of want.
func fails(t *testing.T, code int, want []string, args ...string) result {
	t.Helper()
	r := nsadmin(t, args...)
	if r.code != code {
		t.Errorf("nsadmin %q: exit %d, want %d (stderr %q)", args, r.code, code, r.stderr)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("nsadmin %q: stderr is not one line: %q", args, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("nsadmin %q: stderr %q lacks %q", args, r.stderr, w)
		}
	}
	return r
}

func TestClusterList(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	want := `#Cluster        #Broker   #BID  #Addr           #Zone  #ActingMaster
DefaultCluster  broker-a  0     10.0.0.1:10911  -      false
DefaultCluster  broker-a  1     10.0.0.2:10911  -      false
OtherCluster    broker-b  0     10.0.0.3:10911  -      false
`
	if got := ok(t, "clusterList", "-n", ns); got != want {
		t.Errorf("clusterList table:\n%s\nwant:\n%s", got, want)
	}
	want = `#Cluster      #Broker   #BID  #Addr           #Zone  #ActingMaster
OtherCluster  broker-b  0     10.0.0.3:10911  -      false
`
	if got := ok(t, "clusterList", "-n", ns, "-c", "OtherCluster"); got != want {
		t.Errorf("clusterList -c OtherCluster:\n%s\nwant:\n%s", got, want)
	}

	var doc struct {
		Namesrv string      `json:"namesrv"`
		Brokers []brokerRow `json:"brokers"`
	}
	okJSON(t, &doc, "clusterList", "-n", ns)
	wantRows := []brokerRow{
		{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 0, Addr: "10.0.0.1:10911"},
		{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1, Addr: "10.0.0.2:10911"},
		{Cluster: "OtherCluster", BrokerName: "broker-b", BrokerID: 0, Addr: "10.0.0.3:10911"},
	}
	if doc.Namesrv != ns || !reflect.DeepEqual(doc.Brokers, wantRows) {
		t.Errorf("clusterList json = %+v", doc)
	}
}

func TestClusterListEmptyJSON(t *testing.T) {
	ns := startNS(t)
	// An empty list is [] rather than null, so scripts can iterate it.
	if out := ok(t, "clusterList", "-n", ns, "-o", "json"); !strings.Contains(out, `"brokers": []`) {
		t.Errorf("empty clusterList json:\n%s", out)
	}
}

func TestTopicRoute(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	want := `#Broker   #Cluster        #BID  #Addr           #Zone
broker-a  DefaultCluster  0     10.0.0.1:10911  -
broker-a  DefaultCluster  1     10.0.0.2:10911  -

#Broker   #ReadQueues  #WriteQueues  #Perm   #SysFlag
broker-a  4            4             RW-(6)  0
`
	if got := ok(t, "topicRoute", "-n", ns, "-t", "TopicTest"); got != want {
		t.Errorf("topicRoute table:\n%s\nwant:\n%s", got, want)
	}

	var doc struct {
		Namesrv string          `json:"namesrv"`
		Topic   string          `json:"topic"`
		Route   json.RawMessage `json:"route"`
	}
	okJSON(t, &doc, "topicRoute", "-n", ns, "-t", "TBW102")
	tr, err := body.DecodeTopicRoute(doc.Route)
	if err != nil {
		t.Fatalf("route in json output: %v", err)
	}
	if doc.Namesrv != ns || doc.Topic != "TBW102" || len(tr.BrokerDatas) != 2 || len(tr.QueueDatas) != 2 {
		t.Errorf("topicRoute json = %s", doc.Route)
	}
	// Standard JSON: quoted broker ids.
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Route); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(compact.Bytes(), []byte(`"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}`)) {
		t.Errorf("route not in standard form: %s", doc.Route)
	}

	fails(t, 1, []string{"nsadmin topicRoute: " + ns + ": error code 17 (TOPIC_NOT_EXIST): No topic route info in name server for the topic: Nope See https://"},
		"topicRoute", "-n", ns, "-t", "Nope")
}

func TestTopicList(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	if got := ok(t, "topicList", "-n", ns); got != "TBW102\nTopicB\nTopicTest\n" {
		t.Errorf("topicList = %q", got)
	}
	var doc struct {
		Namesrv string   `json:"namesrv"`
		Cluster string   `json:"cluster"`
		Topics  []string `json:"topics"`
	}
	okJSON(t, &doc, "topicList", "-n", ns)
	if doc.Namesrv != ns || doc.Cluster != "" || !reflect.DeepEqual(doc.Topics, []string{"TBW102", "TopicB", "TopicTest"}) {
		t.Errorf("topicList json = %+v", doc)
	}

	// --clusterName: GET_TOPICS_BY_CLUSTER.
	if got := ok(t, "topicList", "-n", ns, "--clusterName", "OtherCluster"); got != "TBW102\nTopicB\n" {
		t.Errorf("topicList --clusterName OtherCluster = %q", got)
	}
	okJSON(t, &doc, "topicList", "-n", ns, "--clusterName", "DefaultCluster")
	if doc.Cluster != "DefaultCluster" || !reflect.DeepEqual(doc.Topics, []string{"TBW102", "TopicTest"}) {
		t.Errorf("topicList --clusterName json = %+v", doc)
	}
	okJSON(t, &doc, "topicList", "-n", ns, "--clusterName", "NoSuchCluster")
	if doc.Topics == nil || len(doc.Topics) != 0 {
		t.Errorf("topicList of an unknown cluster = %+v, want []", doc)
	}

	// -c is mqadmin's clusterModel switch: each topic with its cluster(s),
	// retry and dead-letter topics left out, a topic of no cluster as "-".
	registerTopic(t, ns)
	want := "#Cluster        #Topic\n" +
		"DefaultCluster  TBW102\n" +
		"OtherCluster    TBW102\n" +
		"OtherCluster    TopicB\n" +
		"DefaultCluster  TopicTest\n"
	for _, args := range [][]string{{"-c"}, {"--clusterModel"}, {"-clusterModel=true"}} {
		if got := ok(t, append([]string{"topicList", "-n", ns}, args...)...); got != want {
			t.Errorf("topicList %q:\n%s\nwant:\n%s", args, got, want)
		}
	}
	if got := ok(t, "topicList", "-n", ns, "-c=false"); got != "%DLQ%group\n%RETRY%group\nTBW102\nTopicB\nTopicTest\n" {
		t.Errorf("topicList -c=false = %q", got)
	}
	var rows struct {
		Namesrv string            `json:"namesrv"`
		Rows    []topicClusterRow `json:"rows"`
	}
	okJSON(t, &rows, "topicList", "-n", ns, "-c")
	if rows.Namesrv != ns || len(rows.Rows) != 4 || rows.Rows[0] != (topicClusterRow{"DefaultCluster", "TBW102"}) {
		t.Errorf("topicList -c json = %+v", rows)
	}
}

// registerTopic adds retry and dead-letter topics to broker-b's cluster,
// which topicList -c leaves out.
func registerTopic(t *testing.T, ns string) {
	t.Helper()
	for _, topic := range []string{"%RETRY%group", "%DLQ%group"} {
		ok(t, "registerTopic", "-n", ns, "-t", topic, "-b", "broker-b")
	}
	if got := ok(t, "topicList", "-n", ns); !strings.Contains(got, "%RETRY%group") {
		t.Fatalf("retry topic not registered: %q", got)
	}
}

func TestTopicClusterList(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	if got := ok(t, "topicClusterList", "-n", ns, "-t", "TBW102"); got != "DefaultCluster\nOtherCluster\n" {
		t.Errorf("topicClusterList = %q", got)
	}
	var doc struct {
		Namesrv  string   `json:"namesrv"`
		Topic    string   `json:"topic"`
		Clusters []string `json:"clusters"`
	}
	okJSON(t, &doc, "topicClusterList", "-n", ns, "-t", "TopicB")
	if doc.Topic != "TopicB" || !reflect.DeepEqual(doc.Clusters, []string{"OtherCluster"}) {
		t.Errorf("topicClusterList json = %+v", doc)
	}
	fails(t, 1, []string{"error code 17 (TOPIC_NOT_EXIST)"}, "topicClusterList", "-n", ns, "-t", "Nope")
}

func TestNamesrvConfig(t *testing.T) {
	ns := startNS(t)

	out := ok(t, "getNamesrvConfig", "-n", ns)
	if !strings.HasPrefix(out, "#Key ") || !strings.Contains(out, "\nbindAddress ") || !strings.Contains(out, "\norderMessageEnable ") {
		t.Errorf("getNamesrvConfig table:\n%s", out)
	}
	config := func() map[string]string {
		var doc struct {
			Namesrv string            `json:"namesrv"`
			Config  map[string]string `json:"config"`
		}
		okJSON(t, &doc, "getNamesrvConfig", "-n", ns)
		if doc.Namesrv != ns {
			t.Errorf("namesrv %q, want %q", doc.Namesrv, ns)
		}
		return doc.Config
	}
	if c := config(); c["bindAddress"] != "127.0.0.1" || c["orderMessageEnable"] != "false" {
		t.Errorf("config = %v", c)
	}

	if got, want := ok(t, "updateNamesrvConfig", "-n", ns, "-k", "orderMessageEnable", "-v", "true"), "#NameServer      #Result\n"+pad(ns, 17)+"OK\n"; got != want {
		t.Errorf("updateNamesrvConfig table = %q, want %q", got, want)
	}
	if c := config(); c["orderMessageEnable"] != "true" {
		t.Errorf("orderMessageEnable after update = %q", c["orderMessageEnable"])
	}

	// A blacklisted key: NO_PERMISSION, in the table, in JSON and on stderr.
	r := fails(t, 1, []string{"nsadmin updateNamesrvConfig: " + ns + ": error code 16 (NO_PERMISSION): "},
		"updateNamesrvConfig", "-n", ns, "-k", "kvConfigPath", "-v", "/home/rocketmq/evil-kv.json", "-o", "json")
	var doc struct {
		Command string        `json:"command"`
		Results []writeResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	if doc.Command != "updateNamesrvConfig" || len(doc.Results) != 1 || doc.Results[0].OK ||
		doc.Results[0].Code == nil || *doc.Results[0].Code != 16 || doc.Results[0].Namesrv != ns {
		t.Errorf("refused update json = %s", r.stdout)
	}
	if c := config(); c["kvConfigPath"] == "/home/rocketmq/evil-kv.json" {
		t.Error("blacklisted key was applied")
	}
}

// pad left-aligns s in a tabwriter column of width w.
func pad(s string, w int) string { return s + strings.Repeat(" ", w-len(s)) }

func TestKVCommands(t *testing.T) {
	ns := startNS(t)

	ok(t, "updateKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "TopicOrder", "-v", "broker-a:4;broker-b:4")
	ok(t, "updateKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "Second", "-v", "")

	want := "#Namespace          #Key        #Value\nORDER_TOPIC_CONFIG  TopicOrder  broker-a:4;broker-b:4\n"
	if got := ok(t, "getKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "TopicOrder"); got != want {
		t.Errorf("getKvConfig table:\n%q\nwant:\n%q", got, want)
	}
	var doc struct {
		Namesrv   string            `json:"namesrv"`
		Namespace string            `json:"namespace"`
		Table     map[string]string `json:"table"`
	}
	okJSON(t, &doc, "getKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG")
	if doc.Namespace != "ORDER_TOPIC_CONFIG" || !reflect.DeepEqual(doc.Table, map[string]string{"TopicOrder": "broker-a:4;broker-b:4", "Second": ""}) {
		t.Errorf("getKvConfig namespace json = %+v", doc)
	}

	ok(t, "deleteKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "TopicOrder")
	fails(t, 1, []string{"nsadmin getKvConfig: " + ns + ": error code 22 (QUERY_NOT_FOUND): No config item, Namespace: ORDER_TOPIC_CONFIG Key: TopicOrder"},
		"getKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "TopicOrder")
	fails(t, 1, []string{"error code 22"}, "getKvConfig", "-n", ns, "-s", "NoSuchNamespace")
	// Deleting a missing key is not an error, as in Java.
	ok(t, "deleteKvConfig", "-n", ns, "-s", "ORDER_TOPIC_CONFIG", "-k", "TopicOrder")
	fails(t, 2, []string{"missing required flag -s (namespace)"}, "getKvConfig", "-n", ns, "-k", "x")
	fails(t, 2, []string{"missing required flag -v (value)"}, "updateKvConfig", "-n", ns, "-s", "a", "-k", "x")
}

// routePerm returns the perm of topic's queues on broker.
func routePerm(t *testing.T, ns, topic, broker string) int32 {
	t.Helper()
	c, err := client.Dial(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := c.Route(context.Background(), topic)
	if err != nil {
		t.Fatalf("route of %s: %v", topic, err)
	}
	for _, q := range tr.QueueDatas {
		if q.BrokerName == broker {
			return q.Perm
		}
	}
	t.Fatalf("route of %s has no queues on %s", topic, broker)
	return 0
}

func TestWritePerm(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	want := "#NameServer      #Topics  #Result\n" + pad(ns, 17) + "2        OK\n"
	if got := ok(t, "wipeWritePerm", "-n", ns, "-b", "broker-a"); got != want {
		t.Errorf("wipeWritePerm table = %q, want %q", got, want)
	}
	if p := routePerm(t, ns, "TopicTest", "broker-a"); p != 4 {
		t.Errorf("TopicTest perm after wipe = %d, want 4", p)
	}
	if p := routePerm(t, ns, "TBW102", "broker-a"); p != 5 {
		t.Errorf("TBW102 perm after wipe = %d, want 5", p)
	}
	if p := routePerm(t, ns, "TBW102", "broker-b"); p != 7 {
		t.Errorf("broker-b's TBW102 perm after wiping broker-a = %d, want 7", p)
	}

	var doc struct {
		Command string        `json:"command"`
		Results []writeResult `json:"results"`
	}
	okJSON(t, &doc, "addWritePerm", "-n", ns, "-b", "broker-a")
	if doc.Command != "addWritePerm" || len(doc.Results) != 1 || !doc.Results[0].OK ||
		doc.Results[0].TopicCount == nil || *doc.Results[0].TopicCount != 2 {
		t.Errorf("addWritePerm json = %+v", doc)
	}
	if p := routePerm(t, ns, "TBW102", "broker-a"); p != 6 {
		t.Errorf("TBW102 perm after add = %d, want 6", p)
	}

	fails(t, 2, []string{"missing required flag -b (brokerName)"}, "wipeWritePerm", "-n", ns)

	// Long option names as in mqadmin.
	if got := ok(t, "wipeWritePerm", "--namesrvAddr", ns, "--brokerName", "broker-b"); !strings.Contains(got, "2        OK") {
		t.Errorf("wipeWritePerm with long names = %q", got)
	}
}

// A broker name no NameServer knows: said so, and a failure when it
// matched nowhere; a broker one of them knows is a success with a note.
func TestWritePermNoSuchBroker(t *testing.T) {
	ns, other := startNS(t), startNS(t)
	registerBrokers(t, ns)
	for _, cmd := range []string{"wipeWritePerm", "addWritePerm"} {
		r := nsadmin(t, cmd, "-n", ns+";"+other, "-b", "nosuch")
		if r.code != 1 || !strings.Contains(r.stderr, "no broker named nosuch on any NameServer: nothing changed") ||
			!strings.Contains(r.stdout, "no such broker") || strings.Contains(r.stdout, "OK") {
			t.Errorf("%s -b nosuch: exit %d\nstdout %s\nstderr %s", cmd, r.code, r.stdout, r.stderr)
		}
		var doc struct {
			Results []writeResult `json:"results"`
		}
		r = nsadmin(t, cmd, "-n", ns, "-b", "nosuch", "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || len(doc.Results) != 1 || !doc.Results[0].BrokerNotFound {
			t.Errorf("%s -b nosuch -o json: exit %d %s (%v)", cmd, r.code, r.stdout, err)
		}
		// broker-a is on ns only.
		r = nsadmin(t, cmd, "-n", ns+";"+other, "-b", "broker-a")
		if r.code != 0 || !strings.Contains(r.stderr, other+": no broker named broker-a is registered there") || strings.Contains(r.stderr, ns+":") {
			t.Errorf("%s -b broker-a on one of two: exit %d\nstdout %s\nstderr %s", cmd, r.code, r.stdout, r.stderr)
		}
	}
}

// Every command flag and -n also go by mqadmin's long name.
func TestLongOptionNames(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)
	f := func(short, long []string) {
		t.Helper()
		if a, b := ok(t, short...), ok(t, long...); a != b {
			t.Errorf("%q = %q, %q = %q", short, a, long, b)
		}
	}
	f([]string{"topicRoute", "-n", ns, "-t", "TopicTest"}, []string{"topicRoute", "--namesrvAddr", ns, "--topic", "TopicTest"})
	f([]string{"clusterList", "-n", ns, "-c", "OtherCluster"}, []string{"clusterList", "--namesrvAddr=" + ns, "--clusterName=OtherCluster"})
	f([]string{"getBrokerMemberGroup", "-n", ns, "-c", "DefaultCluster", "-b", "broker-a"},
		[]string{"getBrokerMemberGroup", "--namesrvAddr", ns, "--clusterName", "DefaultCluster", "--brokerName", "broker-a"})
	ok(t, "updateKvConfig", "--namesrvAddr", ns, "--namespace", "NS", "--key", "K", "--value", "V")
	if got := ok(t, "getKvConfig", "-n", ns, "-s", "NS", "-k", "K", "-o", "json"); !strings.Contains(got, `"K": "V"`) {
		t.Errorf("getKvConfig after a long-named update = %s", got)
	}
	f([]string{"queryDataVersion", "-n", ns, "-c", "DefaultCluster", "-b", "broker-a", "-a", "10.0.0.1:10911", "-i", "0"},
		[]string{"queryDataVersion", "-n", ns, "--clusterName", "DefaultCluster", "--brokerName", "broker-a", "--brokerAddr", "10.0.0.1:10911", "--brokerId", "0"})
	ok(t, "registerTopic", "-n", ns, "--topic", "T2", "--brokerName", "broker-b", "--readQueueNums", "2", "--writeQueueNums", "2", "--perm", "6")
	if got := ok(t, "topicClusterList", "-n", ns, "--topic", "T2"); got != "OtherCluster\n" {
		t.Errorf("topicClusterList T2 = %q", got)
	}
	// A required flag given by its long name counts as given.
	fails(t, 2, []string{"missing required flag -t (topic)"}, "topicRoute", "--namesrvAddr", ns)
}

func TestDeleteAndRegisterTopic(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	// Only the queues on OtherCluster go.
	ok(t, "deleteTopic", "-n", ns, "-t", "TBW102", "-c", "OtherCluster")
	if got := ok(t, "topicClusterList", "-n", ns, "-t", "TBW102"); got != "DefaultCluster\n" {
		t.Errorf("TBW102 clusters after deleting it on OtherCluster = %q", got)
	}
	ok(t, "deleteTopic", "-n", ns, "-t", "TBW102", "-c", "DefaultCluster")
	fails(t, 1, []string{"error code 17"}, "topicRoute", "-n", ns, "-t", "TBW102")

	ok(t, "registerTopic", "-n", ns, "-t", "NewTopic", "-b", "broker-b", "-r", "2", "-w", "3", "-p", "4")
	c, err := client.Dial(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := c.Route(context.Background(), "NewTopic")
	if err != nil {
		t.Fatalf("route of the registered topic: %v", err)
	}
	want := []body.QueueData{{BrokerName: "broker-b", ReadQueueNums: 2, WriteQueueNums: 3, Perm: 4}}
	if !reflect.DeepEqual(tr.QueueDatas, want) {
		t.Errorf("registered queues %+v, want %+v", tr.QueueDatas, want)
	}
	// Defaults: 8 read, 8 write, perm 6.
	ok(t, "registerTopic", "-n", ns, "-t", "Defaults", "-b", "broker-a")
	if p := routePerm(t, ns, "Defaults", "broker-a"); p != 6 {
		t.Errorf("default perm %d, want 6", p)
	}
	fails(t, 2, []string{"bad -p 9"}, "registerTopic", "-n", ns, "-t", "x", "-b", "broker-a", "-p", "9")
	fails(t, 2, []string{"missing required flag -t (topic)"}, "deleteTopic", "-n", ns)
	// mqadmin's deleteTopic requires -c too.
	fails(t, 2, []string{"missing required flag -c (clusterName)"}, "deleteTopic", "-n", ns, "-t", "TopicB")
	if got := ok(t, "topicClusterList", "-n", ns, "-t", "TopicB"); got != "OtherCluster\n" {
		t.Errorf("TopicB clusters after deleteTopic without -c = %q", got)
	}
}

// `-c "$CLUSTER"` with the variable unset gives the flag, empty. That must
// not quietly mean what leaving the flag out means: for deleteTopic that
// used to be "from every cluster".
func TestBlankFlagIsUsageError(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)
	for _, args := range [][]string{
		{"deleteTopic", "-t", "TBW102", "-c", ""},
		{"deleteTopic", "-t", "TBW102", "-c", "  "},
		{"topicList", "-clusterName", ""},
		{"clusterList", "-c", ""},
		{"getKvConfig", "-s", "NS", "-k", ""},
		{"topicRoute", "-t", ""},
		{"clusterList", "-secretKey", "s", "-accessKey", ""},
		{"clusterList", "-tls", "-tlsCA", ""},
	} {
		flagName := args[len(args)-2]
		fails(t, 2, []string{"flag " + flagName}, append([]string{args[0], "-n", ns}, args[1:]...)...)
	}
	if got := ok(t, "topicClusterList", "-n", ns, "-t", "TBW102"); got != "DefaultCluster\nOtherCluster\n" {
		t.Errorf("TBW102 clusters after deleteTopic -c \"\" = %q, want both kept", got)
	}
	// -v is the one flag whose empty value is a value.
	ok(t, "updateKvConfig", "-n", ns, "-s", "NS", "-k", "K", "-v", "")
}

func TestGetBrokerMemberGroup(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	want := "#Cluster        #Broker   #BID  #Addr\nDefaultCluster  broker-a  0     10.0.0.1:10911\nDefaultCluster  broker-a  1     10.0.0.2:10911\n"
	if got := ok(t, "getBrokerMemberGroup", "-n", ns, "-c", "DefaultCluster", "-b", "broker-a"); got != want {
		t.Errorf("getBrokerMemberGroup table:\n%s\nwant:\n%s", got, want)
	}
	var doc struct {
		Namesrv     string     `json:"namesrv"`
		Cluster     string     `json:"cluster"`
		BrokerName  string     `json:"brokerName"`
		BrokerAddrs []addrJSON `json:"brokerAddrs"`
	}
	okJSON(t, &doc, "getBrokerMemberGroup", "-n", ns, "-c", "DefaultCluster", "-b", "broker-a")
	if doc.Cluster != "DefaultCluster" || doc.BrokerName != "broker-a" ||
		!reflect.DeepEqual(doc.BrokerAddrs, []addrJSON{{0, "10.0.0.1:10911"}, {1, "10.0.0.2:10911"}}) {
		t.Errorf("getBrokerMemberGroup json = %+v", doc)
	}
	okJSON(t, &doc, "getBrokerMemberGroup", "-n", ns, "-c", "c", "-b", "nosuch")
	if doc.BrokerName != "nosuch" || doc.BrokerAddrs == nil || len(doc.BrokerAddrs) != 0 {
		t.Errorf("unknown group json = %+v", doc)
	}
	fails(t, 2, []string{"missing required flag -c (clusterName)"}, "getBrokerMemberGroup", "-n", ns, "-b", "broker-a")
}

func TestQueryDataVersion(t *testing.T) {
	ns := startNS(t)
	registerBrokers(t, ns)

	args := []string{"queryDataVersion", "-n", ns, "-c", "DefaultCluster", "-b", "broker-a", "-a", "10.0.0.2:10911", "-i", "1"}
	want := "#Cluster        #Broker   #BID  #Addr           #StateVersion  #Timestamp     #Counter\n" +
		"DefaultCluster  broker-a  1     10.0.0.2:10911  2              1700000000123  42\n"
	if got := ok(t, args...); got != want {
		t.Errorf("queryDataVersion table:\n%s\nwant:\n%s", got, want)
	}
	var doc struct {
		Namesrv     string           `json:"namesrv"`
		Known       bool             `json:"known"`
		DataVersion *dataVersionJSON `json:"dataVersion"`
	}
	okJSON(t, &doc, args...)
	if !doc.Known || doc.DataVersion == nil || *doc.DataVersion != (dataVersionJSON{2, 1700000000123, 42}) {
		t.Errorf("queryDataVersion json = %+v", doc)
	}

	unknown := []string{"queryDataVersion", "-n", ns, "-c", "DefaultCluster", "-b", "broker-z", "-a", "10.9.9.9:10911"}
	if got := ok(t, unknown...); !strings.HasSuffix(got, "10.9.9.9:10911  -              -           -\n") {
		t.Errorf("queryDataVersion of an unknown broker:\n%s", got)
	}
	doc.DataVersion = nil
	okJSON(t, &doc, unknown...)
	if doc.Known || doc.DataVersion != nil {
		t.Errorf("unknown broker json = %+v", doc)
	}
	fails(t, 2, []string{"missing required flag -a (brokerAddr)"}, "queryDataVersion", "-n", ns, "-c", "c", "-b", "b")
}

// Writes go to every NameServer, reads to the first that answers.
func TestSeveralNameServers(t *testing.T) {
	ns1, ns2, dead := startNS(t), startNS(t), remotingtest.FreeAddrs(t, 1)[0]
	list := ns1 + ";" + ns2

	ok(t, "updateKvConfig", "-n", list, "-s", "NS", "-k", "k", "-v", "v")
	for _, ns := range []string{ns1, ns2} {
		if got := ok(t, "getKvConfig", "-n", ns, "-s", "NS", "-k", "k"); !strings.HasSuffix(got, "NS          k     v\n") {
			t.Errorf("%s after a write to both: %q", ns, got)
		}
	}

	// One dead server: the others still get the write, the command fails.
	r := fails(t, 1, []string{"nsadmin updateKvConfig: " + dead + ": unreachable: "},
		"updateKvConfig", "-n", dead+"; "+ns1, "-s", "NS", "-k", "k2", "-v", "v2")
	if !strings.Contains(r.stdout, dead) || !strings.Contains(r.stdout, ns1+"  OK") {
		t.Errorf("write table with a dead server:\n%s", r.stdout)
	}
	if got := ok(t, "getKvConfig", "-n", ns1, "-s", "NS", "-k", "k2"); !strings.Contains(got, "v2") {
		t.Errorf("the reachable server missed the write: %q", got)
	}

	// A read skips the dead server and says which one answered.
	var doc struct {
		Namesrv string `json:"namesrv"`
	}
	okJSON(t, &doc, "topicList", "-n", dead+";"+ns2)
	if doc.Namesrv != ns2 {
		t.Errorf("read answered by %q, want %q", doc.Namesrv, ns2)
	}
}

func TestErrors(t *testing.T) {
	dead := remotingtest.FreeAddrs(t, 1)[0]
	fails(t, 1, []string{"nsadmin clusterList: no NameServer reachable: " + dead + ": "}, "clusterList", "-n", dead)
	fails(t, 1, []string{"nsadmin wipeWritePerm: " + dead + ": unreachable: "}, "wipeWritePerm", "-n", dead, "-b", "broker-a")
	fails(t, 2, []string{"missing required flag -n"}, "clusterList")
	fails(t, 2, []string{`bad -n address "nope": want host:port`}, "clusterList", "-n", "nope")
	fails(t, 2, []string{`bad -o "yaml"`}, "clusterList", "-n", dead, "-o", "yaml")
	fails(t, 2, []string{"flag provided but not defined: -x"}, "clusterList", "-n", dead, "-x", "1")
	fails(t, 2, []string{"flag needs an argument: -t"}, "topicRoute", "-n", dead, "-t")
	fails(t, 2, []string{`unexpected argument "extra"`}, "topicRoute", "-n", dead, "-t", "x", "extra")
	fails(t, 2, []string{"flag -t (topic) must not be empty"}, "topicRoute", "-n", dead, "-t", " ")
	fails(t, 2, []string{`invalid value "x" for flag -r`}, "registerTopic", "-n", dead, "-t", "x", "-b", "b", "-r", "x")
	fails(t, 2, []string{`unknown command "nope"`}, "nope")
	fails(t, 2, []string{`unknown command "nope"`}, "help", "nope")
}

// NAMESRV_ADDR stands in for -n, as with mqadmin.
func TestNamesrvAddrFromEnv(t *testing.T) {
	ns := startNS(t)
	var stdout, stderr bytes.Buffer
	env := func(k string) string {
		if k == "NAMESRV_ADDR" {
			return ns
		}
		return ""
	}
	if code := runPatient([]string{"topicList"}, &stdout, &stderr, env); code != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestHelp(t *testing.T) {
	out := ok(t, "help")
	for _, c := range commands() {
		if !strings.Contains(out, "\n  "+c.name+" ") {
			t.Errorf("help lacks %s", c.name)
		}
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}} {
			h := ok(t, args...)
			if !strings.HasPrefix(h, "nsadmin "+c.name+": ") || !strings.Contains(h, "JSON output (-o json):") {
				t.Errorf("nsadmin %q:\n%s", args, h)
			}
			for _, f := range c.allFlags() {
				want := "  --" + f.long
				switch {
				case f.short != "" && f.long != "":
					want = "  -" + f.short + ", --" + f.long
				case f.short != "":
					want = "  -" + f.short
				}
				if f.kind != switchFlag {
					want += " " + f.arg
				}
				if !strings.Contains(h, want) {
					t.Errorf("nsadmin %q lacks %q", args, want)
				}
			}
			if c.ctl == nil && !strings.Contains(h, "-n, --namesrvAddr addrs") {
				t.Errorf("nsadmin %q lacks --namesrvAddr", args)
			}
		}
	}
	if !strings.Contains(ok(t, "help", "wipeWritePerm"), "sent to every NameServer") ||
		!strings.Contains(ok(t, "help", "topicRoute"), "first reachable NameServer") {
		t.Error("help does not say where reads and writes go")
	}
	r := nsadmin(t)
	if r.code != 2 || !strings.Contains(r.stderr, "Commands:") {
		t.Errorf("no arguments: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		if got := ok(t, arg); !strings.HasPrefix(got, "nsadmin "+buildinfo.Version()+" (go") {
			t.Errorf("%s: %q", arg, got)
		}
	}
}
