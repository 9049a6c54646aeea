// Decoders for the JSON bodies brokers and NameServers send, lenient the way
// fastjson is: bare integer keys, unknown fields and missing fields accepted.

package body

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/bytedance/sonic"
	"github.com/rocketns/rocketns/codec/jsontext"
)

// jsonAPI copies strings out of the input: decoded topic and broker names
// outlive the request buffer they came in (which the server reuses).
var jsonAPI = sonic.Config{CopyString: true}.Froze()

// versionV3_0_11 is the first broker version that wraps the topic table in
// a RegisterBrokerBody; older brokers send the bare wrapper.
const versionV3_0_11 = 37

// versionV5_0_0 is the first broker version whose compressed registration
// carries the static-topic mapping section.
const versionV5_0_0 = 413

type dataVersionJSON struct {
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
	Counter      int64 `json:"counter"`
}

func (v *dataVersionJSON) get() DataVersion {
	if v == nil {
		return DataVersion{}
	}
	return DataVersion{StateVersion: v.StateVersion, Timestamp: v.Timestamp, Counter: v.Counter}
}

// Java's TopicConfig constructor defaults, kept for fields a body omits.
const (
	defaultQueueNums  = 16
	defaultPerm       = 6 // PERM_READ | PERM_WRITE
	defaultFilterType = "SINGLE_TAG"
)

// topicTable decodes topicConfigTable keeping the body's order, which a Go
// map would lose. sonic has validated the object's syntax before handing it
// over; each record is then read field by field, which for 100k topics is
// several times faster than a reflective decode per record.
type topicTable []TopicConfig

func (t *topicTable) UnmarshalJSON(b []byte) error {
	if *t == nil {
		// A record takes at least ~100 bytes; this avoids most regrowth.
		*t = make([]TopicConfig, 0, len(b)/128+1)
	}
	it := memberIter{obj: b}
	for it.next() {
		*t = append(*t, TopicConfig{
			ReadQueueNums:   defaultQueueNums,
			WriteQueueNums:  defaultQueueNums,
			Perm:            defaultPerm,
			TopicFilterType: defaultFilterType,
		})
		tc := &(*t)[len(*t)-1]
		if err := decodeTopicConfig(it.val, tc); err != nil {
			return fmt.Errorf("topic %q: %w", it.key, err)
		}
		if tc.TopicName == "" {
			name, err := jsontext.Unquote(it.key)
			if err != nil {
				return fmt.Errorf("topic key %q: %w", it.key, err)
			}
			tc.TopicName = name
		}
	}
	return it.err
}

// decodeTopicConfig reads one TopicConfig JSON object into tc. Unknown
// fields and nulls are skipped, as fastjson does.
func decodeTopicConfig(obj []byte, tc *TopicConfig) error {
	it := memberIter{obj: obj}
	for it.next() {
		val := it.val
		if isNull(val) {
			continue
		}
		var err error
		switch string(it.key) {
		case "topicName":
			tc.TopicName, err = jsonString(val)
		case "readQueueNums":
			tc.ReadQueueNums, err = jsonInt32(val)
		case "writeQueueNums":
			tc.WriteQueueNums, err = jsonInt32(val)
		case "perm":
			tc.Perm, err = jsonInt32(val)
		case "topicSysFlag":
			tc.TopicSysFlag, err = jsonInt32(val)
		case "order":
			tc.Order, err = jsonBool(val)
		case "topicFilterType":
			// Every topic has one of two values: share them, copy nothing.
			switch string(val) {
			case `"SINGLE_TAG"`:
				tc.TopicFilterType = "SINGLE_TAG"
			case `"MULTI_TAG"`:
				tc.TopicFilterType = "MULTI_TAG"
			default:
				tc.TopicFilterType, err = jsonString(val)
			}
		case "attributes":
			if string(val) == "{}" {
				tc.Attributes = map[string]string{}
				continue
			}
			err = jsonAPI.Unmarshal(val, &tc.Attributes)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", it.key, err)
		}
	}
	return it.err
}

func jsonString(val []byte) (string, error) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", fmt.Errorf("want a string, got %.20q", val)
	}
	return jsontext.Unquote(val[1 : len(val)-1])
}

// jsonInt32 reads a Java int; like fastjson it also takes a quoted number.
func jsonInt32(val []byte) (int32, error) {
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		val = val[1 : len(val)-1]
	}
	v, err := parseInt32(val)
	if err != nil {
		return 0, fmt.Errorf("want an int, got %.20q", val)
	}
	return v, nil
}

func jsonBool(val []byte) (bool, error) {
	switch string(val) {
	case "true", `"true"`:
		return true, nil
	case "false", `"false"`:
		return false, nil
	}
	return false, fmt.Errorf("want a boolean, got %.20q", val)
}

// rawTable decodes an object of opaque objects (static-topic mappings) into
// their stored form (see compactStored) per key; it stays nil when the
// object is empty.
type rawTable map[string][]byte

func (t *rawTable) UnmarshalJSON(b []byte) error {
	return forEachMember(b, func(key, val []byte) error {
		if isNull(val) {
			return nil
		}
		name, err := jsontext.Unquote(key)
		if err != nil {
			return fmt.Errorf("mapping key %q: %w", key, err)
		}
		v, err := compactStored(val)
		if err != nil {
			return fmt.Errorf("mapping %q: %w", name, err)
		}
		if *t == nil {
			*t = make(rawTable)
		}
		(*t)[name] = v
		return nil
	})
}

// MappingBrokerName reads bname, the broker name a static-topic mapping
// belongs to, from a TopicQueueMappingInfo in its stored form
// (RegisterBroker.MappingInfo); ok is false when it has none, or an empty
// or non-string one, or does not parse. The key matches in any case, as
// fastjson's does; of repeated keys the last wins.
func MappingBrokerName(info []byte) (name string, ok bool) {
	err := forEachMember(info, func(key, val []byte) error {
		k, err := jsontext.Unquote(key)
		if err != nil || !strings.EqualFold(k, "bname") || isNull(val) {
			return err
		}
		name, err = jsonString(val)
		return err
	})
	if err != nil || name == "" {
		return "", false
	}
	return name, true
}

type topicConfigWrapperJSON struct {
	DataVersion              *dataVersionJSON `json:"dataVersion"`
	TopicConfigTable         topicTable       `json:"topicConfigTable"`
	TopicQueueMappingInfoMap rawTable         `json:"topicQueueMappingInfoMap"`
}

type registerBrokerJSON struct {
	FilterServerList []string                `json:"filterServerList"`
	Wrapper          *topicConfigWrapperJSON `json:"topicConfigSerializeWrapper"`
}

// DecodeRegisterBroker decodes a REGISTER_BROKER body sent with the given
// request version and header flag compressed.
//
// Brokers older than 3.0.11 (version < 37) send the bare topic-config
// wrapper; an empty body yields no topics and a zero DataVersion, as Java's
// processor does. compressed selects the zlib layout (see
// decodeCompressed). The result never aliases b. Topics keep body order;
// duplicates are kept as they come, so a caller storing them in a map ends
// with the last one, as Java's map would. A record without a topicName
// (or with an empty one) is named by its map key; fields a record omits
// take Java's TopicConfig defaults (16/16 queues, perm 6, SINGLE_TAG).
// MappingInfo holds each topicQueueMappingInfoMap value re-encoded in the
// stored form of compactStored (bare keys quoted), nil when there is none;
// topicQueueMappingDetailMap is skipped, the NameServer never reads it.
func DecodeRegisterBroker(b []byte, compressed bool, version int32) (*RegisterBroker, error) {
	return DecodeRegisterBrokerMax(b, compressed, version, MaxInflated)
}

// DecodeRegisterBrokerMax is DecodeRegisterBroker with the bound on what a
// compressed body's sections may inflate to (at most MaxInflated). The
// server passes its frame limit: the compressed layout is so dense (a topic
// record can be 20 bytes) that a body of a few hundred KB could otherwise
// carry millions of topics, far more than an uncompressed frame may.
func DecodeRegisterBrokerMax(b []byte, compressed bool, version int32, maxInflated int) (*RegisterBroker, error) {
	return DecodeRegisterBrokerBounded(b, compressed, version, maxInflated, 0)
}

// TooManyTopicsError refuses a registration body listing more topics than
// the bound the decoder was given.
type TooManyTopicsError struct{ Count, Max int }

func (e *TooManyTopicsError) Error() string {
	return fmt.Sprintf("%d topics in one registration, more than the limit of %d", e.Count, e.Max)
}

// DecodeRegisterBrokerBounded is DecodeRegisterBrokerMax refusing a body of
// more than maxTopics topics (0: no bound) with a *TooManyTopicsError. A
// compressed body is refused on its declared count, before any record is
// read: its dense layout is what lets a small body carry hundreds of
// thousands of topics. An uncompressed one is bounded by the frame limit
// and counted once decoded.
func DecodeRegisterBrokerBounded(b []byte, compressed bool, version int32, maxInflated, maxTopics int) (*RegisterBroker, error) {
	if len(b) == 0 {
		// Java's processor registers a bodiless request with a fresh
		// RegisterBrokerBody, whose filter server list is empty (and so
		// clears the broker's); brokers older than 3.0.11 go through its
		// old path, which passes no list at all.
		if version >= versionV3_0_11 {
			return &RegisterBroker{FilterServerList: []string{}}, nil
		}
		return &RegisterBroker{}, nil
	}
	if compressed {
		rb, _, err := decodeCompressedTopics(b, version, min(maxInflated, MaxInflated), maxTopics)
		return rb, err
	}
	b = Lenient(b)
	var w *topicConfigWrapperJSON
	rb := &RegisterBroker{}
	if version < versionV3_0_11 {
		w = new(topicConfigWrapperJSON)
		if err := unmarshalNoCopy(b, w); err != nil {
			return nil, fmt.Errorf("decode topic config wrapper: %w", err)
		}
	} else {
		// RegisterBrokerBody's list starts empty: a body without the key
		// clears the broker's filter servers in Java, only an explicit
		// null leaves them.
		body := registerBrokerJSON{FilterServerList: []string{}}
		if err := unmarshalNoCopy(b, &body); err != nil {
			return nil, fmt.Errorf("decode register broker body: %w", err)
		}
		rb.FilterServerList = body.FilterServerList
		w = body.Wrapper
	}
	if w != nil {
		rb.DataVersion = w.DataVersion.get()
		rb.Topics = w.TopicConfigTable
		if len(w.TopicQueueMappingInfoMap) > 0 {
			rb.MappingInfo = w.TopicQueueMappingInfoMap
		}
	}
	if maxTopics > 0 && len(rb.Topics) > maxTopics {
		return nil, &TooManyTopicsError{Count: len(rb.Topics), Max: maxTopics}
	}
	return rb, nil
}

// unmarshalNoCopy decodes b without the copy of the whole input that
// sonic's Unmarshal([]byte) makes to protect the caller's buffer: for a
// 100k-topic registration that copy was a fifth of the server's CPU. It is
// safe because jsonAPI copies every string it decodes (CopyString) and the
// topic-table reader copies what it keeps, so nothing aliases b afterwards.
func unmarshalNoCopy(b []byte, v any) error {
	if len(b) == 0 {
		return jsonAPI.Unmarshal(b, v)
	}
	return jsonAPI.UnmarshalFromString(unsafe.String(&b[0], len(b)), v)
}

// DecodeDataVersion decodes a DataVersion body; ok is false when b is
// empty (Java then treats the version as changed).
func DecodeDataVersion(b []byte) (dv DataVersion, ok bool, err error) {
	if len(b) == 0 {
		return DataVersion{}, false, nil
	}
	var v dataVersionJSON
	if err := jsonAPI.Unmarshal(b, &v); err != nil {
		return DataVersion{}, false, fmt.Errorf("decode data version: %w", err)
	}
	return v.get(), true, nil
}

type brokerDataJSON struct {
	Cluster            string           `json:"cluster"`
	BrokerName         string           `json:"brokerName"`
	BrokerAddrs        map[int64]string `json:"brokerAddrs"`
	ZoneName           string           `json:"zoneName"`
	EnableActingMaster bool             `json:"enableActingMaster"`
}

func (b *brokerDataJSON) get() BrokerData {
	bd := BrokerData{
		Cluster:            b.Cluster,
		BrokerName:         b.BrokerName,
		ZoneName:           b.ZoneName,
		EnableActingMaster: b.EnableActingMaster,
	}
	if len(b.BrokerAddrs) > 0 {
		bd.Addrs = make([]BrokerAddr, 0, len(b.BrokerAddrs))
		for id, addr := range b.BrokerAddrs {
			bd.Addrs = append(bd.Addrs, BrokerAddr{ID: id, Addr: addr})
		}
		slices.SortFunc(bd.Addrs, ByBrokerID)
	}
	return bd
}

type queueDataJSON struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           int32  `json:"perm"`
	TopicSysFlag   *int32 `json:"topicSysFlag"`
	// TopicSynFlag is the spelling of NameServers up to 4.8.0.
	TopicSynFlag *int32 `json:"topicSynFlag"`
}

type topicRouteJSON struct {
	BrokerDatas       []brokerDataJSON    `json:"brokerDatas"`
	QueueDatas        []queueDataJSON     `json:"queueDatas"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
	OrderTopicConf    string              `json:"orderTopicConf"`
	MappingByBroker   rawTable            `json:"topicQueueMappingByBroker"`
}

// DecodeTopicRoute decodes a TopicRouteData body in either dialect (also
// the REGISTER_TOPIC_IN_NAMESRV body). Broker addresses come out sorted by
// id; MappingByBroker values are in the stored form of compactStored. The
// result never aliases b.
func DecodeTopicRoute(b []byte) (*TopicRoute, error) {
	var v topicRouteJSON
	if err := jsonAPI.Unmarshal(Lenient(b), &v); err != nil {
		return nil, fmt.Errorf("decode topic route: %w", err)
	}
	r := &TopicRoute{
		FilterServerTable: v.FilterServerTable,
		OrderTopicConf:    v.OrderTopicConf,
		MappingByBroker:   v.MappingByBroker,
	}
	if len(v.BrokerDatas) > 0 {
		r.BrokerDatas = make([]BrokerData, len(v.BrokerDatas))
		for i := range v.BrokerDatas {
			r.BrokerDatas[i] = v.BrokerDatas[i].get()
		}
	}
	if len(v.QueueDatas) > 0 {
		r.QueueDatas = make([]QueueData, len(v.QueueDatas))
		for i, q := range v.QueueDatas {
			r.QueueDatas[i] = QueueData{
				BrokerName:     q.BrokerName,
				ReadQueueNums:  q.ReadQueueNums,
				WriteQueueNums: q.WriteQueueNums,
				Perm:           q.Perm,
			}
			switch {
			case q.TopicSysFlag != nil:
				r.QueueDatas[i].TopicSysFlag = *q.TopicSysFlag
			case q.TopicSynFlag != nil:
				r.QueueDatas[i].TopicSysFlag = *q.TopicSynFlag
			}
		}
	}
	return r, nil
}

// DecodeKVTable decodes {"table":{...}}; a missing table gives an empty,
// non-nil map.
func DecodeKVTable(b []byte) (map[string]string, error) {
	var v struct {
		Table map[string]string `json:"table"`
	}
	if err := jsonAPI.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("decode kv table: %w", err)
	}
	if v.Table == nil {
		v.Table = map[string]string{}
	}
	return v.Table, nil
}

// brokerTable decodes brokerAddrTable keeping the body's order.
type brokerTable []BrokerData

func (t *brokerTable) UnmarshalJSON(b []byte) error {
	return forEachMember(b, func(key, val []byte) error {
		var bd brokerDataJSON
		if err := jsonAPI.Unmarshal(val, &bd); err != nil {
			return fmt.Errorf("broker %q: %w", key, err)
		}
		if bd.BrokerName == "" {
			// A broker registered without a name is keyed null by Java.
			if name, err := jsontext.Unquote(key); err == nil && string(key) != "null" {
				bd.BrokerName = name
			}
		}
		*t = append(*t, bd.get())
		return nil
	})
}

// DecodeClusterInfo decodes a GET_BROKER_CLUSTER_INFO body. Brokers keep
// the body's order; Clusters is never nil.
func DecodeClusterInfo(b []byte) (*ClusterInfo, error) {
	var v struct {
		BrokerAddrTable  brokerTable         `json:"brokerAddrTable"`
		ClusterAddrTable map[string][]string `json:"clusterAddrTable"`
	}
	if err := jsonAPI.Unmarshal(Lenient(b), &v); err != nil {
		return nil, fmt.Errorf("decode cluster info: %w", err)
	}
	if v.ClusterAddrTable == nil {
		v.ClusterAddrTable = map[string][]string{}
	}
	return &ClusterInfo{Brokers: v.BrokerAddrTable, Clusters: v.ClusterAddrTable}, nil
}

// DecodeTopicList decodes a TopicList body into its topics and brokerAddr
// ("" when absent). A null entry (Java lists may hold one) reads as "".
func DecodeTopicList(b []byte) (topics []string, brokerAddr string, err error) {
	var v struct {
		TopicList  []string `json:"topicList"`
		BrokerAddr string   `json:"brokerAddr"`
	}
	if err := jsonAPI.Unmarshal(b, &v); err != nil {
		return nil, "", fmt.Errorf("decode topic list: %w", err)
	}
	return v.TopicList, v.BrokerAddr, nil
}

// parseInt32 parses a decimal Java int without allocating.
func parseInt32(s []byte) (int32, error) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 10 {
		return 0, errBadInt
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errBadInt
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, errBadInt
	}
	return int32(v), nil
}

var errBadInt = errors.New("not a 32-bit integer")
