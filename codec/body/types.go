// types.go holds the Go shapes of the bodies and the two dialects.

package body

import "cmp"

// Dialect selects how a body is written.
type Dialect uint8

const (
	// Legacy is fastjson's default output: bare integer map keys
	// ({0:"127.0.0.1:10911"}), non-ASCII raw, '/' unescaped.
	Legacy Dialect = iota
	// Standard is fastjson with BrowserCompatible|MapSortField: quoted integer
	// keys, sorted map keys, non-ASCII as upper-case \uXXXX, '/' as "\/",
	// longs beyond +-2^53-1 as strings.
	Standard
)

// DataVersion is a broker's topic-config version. Equality is all three
// fields; a 4.x broker sends no stateVersion, which reads as 0.
type DataVersion struct {
	StateVersion int64
	Timestamp    int64
	Counter      int64
}

// TopicConfig is one entry of a broker's topicConfigTable.
type TopicConfig struct {
	TopicName       string
	ReadQueueNums   int32
	WriteQueueNums  int32
	Perm            int32
	TopicSysFlag    int32
	Order           bool
	TopicFilterType string
	Attributes      map[string]string
}

// RegisterBroker is a decoded REGISTER_BROKER body.
type RegisterBroker struct {
	// FilterServerList is nil when the registration leaves the broker's
	// filter servers alone (a pre-3.0.11 broker, or an explicit null) and
	// non-nil, possibly empty, when it sets them: a body without the key, or
	// no body, is an empty list, as in Java's RegisterBrokerBody.
	FilterServerList []string
	DataVersion      DataVersion
	// Topics keeps the body's order.
	Topics []TopicConfig
	// MappingInfo holds topicQueueMappingInfoMap entries (static topics,
	// 5.x) as compact JSON with quoted keys, Standard's string escapes and
	// numbers as sent (big longs are quoted only when Standard is written),
	// keyed by topic; nil when absent.
	MappingInfo map[string][]byte
}

// QueueData is one broker's queues of a topic.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// BrokerAddr is one brokerId -> address entry.
type BrokerAddr struct {
	ID   int64
	Addr string
}

// ByBrokerID orders addresses by broker id, the order Java's maps print.
func ByBrokerID(a, b BrokerAddr) int { return cmp.Compare(a.ID, b.ID) }

// BrokerData is one broker group (brokerName) with its addresses by id.
type BrokerData struct {
	Cluster    string
	BrokerName string
	// Addrs is sorted by ID ascending (Java's HashMap order for small Long
	// keys, and the order standard JSON sorts them into).
	Addrs              []BrokerAddr
	ZoneName           string // omitted when ""
	EnableActingMaster bool
}

// TopicRoute is the GET_ROUTEINFO_BY_TOPIC body.
type TopicRoute struct {
	BrokerDatas       []BrokerData
	QueueDatas        []QueueData
	FilterServerTable map[string][]string // brokerAddr -> filter servers; always written, {} when empty
	OrderTopicConf    string              // omitted when ""
	// MappingByBroker is topicQueueMappingByBroker: brokerName -> the
	// TopicQueueMappingInfo in the form of RegisterBroker.MappingInfo (any
	// JSON the encoder can re-encode will do); omitted when nil.
	MappingByBroker map[string][]byte
}

// ClusterInfo is the GET_BROKER_CLUSTER_INFO body.
type ClusterInfo struct {
	Brokers  []BrokerData        // brokerAddrTable, keyed by BrokerName on the wire
	Clusters map[string][]string // clusterAddrTable: cluster -> brokerNames
}
