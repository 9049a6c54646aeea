// Tests of nsadmin diff against three in-process NameServers that agree,
// that miss a broker, that hold different queue data, and that cannot all be
// reached; and of the rule that drops a server failing part-way.

package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

type diffDoc struct {
	Namesrvs []string `json:"namesrvs"`
	Compared []string `json:"compared"`
	Errors   []struct {
		Namesrv string `json:"namesrv"`
		Error   string `json:"error"`
	} `json:"errors"`
	Clusters    int  `json:"clusters"`
	Brokers     int  `json:"brokers"`
	Topics      int  `json:"topics"`
	Identical   bool `json:"identical"`
	Differences []struct {
		Kind       string             `json:"kind"`
		Subject    string             `json:"subject"`
		Cluster    string             `json:"cluster"`
		BrokerName string             `json:"brokerName"`
		BrokerID   *int64             `json:"brokerId"`
		Topic      string             `json:"topic"`
		Values     map[string]*string `json:"values"`
	} `json:"differences"`
}

// diffJSONRun runs diff -o json and decodes the report.
func diffJSONRun(t *testing.T, wantCode int, args ...string) (diffDoc, result) {
	t.Helper()
	r := nsadmin(t, append([]string{"diff", "-o", "json"}, args...)...)
	if r.code != wantCode {
		t.Fatalf("diff %q: exit %d, want %d; stderr %q\n%s", args, r.code, wantCode, r.stderr, r.stdout)
	}
	var doc diffDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("diff %q: output is not JSON: %v\n%s", args, err, r.stdout)
	}
	return doc, r
}

// rows splits a diff table into whitespace-separated fields per line, so
// the test does not depend on the column widths the addresses cause.
func rows(out string) [][]string {
	var rs [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rs = append(rs, strings.Fields(l))
	}
	return rs
}

func TestDiffBrokerMissingOnOne(t *testing.T) {
	ns1, ns2, ns3 := startNS(t), startNS(t), startNS(t)
	registerBrokers(t, ns1)
	registerBrokers(t, ns2)
	list := ns1 + ";" + ns2 + ";" + ns3

	r := nsadmin(t, "diff", "-n", list, "-workers", "2")
	if r.code != exitFail || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q, want 1 and nothing on stderr", r.code, r.stderr)
	}
	want := [][]string{
		{"#Kind", "#Subject", "#" + ns1, "#" + ns2, "#" + ns3},
		{"cluster", "DefaultCluster", "broker-a", "broker-a", "-"},
		{"cluster", "OtherCluster", "broker-b", "broker-b", "-"},
		{"broker", "broker-a/0", "10.0.0.1:10911", "10.0.0.1:10911", "-"},
		{"broker", "broker-a/1", "10.0.0.2:10911", "10.0.0.2:10911", "-"},
		{"broker", "broker-b/0", "10.0.0.3:10911", "10.0.0.3:10911", "-"},
		{"topic", "TBW102", "broker-a,broker-b", "broker-a,broker-b", "-"},
		{"topic", "TopicB", "broker-b", "broker-b", "-"},
		{"topic", "TopicTest", "broker-a", "broker-a", "-"},
		{},
		strings.Fields("Compared 3 of 3 NameServers (2 clusters, 3 broker addresses, 3 topics): 8 differences."),
	}
	if got := rows(r.stdout); !reflect.DeepEqual(got, want) {
		t.Errorf("diff table:\n%s\nwant rows %q", r.stdout, want)
	}

	doc, _ := diffJSONRun(t, exitFail, "-n", list)
	if doc.Identical || len(doc.Errors) != 0 || !reflect.DeepEqual(doc.Compared, []string{ns1, ns2, ns3}) ||
		doc.Clusters != 2 || doc.Brokers != 3 || doc.Topics != 3 || len(doc.Differences) != 8 {
		t.Fatalf("diff json = %+v", doc)
	}
	b := doc.Differences[2]
	if b.Kind != "broker" || b.Subject != "broker-a/0" || b.Cluster != "DefaultCluster" || b.BrokerName != "broker-a" ||
		b.BrokerID == nil || *b.BrokerID != 0 || len(b.Values) != 3 ||
		b.Values[ns1] == nil || *b.Values[ns1] != "10.0.0.1:10911" || b.Values[ns3] != nil {
		t.Errorf("broker row = %+v", b)
	}
	if tp := doc.Differences[7]; tp.Kind != "topic" || tp.Topic != "TopicTest" || tp.Values[ns3] != nil || *tp.Values[ns2] != "broker-a" {
		t.Errorf("topic row = %+v", tp)
	}
	if !strings.Contains(r.stdout, "\n") || strings.Contains(r.stdout, "Not compared") {
		t.Errorf("unexpected table:\n%s", r.stdout)
	}
}

func TestDiffIdentical(t *testing.T) {
	ns1, ns2, ns3 := startNS(t), startNS(t), startNS(t)
	for _, ns := range []string{ns1, ns2, ns3} {
		registerBrokers(t, ns)
	}
	list := ns1 + ";" + ns2 + ";" + ns3
	if got := ok(t, "diff", "-n", list); got != "Compared 3 of 3 NameServers (2 clusters, 3 broker addresses, 3 topics): no differences.\n" {
		t.Errorf("identical servers: %q", got)
	}
	doc, _ := diffJSONRun(t, exitOK, "-n", list, "-workers", "1")
	if !doc.Identical || doc.Differences == nil || len(doc.Differences) != 0 || doc.Errors == nil || doc.Topics != 3 {
		t.Errorf("identical json = %+v", doc)
	}

	// Empty servers agree too.
	e1, e2 := startNS(t), startNS(t)
	if got := ok(t, "diff", "-n", e1+";"+e2); got != "Compared 2 of 2 NameServers (0 clusters, 0 broker addresses, 0 topics): no differences.\n" {
		t.Errorf("empty servers: %q", got)
	}
}

// registerOne registers broker c with two topics on ns and keeps the
// connection open for the test.
func registerOne(t *testing.T, ns string, b client.Broker, topics ...body.TopicConfig) {
	t.Helper()
	c, err := client.Dial(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Timestamp: 1700000000000, Counter: 1}, Topics: topics}
	if _, _, err := c.RegisterBroker(context.Background(), b, rb); err != nil {
		t.Fatal(err)
	}
}

func TestDiffQueuesClustersAndOrderConf(t *testing.T) {
	ns1, ns2 := startNS(t), startNS(t)
	registerBrokers(t, ns1)
	registerBrokers(t, ns2)
	list := ns1 + ";" + ns2

	// broker-a loses its write perm on ns1 only.
	ok(t, "wipeWritePerm", "-n", ns1, "-b", "broker-a")
	// The same broker-c address registered in two different clusters.
	tc := func(name string, q int32) body.TopicConfig {
		return body.TopicConfig{TopicName: name, ReadQueueNums: q, WriteQueueNums: q, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	}
	registerOne(t, ns1, client.Broker{Cluster: "ClusterX", Name: "broker-c", Addr: "10.0.0.9:10911"}, tc("TopicC", 2), tc("TopicD", 2))
	registerOne(t, ns2, client.Broker{Cluster: "ClusterY", Name: "broker-c", Addr: "10.0.0.9:10911"}, tc("TopicC", 2), tc("TopicD", 3))
	// An order config on one of them.
	ok(t, "updateNamesrvConfig", "-n", list, "-k", "orderMessageEnable", "-v", "true")
	ok(t, "updateKvConfig", "-n", ns2, "-s", client.NamespaceOrderTopicConfig, "-k", "TopicTest", "-v", "broker-a:4")

	doc, r := diffJSONRun(t, exitFail, "-n", list)
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}
	type row struct{ kind, subject, v1, v2 string }
	var got []row
	for _, d := range doc.Differences {
		s := func(p *string) string {
			if p == nil {
				return "<nil>"
			}
			return *p
		}
		got = append(got, row{d.Kind, d.Subject, s(d.Values[ns1]), s(d.Values[ns2])})
	}
	want := []row{
		{"cluster", "ClusterX", "broker-c", "<nil>"},
		{"cluster", "ClusterY", "<nil>", "broker-c"},
		{"brokerCluster", "broker-c", "ClusterX", "ClusterY"},
		{"queue", "TBW102 @ broker-a", "R-X(5) r8 w8", "RWX(7) r8 w8"},
		{"queue", "TopicD @ broker-c", "RW-(6) r2 w2", "RW-(6) r3 w3"},
		{"queue", "TopicTest @ broker-a", "R--(4) r4 w4", "RW-(6) r4 w4"},
		{"orderTopicConf", "TopicTest", "", "broker-a:4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("differences:\n%+v\nwant\n%+v", got, want)
	}
	if doc.Clusters != 4 || doc.Brokers != 4 || doc.Topics != 5 {
		t.Errorf("counts = %d clusters, %d brokers, %d topics", doc.Clusters, doc.Brokers, doc.Topics)
	}

	// The table shows an empty orderTopicConf as "" and the queue values
	// whole.
	out := nsadmin(t, "diff", "-n", list).stdout
	for _, line := range []string{"queue", "R--(4) r4 w4", "RW-(6) r4 w4", `""`, "broker-a:4", "7 differences."} {
		if !strings.Contains(out, line) {
			t.Errorf("table lacks %q:\n%s", line, out)
		}
	}
}

func TestDiffUnreachableAndRefusing(t *testing.T) {
	ns1, ns2, dead := startNS(t), startNS(t), remotingtest.FreeAddrs(t, 1)[0]
	registerBrokers(t, ns1)
	registerBrokers(t, ns2)

	// The reachable two are still compared; the dead one fails the command.
	r := fails(t, exitFail, []string{"nsadmin diff: " + dead + ": unreachable: "}, "diff", "-n", ns1+";"+dead+";"+ns2)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "Compared 2 of 3 NameServers (2 clusters, 3 broker addresses, 3 topics): no differences." ||
		!strings.HasPrefix(lines[1], "Not compared: "+dead+": unreachable: ") {
		t.Errorf("report with a dead server:\n%s", r.stdout)
	}
	doc, _ := diffJSONRun(t, exitFail, "-n", ns1+";"+dead+";"+ns2)
	if doc.Identical || len(doc.Errors) != 1 || doc.Errors[0].Namesrv != dead ||
		!strings.HasPrefix(doc.Errors[0].Error, "unreachable: ") || !reflect.DeepEqual(doc.Compared, []string{ns1, ns2}) {
		t.Errorf("json with a dead server = %+v", doc)
	}

	// 206 switched off on one server: it cannot be compared.
	ok(t, "updateNamesrvConfig", "-n", ns2, "-k", "enableAllTopicList", "-v", "false")
	r = fails(t, exitFail, []string{"nsadmin diff: " + ns2 + ": error code 1 (SYSTEM_ERROR): disable"}, "diff", "-n", ns1+";"+ns2)
	if !strings.HasPrefix(r.stdout, "Compared 1 of 2 NameServers") || !strings.Contains(r.stdout, "nothing compared") {
		t.Errorf("report with a refusing server:\n%s", r.stdout)
	}

	// Nobody answering: one stderr line per server.
	dead2 := remotingtest.FreeAddrs(t, 1)[0]
	for dead2 == dead {
		dead2 = remotingtest.FreeAddrs(t, 1)[0]
	}
	r = nsadmin(t, "diff", "-n", dead+";"+dead2)
	if r.code != exitFail || strings.Count(r.stderr, "\n") != 2 || !strings.Contains(r.stderr, dead2+": unreachable") ||
		!strings.HasPrefix(r.stdout, "Compared 0 of 2 NameServers (0 clusters, 0 broker addresses, 0 topics): nothing compared.\n") {
		t.Errorf("two dead servers: exit %d, stderr %q, stdout %q", r.code, r.stderr, r.stdout)
	}
}

func TestDiffUsage(t *testing.T) {
	ns := startNS(t)
	fails(t, exitUsage, []string{"diff needs at least two"}, "diff", "-n", ns)
	fails(t, exitUsage, []string{ns + " is listed twice"}, "diff", "-n", ns+";"+ns)
	fails(t, exitUsage, []string{"bad -workers 0"}, "diff", "-n", ns+";"+ns, "-workers", "0")
	fails(t, exitUsage, []string{"missing required flag -n"}, "diff")
}

// A server that fails part-way through the topics is left out, and what
// only it disagreed on is no difference.
func TestKeepDifferingDropsFailedServer(t *testing.T) {
	s := strPtr
	// Server 1 fails part-way.
	cands := []difference{
		// Only the failed server lacked T1; the live two differ on its queues.
		{kind: kindTopic, subject: "T1", topic: "T1", values: []*string{s("b"), nil, s("b")}},
		{kind: kindQueue, subject: "T1 @ b", topic: "T1", values: []*string{s("RW-(6) r4 w4"), nil, s("RW-(6) r8 w8")}},
		// Server 2 lacks T2; the queue data differ only on the failed one.
		{kind: kindTopic, subject: "T2", topic: "T2", values: []*string{s("b"), s("b"), nil}},
		{kind: kindQueue, subject: "T2 @ b", topic: "T2", values: []*string{s("RW-(6) r4 w4"), s("RW-(6) r8 w8"), nil}},
		// All have T3; only the failed server had other queue data.
		{kind: kindQueue, subject: "T3 @ b", topic: "T3", values: []*string{s("RW-(6) r4 w4"), s("R--(4) r4 w4"), s("RW-(6) r4 w4")}},
		// All have T4; server 2's route lacks group b.
		{kind: kindQueue, subject: "T4 @ b", topic: "T4", values: []*string{s("RW-(6) r4 w4"), nil, nil}},
		{kind: kindBroker, subject: "b/0", values: []*string{s("1.1.1.1:1"), s("1.1.1.1:1"), nil}},
	}
	got := keepDiffering(cands, []bool{true, false, true})
	var subjects []string
	for _, d := range got {
		subjects = append(subjects, d.subject)
		if d.values[1] != nil {
			t.Errorf("%s keeps the failed server's value", d.subject)
		}
	}
	if want := []string{"b/0", "T2", "T1 @ b", "T4 @ b"}; !reflect.DeepEqual(subjects, want) {
		t.Errorf("kept %q, want %q", subjects, want)
	}

	// With every server live, all rows stay, in report order.
	got = keepDiffering(cands, []bool{true, true, true})
	subjects = subjects[:0]
	for _, d := range got {
		subjects = append(subjects, d.subject)
	}
	if want := []string{"b/0", "T1", "T2", "T1 @ b", "T2 @ b", "T3 @ b", "T4 @ b"}; !reflect.DeepEqual(subjects, want) {
		t.Errorf("kept %q, want %q", subjects, want)
	}
}
