// Golden-byte tests of the encoders against the fastjson output the
// protocol reference records.

package body

import (
	"cmp"
	"strings"
	"testing"
)

func specRoute() *TopicRoute {
	return &TopicRoute{
		BrokerDatas: []BrokerData{
			{
				Cluster: "DefaultCluster", BrokerName: "broker-a",
				Addrs: []BrokerAddr{{0, "192.168.0.1:10911"}, {1, "192.168.0.2:10911"}},
			},
			{
				Cluster: "DefaultCluster", BrokerName: "broker-b",
				Addrs:              []BrokerAddr{{0, "192.168.0.3:10911"}},
				ZoneName:           "zone-1",
				EnableActingMaster: true,
			},
		},
		QueueDatas: []QueueData{
			{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6},
			{BrokerName: "broker-b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6},
		},
		FilterServerTable: map[string][]string{},
	}
}

const (
	specBrokerDatasLegacy   = `"brokerDatas":[{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false},{"brokerAddrs":{0:"192.168.0.3:10911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":true,"zoneName":"zone-1"}]`
	specBrokerDatasStandard = `"brokerDatas":[{"brokerAddrs":{"0":"192.168.0.1:10911","1":"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false},{"brokerAddrs":{"0":"192.168.0.3:10911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":true,"zoneName":"zone-1"}]`
	specQueueDatas          = `"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},{"brokerName":"broker-b","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]`
	specMappingLegacy       = `{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"TopicTest","totalQueues":8}`
	specMappingStandard     = `{"bname":"broker-a","currIdMap":{"0":0,"1":1},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"TopicTest","totalQueues":8}`
)

func TestAppendTopicRouteSpec(t *testing.T) {
	t.Parallel()
	f := func(r *TopicRoute, d Dialect, want string) {
		t.Helper()
		got := string(AppendTopicRoute(nil, r, d))
		if got != want {
			t.Errorf("dialect %d:\ngot  %s\nwant %s", d, got, want)
		}
		// Appending keeps what dst already held.
		if got := string(AppendTopicRoute([]byte("x"), r, d)); got != "x"+want {
			t.Errorf("dialect %d: prefix lost: %s", d, got)
		}
	}
	r := specRoute()
	f(r, Legacy, `{`+specBrokerDatasLegacy+`,"filterServerTable":{},`+specQueueDatas+`}`)
	f(r, Standard, `{`+specBrokerDatasStandard+`,"filterServerTable":{},`+specQueueDatas+`}`)

	// A nil filter table is written as {} too.
	r.FilterServerTable = nil
	f(r, Legacy, `{`+specBrokerDatasLegacy+`,"filterServerTable":{},`+specQueueDatas+`}`)

	full := specRoute()
	full.FilterServerTable = map[string][]string{"192.168.0.1:10911": {"192.168.0.1:30000"}}
	full.OrderTopicConf = "broker-a:4;broker-b:4"
	full.MappingByBroker = map[string][]byte{"broker-a": []byte(specMappingStandard)}
	f(full, Legacy, `{`+specBrokerDatasLegacy+`,"filterServerTable":{"192.168.0.1:10911":["192.168.0.1:30000"]},"orderTopicConf":"broker-a:4;broker-b:4",`+specQueueDatas+`,"topicQueueMappingByBroker":{"broker-a":`+specMappingLegacy+`}}`)
	f(full, Standard, `{`+specBrokerDatasStandard+`,"filterServerTable":{"192.168.0.1:10911":["192.168.0.1:30000"]},"orderTopicConf":"broker-a:4;broker-b:4",`+specQueueDatas+`,"topicQueueMappingByBroker":{"broker-a":`+specMappingStandard+`}}`)

	// Stored in legacy form, the mapping still comes out right in both.
	full.MappingByBroker = map[string][]byte{"broker-a": []byte(specMappingLegacy)}
	f(full, Standard, `{`+specBrokerDatasStandard+`,"filterServerTable":{"192.168.0.1:10911":["192.168.0.1:30000"]},"orderTopicConf":"broker-a:4;broker-b:4",`+specQueueDatas+`,"topicQueueMappingByBroker":{"broker-a":`+specMappingStandard+`}}`)

	// An empty, non-nil mapping table is written; a broken entry is left out.
	full.MappingByBroker = map[string][]byte{"broker-a": []byte(`{"bname":`), "broker-b": []byte(`{}`)}
	f(full, Legacy, `{`+specBrokerDatasLegacy+`,"filterServerTable":{"192.168.0.1:10911":["192.168.0.1:30000"]},"orderTopicConf":"broker-a:4;broker-b:4",`+specQueueDatas+`,"topicQueueMappingByBroker":{"broker-b":{}}}`)
	full.MappingByBroker = map[string][]byte{}
	f(full, Legacy, `{`+specBrokerDatasLegacy+`,"filterServerTable":{"192.168.0.1:10911":["192.168.0.1:30000"]},"orderTopicConf":"broker-a:4;broker-b:4",`+specQueueDatas+`,"topicQueueMappingByBroker":{}}`)

	// The REGISTER_TOPIC_IN_NAMESRV shape (spec 4.9) with 5.x's enableActingMaster-free lists.
	f(&TopicRoute{BrokerDatas: []BrokerData{}, QueueDatas: []QueueData{{BrokerName: "broker-a", Perm: 6, ReadQueueNums: 8, WriteQueueNums: 8}}}, Legacy,
		`{"brokerDatas":[],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}`)
	f(&TopicRoute{}, Standard, `{"brokerDatas":[],"filterServerTable":{},"queueDatas":[]}`)
}

func TestAppendTopicRouteOrdering(t *testing.T) {
	t.Parallel()
	r := &TopicRoute{
		BrokerDatas: []BrokerData{{
			Cluster: "c", BrokerName: "b/ü",
			Addrs: []BrokerAddr{{2, "h2"}, {0, "h0"}, {1, "h1"}},
		}},
		FilterServerTable: map[string][]string{"z": {"1"}, "a": {"2", "3"}, "m": nil},
	}
	f := func(d Dialect, want string) {
		t.Helper()
		if got := string(AppendTopicRoute(nil, r, d)); got != want {
			t.Errorf("dialect %d:\ngot  %s\nwant %s", d, got, want)
		}
	}
	f(Legacy, `{"brokerDatas":[{"brokerAddrs":{0:"h0",1:"h1",2:"h2"},"brokerName":"b/ü","cluster":"c","enableActingMaster":false}],"filterServerTable":{"a":["2","3"],"m":[],"z":["1"]},"queueDatas":[]}`)
	f(Standard, `{"brokerDatas":[{"brokerAddrs":{"0":"h0","1":"h1","2":"h2"},"brokerName":"b\/\u00FC","cluster":"c","enableActingMaster":false}],"filterServerTable":{"a":["2","3"],"m":[],"z":["1"]},"queueDatas":[]}`)
	// The caller's slice is not reordered.
	if r.BrokerDatas[0].Addrs[0].ID != 2 {
		t.Fatalf("Addrs reordered: %v", r.BrokerDatas[0].Addrs)
	}
}

func TestAppendTopicRouteNoAlloc(t *testing.T) {
	r := specRoute()
	buf := make([]byte, 0, 2048)
	n := testing.AllocsPerRun(100, func() {
		buf = AppendTopicRoute(buf[:0], r, Legacy)
		buf = AppendTopicRoute(buf, r, Standard)
	})
	if n != 0 {
		t.Fatalf("allocations per run: %v, want 0", n)
	}
}

func TestAppendClusterInfoSpec(t *testing.T) {
	t.Parallel()
	f := func(ci *ClusterInfo, want string) {
		t.Helper()
		if got := string(AppendClusterInfo(nil, ci)); got != want {
			t.Errorf("\ngot  %s\nwant %s", got, want)
		}
	}
	r := specRoute()
	f(&ClusterInfo{
		Brokers:  []BrokerData{r.BrokerDatas[1], r.BrokerDatas[0]},
		Clusters: map[string][]string{"DefaultCluster": {"broker-b", "broker-a"}},
	}, `{"brokerAddrTable":{"broker-b":{"brokerAddrs":{0:"192.168.0.3:10911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":true,"zoneName":"zone-1"},"broker-a":{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-b","broker-a"]}}`)
	f(&ClusterInfo{}, `{"brokerAddrTable":{},"clusterAddrTable":{}}`)
	f(&ClusterInfo{Clusters: map[string][]string{"Z": {"b"}, "A": {"a"}}},
		`{"brokerAddrTable":{},"clusterAddrTable":{"A":["a"],"Z":["b"]}}`)
}

func TestAppendTopicList(t *testing.T) {
	t.Parallel()
	f := func(topics []string, addr, want string) {
		t.Helper()
		if got := string(AppendTopicList(nil, topics, addr)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f([]string{"TopicTest", "TBW102"}, "", `{"topicList":["TopicTest","TBW102"]}`)
	f([]string{"broker-a", "DefaultCluster"}, "192.168.0.1:10911", `{"brokerAddr":"192.168.0.1:10911","topicList":["broker-a","DefaultCluster"]}`)
	f(nil, "", `{"topicList":[]}`)
	f([]string{}, "", `{"topicList":[]}`)
}

func TestAppendKVTable(t *testing.T) {
	t.Parallel()
	f := func(table map[string]string, want string) {
		t.Helper()
		if got := string(AppendKVTable(nil, table)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f(map[string]string{"TopicOrder": "broker-a:4;broker-b:4"}, `{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}`)
	f(map[string]string{"k2": "v2 ünïcode", "k1": "v1"}, `{"table":{"k1":"v1","k2":"v2 ünïcode"}}`)
	f(nil, `{"table":{}}`)
}

func TestAppendDataVersion(t *testing.T) {
	t.Parallel()
	f := func(dv DataVersion, want string) {
		t.Helper()
		if got := string(AppendDataVersion(nil, dv)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f(DataVersion{Counter: 42, Timestamp: 1700000000123}, `{"counter":42,"stateVersion":0,"timestamp":1700000000123}`)
	f(DataVersion{}, `{"counter":0,"stateVersion":0,"timestamp":0}`)
	f(DataVersion{Counter: -1, StateVersion: 7, Timestamp: 1 << 62}, `{"counter":-1,"stateVersion":7,"timestamp":4611686018427387904}`)
}

func TestAppendBrokerMemberGroup(t *testing.T) {
	t.Parallel()
	f := func(cluster, name string, addrs []BrokerAddr, want string) {
		t.Helper()
		if got := string(AppendBrokerMemberGroup(nil, cluster, name, addrs)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	f("DefaultCluster", "broker-a", []BrokerAddr{{0, "192.168.0.1:10911"}, {1, "192.168.0.2:10911"}},
		`{"brokerMemberGroup":{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}`)
	f("c", "nosuch", nil, `{"brokerMemberGroup":{"brokerAddrs":{},"brokerName":"nosuch","cluster":"c"}}`)
	f("c", "b", []BrokerAddr{{3, "x"}, {1, "y"}, {1, "z"}},
		`{"brokerMemberGroup":{"brokerAddrs":{1:"y",1:"z",3:"x"},"brokerName":"b","cluster":"c"}}`)
}

// A static-topic mapping whose epoch is beyond 2^53-1, registered by a
// broker and sent back in a route: Java's legacy writer writes the long as
// a number, its standard one as a string.
func TestLegacyMappingBigLongStaysANumber(t *testing.T) {
	t.Parallel()
	const mapping = `{"bname":"broker-a","currIdMap":{0:0},"dirty":false,"epoch":9007199254740993,"scope":"__global__","topic":"S","totalQueues":1}`
	reg := `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"timestamp":1},"topicConfigTable":{},` +
		`"topicQueueMappingInfoMap":{"S":` + mapping + `}}}`
	rb, err := DecodeRegisterBroker([]byte(reg), false, 413)
	if err != nil {
		t.Fatal(err)
	}
	z, err := EncodeRegisterBroker(rb, true, 413)
	if err != nil {
		t.Fatal(err)
	}
	rbz, err := DecodeRegisterBroker(z, true, 413)
	if err != nil {
		t.Fatal(err)
	}
	for name, info := range map[string][]byte{"plain": rb.MappingInfo["S"], "compressed": rbz.MappingInfo["S"]} {
		r := &TopicRoute{MappingByBroker: map[string][]byte{"broker-a": info}}
		if got := string(AppendTopicRoute(nil, r, Legacy)); !strings.Contains(got, `"topicQueueMappingByBroker":{"broker-a":`+mapping+`}`) {
			t.Errorf("%s registration, legacy route: %s", name, got)
		}
		if got := string(AppendTopicRoute(nil, r, Standard)); !strings.Contains(got, `"epoch":"9007199254740993"`) {
			t.Errorf("%s registration, standard route: %s", name, got)
		}
	}
	// What a broker sends on is written back the same way.
	plain, err := EncodeRegisterBroker(rb, false, 413)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain), `"topicQueueMappingInfoMap":{"S":`+mapping+`}`) {
		t.Errorf("re-encoded registration: %s", plain)
	}
}

// Standard is fastjson with MapSortField: map keys go through a TreeMap,
// i.e. String.compareTo, which orders UTF-16 code units. A character above
// U+FFFF (surrogates from 0xD800) sorts before U+FF21; byte order puts it
// after.
func TestStandardMapKeysSortLikeJavaTreeMap(t *testing.T) {
	t.Parallel()
	m := []byte(`{"bname":"x","currIdMap":{},"dirty":false,"epoch":1,"scope":"__global__","topic":"T","totalQueues":1}`)
	r := &TopicRoute{
		FilterServerTable: map[string][]string{"\uFF21": {"a"}, "\U0001F600": {"b"}, "z": {"c"}},
		MappingByBroker:   map[string][]byte{"\uFF21": m, "\U0001F600": m},
	}
	got := string(AppendTopicRoute(nil, r, Standard))
	if !strings.Contains(got, `"filterServerTable":{"z":["c"],"\uD83D\uDE00":["b"],"\uFF21":["a"]}`) {
		t.Errorf("filterServerTable order differs from Java's TreeMap: %s", got)
	}
	if !strings.Contains(got, `"topicQueueMappingByBroker":{"\uD83D\uDE00":`) {
		t.Errorf("topicQueueMappingByBroker order differs from Java's TreeMap: %s", got)
	}
	if got := string(AppendKVTable(nil, map[string]string{"\uFF21": "1", "\U0001F600": "2"})); got != `{"table":{"😀":"2","Ａ":"1"}}` {
		t.Errorf("kv table: %s", got)
	}
}

func TestCompareUTF16(t *testing.T) {
	// Each key sorts strictly before the next, as String.compareTo has it.
	ordered := []string{"", "A", "AB", "B", "a", "\u00e9", "\u4e2d", "\U00010000", "\U0001F600", "\U0010FFFF", "\ue000", "\uff21", "\uff21a", "\ufffd", "\xff", "\xffa", "\ufffd\xff"}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := compareUTF16(a, b), cmp.Compare(i, j); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { compareUTF16("broker-\uFF21", "broker-\U0001F600") }); n != 0 {
		t.Errorf("%v allocations per comparison", n)
	}
}
