// Decoder tests: spec examples and every relevant body recorded from a real
// Java 4.9.8 NameServer and its brokers.

package body

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

// vecFrame is a recorded frame with the header fields these tests need.
type vecFrame struct {
	codectest.Frame
	Code    int
	Version int32
	Opaque  int32
	Ext     map[string]any
	Payload []byte
}

func loadVectors(t testing.TB) []vecFrame {
	t.Helper()
	files, err := codectest.Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no vectors in %s", codectest.Dir())
	}
	var out []vecFrame
	for _, file := range files {
		frames, err := codectest.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			var h struct {
				Code      int            `json:"code"`
				Version   int32          `json:"version"`
				Opaque    int32          `json:"opaque"`
				ExtFields map[string]any `json:"extFields"`
			}
			if err := json.Unmarshal(fr.Header, &h); err != nil {
				t.Fatalf("%s seq %d: header: %v", fr.File, fr.Seq, err)
			}
			raw := fr.Raw()
			if len(raw) < 8+fr.HeaderLen+fr.BodyLen {
				t.Fatalf("%s seq %d: frame shorter than its lengths", fr.File, fr.Seq)
			}
			payload := raw[8+fr.HeaderLen:]
			out = append(out, vecFrame{Frame: fr, Code: h.Code, Version: h.Version, Opaque: h.Opaque, Ext: h.ExtFields, Payload: payload})
		}
	}
	return out
}

// exchange is a recorded request with its response (nil when none came).
type exchange struct {
	req, resp *vecFrame
}

func exchanges(frames []vecFrame) []exchange {
	type key struct {
		file   string
		conn   int
		opaque int32
	}
	pending := map[key]int{}
	var out []exchange
	for i := range frames {
		fr := &frames[i]
		k := key{fr.File, fr.Conn, fr.Opaque}
		if fr.Dir == "req" {
			pending[k] = len(out)
			out = append(out, exchange{req: fr})
			continue
		}
		if j, ok := pending[k]; ok && out[j].resp == nil {
			out[j].resp = fr
		}
	}
	return out
}

func extString(ext map[string]any, k string) string {
	if v, ok := ext[k].(string); ok {
		return v
	}
	return ""
}

// parseLoose parses JSON the way fastjson would accept it, for comparing
// documents regardless of dialect.
func parseLoose(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(Lenient(b)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("parse %s: %v", b, err)
	}
	return v
}

func TestDecodeRegisterBrokerVectors(t *testing.T) {
	codectest.SkipUnderRace(t)
	t.Parallel()
	seen := 0
	for _, fr := range loadVectors(t) {
		if fr.Dir != "req" || fr.Code != 103 {
			continue
		}
		seen++
		compressed := extString(fr.Ext, "compressed") == "true"
		rb, err := DecodeRegisterBroker(fr.Payload, compressed, fr.Version)
		if err != nil {
			t.Fatalf("%s seq %d: %v", fr.File, fr.Seq, err)
		}
		// Independent reading with encoding/json.
		var want struct {
			FilterServerList []string `json:"filterServerList"`
			W                struct {
				DataVersion struct {
					Counter, StateVersion, Timestamp int64
				} `json:"dataVersion"`
				TopicConfigTable map[string]json.RawMessage `json:"topicConfigTable"`
			} `json:"topicConfigSerializeWrapper"`
		}
		if err := json.Unmarshal(fr.Payload, &want); err != nil {
			t.Fatalf("%s seq %d: %v", fr.File, fr.Seq, err)
		}
		if len(rb.Topics) != len(want.W.TopicConfigTable) {
			t.Errorf("%s seq %d: %d topics, want %d", fr.File, fr.Seq, len(rb.Topics), len(want.W.TopicConfigTable))
		}
		wantDV := DataVersion{Counter: want.W.DataVersion.Counter, StateVersion: want.W.DataVersion.StateVersion, Timestamp: want.W.DataVersion.Timestamp}
		if rb.DataVersion != wantDV {
			t.Errorf("%s seq %d: DataVersion %+v, want %+v", fr.File, fr.Seq, rb.DataVersion, wantDV)
		}
		if rb.FilterServerList == nil || len(rb.FilterServerList) != len(want.FilterServerList) {
			t.Errorf("%s seq %d: FilterServerList %#v", fr.File, fr.Seq, rb.FilterServerList)
		}
		// Topics keep body order: the first key of the table comes first.
		if len(rb.Topics) > 0 {
			first := string(fr.Payload[bytes.Index(fr.Payload, []byte(`"topicConfigTable":{"`))+len(`"topicConfigTable":{"`):])
			first = first[:strings.IndexByte(first, '"')]
			if rb.Topics[0].TopicName != first {
				t.Errorf("%s seq %d: first topic %q, want %q", fr.File, fr.Seq, rb.Topics[0].TopicName, first)
			}
		}
		for _, tc := range rb.Topics {
			var w struct {
				TopicName                                         string
				ReadQueueNums, WriteQueueNums, Perm, TopicSysFlag int32
				Order                                             bool
				TopicFilterType                                   string
			}
			if err := json.Unmarshal(want.W.TopicConfigTable[tc.TopicName], &w); err != nil {
				t.Fatalf("%s seq %d topic %q: %v", fr.File, fr.Seq, tc.TopicName, err)
			}
			got := TopicConfig{TopicName: tc.TopicName, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums,
				Perm: tc.Perm, TopicSysFlag: tc.TopicSysFlag, Order: tc.Order, TopicFilterType: tc.TopicFilterType}
			exp := TopicConfig{TopicName: w.TopicName, ReadQueueNums: w.ReadQueueNums, WriteQueueNums: w.WriteQueueNums,
				Perm: w.Perm, TopicSysFlag: w.TopicSysFlag, Order: w.Order, TopicFilterType: w.TopicFilterType}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("%s seq %d: topic %+v, want %+v", fr.File, fr.Seq, got, exp)
			}
			if fr.Version >= 413 && tc.Attributes == nil {
				t.Errorf("%s seq %d: 5.x topic %q lost its attributes map", fr.File, fr.Seq, tc.TopicName)
			}
		}

		// Plain round trip keeps everything.
		enc, err := EncodeRegisterBroker(rb, false, fr.Version)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRegisterBroker(enc, false, fr.Version)
		if err != nil {
			t.Fatalf("%s seq %d: decode re-encoded: %v\n%s", fr.File, fr.Seq, err, enc)
		}
		if !reflect.DeepEqual(again, rb) {
			t.Errorf("%s seq %d: plain round trip differs:\n%+v\n%+v", fr.File, fr.Seq, again, rb)
		}
		// A 4.x broker's own bytes come back exactly but for stateVersion.
		if fr.Version < 413 {
			want := strings.Replace(string(fr.Payload), `"dataVersion":{"counter":`+strconv.FormatInt(rb.DataVersion.Counter, 10)+`,`,
				`"dataVersion":{"counter":`+strconv.FormatInt(rb.DataVersion.Counter, 10)+`,"stateVersion":0,`, 1)
			if !reflect.DeepEqual(parseLoose(t, enc), parseLoose(t, []byte(want))) {
				t.Errorf("%s seq %d: re-encoded body differs:\n%s\n%s", fr.File, fr.Seq, enc, want)
			}
		}

		// Compressed round trip keeps the route-relevant fields.
		for _, version := range []int32{fr.Version, 409, 413} {
			z, err := EncodeRegisterBroker(rb, true, version)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRegisterBroker(z, true, version)
			if err != nil {
				t.Fatalf("%s seq %d: compressed v%d: %v", fr.File, fr.Seq, version, err)
			}
			if got.DataVersion != rb.DataVersion || len(got.Topics) != len(rb.Topics) {
				t.Fatalf("%s seq %d: compressed v%d: %+v", fr.File, fr.Seq, version, got)
			}
			for i, tc := range rb.Topics {
				g := got.Topics[i]
				if g.TopicName != tc.TopicName || g.ReadQueueNums != tc.ReadQueueNums || g.WriteQueueNums != tc.WriteQueueNums ||
					g.Perm != tc.Perm || g.TopicFilterType != tc.TopicFilterType || g.TopicSysFlag != 0 || g.Order {
					t.Errorf("%s seq %d: compressed v%d topic %+v, want %+v", fr.File, fr.Seq, version, g, tc)
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("only %d REGISTER_BROKER requests found in the vectors", seen)
	}
}

func TestDecodeRouteVectors(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, ex := range exchanges(loadVectors(t)) {
		if ex.req.Code != 105 || ex.resp == nil || ex.resp.Code != 0 {
			continue
		}
		seen++
		name := ex.req.File + " seq " + strconv.Itoa(ex.req.Seq)
		recorded := ex.resp.Payload
		r, err := DecodeTopicRoute(recorded)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.BrokerDatas) == 0 || len(r.QueueDatas) == 0 || r.FilterServerTable == nil {
			t.Fatalf("%s: decoded %+v", name, r)
		}
		// 4.9.8 writes no enableActingMaster; rocketns always does (5.x).
		stripped := func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`,"enableActingMaster":false`), nil)
		}
		legacy := AppendTopicRoute(nil, r, Legacy)
		standard := AppendTopicRoute(nil, r, Standard)
		if !bytes.Contains(legacy, []byte(`"enableActingMaster":false`)) {
			t.Errorf("%s: enableActingMaster missing: %s", name, legacy)
		}
		want := parseLoose(t, recorded)
		for _, got := range [][]byte{legacy, standard} {
			if !reflect.DeepEqual(parseLoose(t, stripped(got)), want) {
				t.Errorf("%s: re-encoded route differs:\n%s\n%s", name, got, recorded)
			}
		}
		// And byte for byte in the dialect Java chose.
		same := legacy
		if bytes.Contains(recorded, []byte(`"brokerAddrs":{"`)) {
			same = standard
		}
		if !bytes.Equal(stripped(same), recorded) {
			t.Errorf("%s: bytes differ:\n%s\n%s", name, stripped(same), recorded)
		}
	}
	if seen < 10 {
		t.Fatalf("only %d route responses found", seen)
	}
}

func TestDecodeOtherResponseVectors(t *testing.T) {
	t.Parallel()
	counts := map[int]int{}
	for _, ex := range exchanges(loadVectors(t)) {
		if ex.resp == nil || ex.resp.Code != 0 || len(ex.resp.Payload) == 0 {
			continue
		}
		name := ex.req.File + " seq " + strconv.Itoa(ex.req.Seq)
		recorded := ex.resp.Payload
		var got []byte
		switch ex.req.Code {
		case 106:
			// Java's null list entry reads as "".
			recorded = bytes.ReplaceAll(recorded, []byte(`[null]`), []byte(`[""]`))
			ci, err := DecodeClusterInfo(recorded)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = bytes.ReplaceAll(AppendClusterInfo(nil, ci), []byte(`,"enableActingMaster":false`), nil)
		case 206, 224, 304, 311, 312, 313:
			topics, addr, err := DecodeTopicList(recorded)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = AppendTopicList(nil, topics, addr)
			// Java's null entry reads as "".
			recorded = bytes.ReplaceAll(recorded, []byte(`[null,`), []byte(`["",`))
			if !bytes.Equal(got, recorded) {
				t.Errorf("%s: topic list bytes differ:\n%s\n%s", name, got, recorded)
			}
		case 219, 103:
			table, err := DecodeKVTable(recorded)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = AppendKVTable(nil, table)
		case 322:
			dv, ok, err := DecodeDataVersion(recorded)
			if err != nil || !ok {
				t.Fatalf("%s: %v %v", name, ok, err)
			}
			// 4.9.8 has no stateVersion.
			got = bytes.Replace(AppendDataVersion(nil, dv), []byte(`,"stateVersion":0`), nil, 1)
			if !bytes.Equal(got, recorded) {
				t.Errorf("%s: data version bytes differ:\n%s\n%s", name, got, recorded)
			}
		default:
			continue
		}
		counts[ex.req.Code]++
		if !reflect.DeepEqual(parseLoose(t, got), parseLoose(t, recorded)) {
			t.Errorf("%s: re-encoded code %d body differs:\n%s\n%s", name, ex.req.Code, got, recorded)
		}
	}
	for _, code := range []int{106, 206, 224, 304, 311, 219, 322} {
		if counts[code] == 0 {
			t.Errorf("no response to code %d found in the vectors", code)
		}
	}
}

const spec47Head = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":42,"stateVersion":0,"timestamp":1700000000123},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000456},"topicConfigTable":{"UnitTopic":{"attributes":{"message.type":"FIFO"},"order":true,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"UnitTopic","topicSysFlag":3,"writeQueueNums":1},"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4},"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8}}`

var spec47Topics = []TopicConfig{
	{TopicName: "UnitTopic", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicSysFlag: 3, Order: true, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"message.type": "FIFO"}},
	{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}},
	{TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}},
}

func TestDecodeRegisterBrokerSpec(t *testing.T) {
	t.Parallel()
	f := func(body string, version int32, want *RegisterBroker) {
		t.Helper()
		got, err := DecodeRegisterBroker([]byte(body), false, version)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", body, got, want)
		}
	}
	dv := DataVersion{Counter: 42, Timestamp: 1700000000123}
	f(spec47Head+`,"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}`, 413,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: spec47Topics})

	// Static topic: bare integer keys in both mapping maps.
	f(spec47Head+`,"topicQueueMappingDetailMap":{"StaticTopic":{"bname":"broker-a","currIdMap":{},"dirty":false,"epoch":1700000000000,"hostedQueues":{0:[{"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":0,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}]},"scope":"__global__","topic":"StaticTopic","totalQueues":2}},"topicQueueMappingInfoMap":{"StaticTopic":{"bname":"broker-a","currIdMap":{0:0},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"StaticTopic","totalQueues":2}}}}`, 413,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: spec47Topics, MappingInfo: map[string][]byte{
			"StaticTopic": []byte(`{"bname":"broker-a","currIdMap":{"0":0},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"StaticTopic","totalQueues":2}`),
		}})

	// 4.x broker.
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":42,"timestamp":1700000000123},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}}`, 409,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		}})

	// Pre-3.0.11 broker: the bare wrapper, no filter server list.
	f(`{"dataVersion":{"counter":42,"timestamp":1700000000123},"topicConfigTable":{"TopicTest":{"perm":6,"readQueueNums":4,"topicName":"TopicTest","writeQueueNums":4}}}`, 36,
		&RegisterBroker{DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		}})

	// Missing fields take Java's TopicConfig defaults; the name comes from the key.
	f(`{"topicConfigSerializeWrapper":{"topicConfigTable":{"K\u00fc":{},"N":null,"P":{"perm":2,"unknown":[1,{"x":2}]}}}}`, 413,
		&RegisterBroker{FilterServerList: []string{}, Topics: []TopicConfig{
			{TopicName: "Kü", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "N", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "P", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 2, TopicFilterType: "SINGLE_TAG"},
		}})

	// No wrapper, no list: Java's RegisterBrokerBody keeps its empty list,
	// which clears the broker's filter servers; an explicit null leaves
	// them alone.
	f(`{}`, 413, &RegisterBroker{FilterServerList: []string{}})
	f(`{"filterServerList":null}`, 413, &RegisterBroker{})
	f(`{"filterServerList":["10.0.0.1:30000"],"topicConfigSerializeWrapper":null}`, 413, &RegisterBroker{FilterServerList: []string{"10.0.0.1:30000"}})

	// Whitespace anywhere is fine.
	f(" {\n \"filterServerList\" : [ ] ,\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":42,\"timestamp\":1700000000123}, \"topicConfigTable\" : { \"A\" : { \"topicName\" : \"A\" } } } } ", 409,
		&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: []TopicConfig{
			{TopicName: "A", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		}})
}

func TestDecodeRegisterBrokerEmpty(t *testing.T) {
	t.Parallel()
	// Java registers a bodiless request with an empty filter server list,
	// except from brokers older than 3.0.11, whose path passes none.
	for _, compressed := range []bool{false, true} {
		for _, b := range [][]byte{nil, {}} {
			for version, want := range map[int32]*RegisterBroker{409: {FilterServerList: []string{}}, 36: {}} {
				rb, err := DecodeRegisterBroker(b, compressed, version)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(rb, want) {
					t.Fatalf("empty body, version %d: %#v, want %#v", version, rb, want)
				}
			}
		}
	}
}

func TestDecodeRegisterBrokerMalformed(t *testing.T) {
	t.Parallel()
	f := func(body string) {
		t.Helper()
		if rb, err := DecodeRegisterBroker([]byte(body), false, 409); err == nil {
			t.Errorf("%q: no error, got %+v", body, rb)
		}
	}
	f(`{`)
	f(`[]`)
	f(`"x"`)
	f(`{"filterServerList":[1]}`)
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"topicConfigTable":[]}}`)
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"perm":"x"}}}}`)
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"perm":6}`)
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"a"}}}`)
	f(`{"filterServerList":[],"topicConfigSerializeWrapper":{"topicQueueMappingInfoMap":{"T":{"currIdMap":{0:}}}}}`)
	f(`{"filterServerList":[]}}`)
}

func TestEncodeRegisterBrokerSpec(t *testing.T) {
	t.Parallel()
	f := func(rb *RegisterBroker, version int32, want string) {
		t.Helper()
		got, err := EncodeRegisterBroker(rb, false, version)
		if err != nil || string(got) != want {
			t.Errorf("got  %s (%v)\nwant %s", got, err, want)
		}
	}
	dv := DataVersion{Counter: 42, Timestamp: 1700000000123}
	f(&RegisterBroker{FilterServerList: []string{}, DataVersion: dv, Topics: spec47Topics}, 413,
		strings.Replace(spec47Head, `"timestamp":1700000000456`, `"timestamp":0`, 1)+`,"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}`)
	f(&RegisterBroker{DataVersion: dv, Topics: []TopicConfig{{TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}}}, 409,
		`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":42,"stateVersion":0,"timestamp":1700000000123},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}}`)
	f(&RegisterBroker{DataVersion: dv}, 36, `{"dataVersion":{"counter":42,"stateVersion":0,"timestamp":1700000000123},"topicConfigTable":{}}`)
	f(&RegisterBroker{FilterServerList: []string{}, MappingInfo: map[string][]byte{"S": []byte(`{"currIdMap":{"0":0},"topic":"S"}`)}}, 413,
		`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"topicConfigTable":{},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{"S":{"currIdMap":{0:0},"topic":"S"}}}}`)
	if _, err := EncodeRegisterBroker(&RegisterBroker{MappingInfo: map[string][]byte{"S": []byte(`{`)}}, false, 413); err == nil {
		t.Error("broken mapping JSON encoded without error")
	}
}

func TestDecodeTopicRouteSpec(t *testing.T) {
	t.Parallel()
	full := specRoute()
	full.FilterServerTable = map[string][]string{"192.168.0.1:10911": {"192.168.0.1:30000"}}
	full.OrderTopicConf = "broker-a:4;broker-b:4"
	full.MappingByBroker = map[string][]byte{"broker-a": []byte(specMappingStandard)}
	for _, d := range []Dialect{Legacy, Standard} {
		b := AppendTopicRoute(nil, full, d)
		got, err := DecodeTopicRoute(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, full) {
			t.Errorf("dialect %d round trip:\ngot  %+v\nwant %+v", d, got, full)
		}
	}
	// The REGISTER_TOPIC_IN_NAMESRV body, and the pre-4.9 sys-flag spelling.
	got, err := DecodeTopicRoute([]byte(`{"brokerDatas":[],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSynFlag":2,"writeQueueNums":8}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &TopicRoute{FilterServerTable: map[string][]string{}, QueueDatas: []QueueData{{BrokerName: "broker-a", Perm: 6, ReadQueueNums: 8, WriteQueueNums: 8, TopicSysFlag: 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{``, `{`, `{"brokerDatas":{}}`, `{"brokerDatas":[{"brokerAddrs":{x:"a"}}]}`, `{"queueDatas":[{"perm":"6"}]}`} {
		if _, err := DecodeTopicRoute([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDecodeSmallBodies(t *testing.T) {
	t.Parallel()
	dv, ok, err := DecodeDataVersion([]byte(`{"counter":42,"stateVersion":3,"timestamp":1700000000123}`))
	if err != nil || !ok || dv != (DataVersion{Counter: 42, StateVersion: 3, Timestamp: 1700000000123}) {
		t.Errorf("DecodeDataVersion: %+v %v %v", dv, ok, err)
	}
	if _, ok, err := DecodeDataVersion(nil); ok || err != nil {
		t.Errorf("DecodeDataVersion(nil): %v %v", ok, err)
	}
	if _, _, err := DecodeDataVersion([]byte(`{"counter":`)); err == nil {
		t.Error("DecodeDataVersion accepted truncated JSON")
	}

	table, err := DecodeKVTable([]byte(`{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}`))
	if err != nil || !reflect.DeepEqual(table, map[string]string{"TopicOrder": "broker-a:4;broker-b:4"}) {
		t.Errorf("DecodeKVTable: %v %v", table, err)
	}
	if table, err := DecodeKVTable([]byte(`{}`)); err != nil || table == nil || len(table) != 0 {
		t.Errorf("DecodeKVTable({}): %v %v", table, err)
	}
	if _, err := DecodeKVTable([]byte(`{"table":[]}`)); err == nil {
		t.Error("DecodeKVTable accepted a list")
	}

	topics, addr, err := DecodeTopicList([]byte(`{"brokerAddr":"192.168.0.1:10911","topicList":["broker-a",null,"DefaultCluster"]}`))
	if err != nil || addr != "192.168.0.1:10911" || !reflect.DeepEqual(topics, []string{"broker-a", "", "DefaultCluster"}) {
		t.Errorf("DecodeTopicList: %q %q %v", topics, addr, err)
	}
	if _, _, err := DecodeTopicList([]byte(`{"topicList":"x"}`)); err == nil {
		t.Error("DecodeTopicList accepted a string")
	}

	ci, err := DecodeClusterInfo([]byte(`{"brokerAddrTable":{"broker-b":{"brokerAddrs":{0:"192.168.0.3:10911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":true,"zoneName":"zone-1"},"broker-a":{"brokerAddrs":{1:"192.168.0.2:10911",0:"192.168.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-b","broker-a"],"X":[null]}}`))
	r := specRoute()
	wantCI := &ClusterInfo{Brokers: []BrokerData{r.BrokerDatas[1], r.BrokerDatas[0]}, Clusters: map[string][]string{"DefaultCluster": {"broker-b", "broker-a"}, "X": {""}}}
	if err != nil || !reflect.DeepEqual(ci, wantCI) {
		t.Errorf("DecodeClusterInfo:\ngot  %+v (%v)\nwant %+v", ci, err, wantCI)
	}
	ci, err = DecodeClusterInfo([]byte(`{"brokerAddrTable":{},"clusterAddrTable":{}}`))
	if err != nil || len(ci.Brokers) != 0 || ci.Clusters == nil {
		t.Errorf("DecodeClusterInfo(empty): %+v %v", ci, err)
	}
	if _, err := DecodeClusterInfo([]byte(`{"brokerAddrTable":[]}`)); err == nil {
		t.Error("DecodeClusterInfo accepted a list")
	}
}

// The decoder reads the body in place (no defensive copy), so nothing it
// returns may alias the input: the server reuses that buffer for the next
// frame.
func TestDecodeRegisterBrokerOwnsItsStrings(t *testing.T) {
	t.Parallel()
	in := []byte(`{"filterServerList":["10.0.0.9:30000"],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":17},"topicConfigTable":{"TopicA":{"attributes":{"k":"v"},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicA","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingInfoMap":{"TopicA":{"bname":"broker-a","currIdMap":{0:0},"dirty":false,"epoch":1,"scope":"__global__","topic":"TopicA","totalQueues":1}}}}`)
	rb, err := DecodeRegisterBroker(in, false, 479)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x'
	}
	tc := rb.Topics[0]
	if tc.TopicName != "TopicA" || tc.TopicFilterType != "SINGLE_TAG" || tc.Attributes["k"] != "v" ||
		rb.FilterServerList[0] != "10.0.0.9:30000" || !bytes.Contains(rb.MappingInfo["TopicA"], []byte(`"bname":"broker-a"`)) {
		t.Fatalf("decoded values changed with the input buffer: %+v %q %s", tc, rb.FilterServerList, rb.MappingInfo["TopicA"])
	}
}

// The zlib layout's decoder owns what it returns too.
func TestDecodeCompressedRegisterBrokerOwnsItsStrings(t *testing.T) {
	t.Parallel()
	rb := &RegisterBroker{FilterServerList: []string{"10.0.0.9:30000"}, DataVersion: DataVersion{Counter: 3, Timestamp: 17},
		Topics:      []TopicConfig{{TopicName: "TopicA", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"}},
		MappingInfo: map[string][]byte{"TopicA": []byte(`{"bname":"broker-a","topic":"TopicA"}`)}}
	in, err := EncodeRegisterBroker(rb, true, 479)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRegisterBroker(in, true, 479)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x'
	}
	if got.Topics[0].TopicName != "TopicA" || got.FilterServerList[0] != "10.0.0.9:30000" ||
		!bytes.Contains(got.MappingInfo["TopicA"], []byte(`"bname":"broker-a"`)) {
		t.Fatalf("decoded values changed with the input buffer: %+v", got)
	}
}

func TestMappingBrokerName(t *testing.T) {
	t.Parallel()
	f := func(info, want string, wantOK bool) {
		t.Helper()
		got, ok := MappingBrokerName([]byte(info))
		if got != want || ok != wantOK {
			t.Errorf("MappingBrokerName(%s) = %q, %v; want %q, %v", info, got, ok, want, wantOK)
		}
	}
	f(`{"bname":"broker-a","currIdMap":{"0":0},"epoch":1}`, "broker-a", true)
	f(`{"epoch":1,"BName":"broker-b"}`, "broker-b", true)
	f(`{"bname":"x","bname":"y"}`, "y", true)
	f(`{"bname":"b\u00e9"}`, "bé", true)
	f(`{"bname":null,"topic":"T"}`, "", false)
	f(`{"bname":""}`, "", false)
	f(`{"bname":7}`, "", false)
	f(`{"topic":"T"}`, "", false)
	f(`not json`, "", false)
	f(`{"bname":"a",`, "", false)
}
