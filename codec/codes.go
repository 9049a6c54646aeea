// Request, response and language codes of the remoting protocol.

package codec

// Request codes the NameServer handles (and the few it sends or tests use).
// Typed as int32 so they compare directly with Command.Code.
const (
	SendMessage int32 = 10 // a broker code; only used to exercise "not supported"

	PutKVConfig                   int32 = 100
	GetKVConfig                   int32 = 101
	DeleteKVConfig                int32 = 102
	RegisterBroker                int32 = 103
	UnregisterBroker              int32 = 104
	GetRouteInfoByTopic           int32 = 105
	GetBrokerClusterInfo          int32 = 106
	WipeWritePermOfBroker         int32 = 205
	GetAllTopicListFromNameServer int32 = 206
	DeleteTopicInNamesrv          int32 = 216
	RegisterTopicInNamesrv        int32 = 217
	GetKVListByNamespace          int32 = 219
	GetTopicsByCluster            int32 = 224
	GetSystemTopicListFromNS      int32 = 304
	GetUnitTopicList              int32 = 311
	GetHasUnitSubTopicList        int32 = 312
	GetHasUnitSubUnUnitTopicList  int32 = 313
	UpdateNamesrvConfig           int32 = 318
	GetNamesrvConfig              int32 = 319
	QueryDataVersion              int32 = 322
	AddWritePermOfBroker          int32 = 327
	GetBrokerMemberGroup          int32 = 901
	BrokerHeartbeat               int32 = 904
	// NotifyMinBrokerIDChange is sent by the NameServer to brokers, never
	// received by it.
	NotifyMinBrokerIDChange int32 = 905
)

// Response codes a NameServer emits.
const (
	Success                 int32 = 0
	SystemError             int32 = 1
	SystemBusy              int32 = 2
	RequestCodeNotSupported int32 = 3
	NoPermission            int32 = 16
	TopicNotExist           int32 = 17
	QueryNotFound           int32 = 22
	GoAway                  int32 = 1500
)

// RequestCodeName is the Java RequestCode constant name of a request code,
// for logs and metric labels (a fixed set, so it is safe as a label). Codes
// outside the table give "UNKNOWN".
func RequestCodeName(code int32) string {
	switch code {
	case SendMessage:
		return "SEND_MESSAGE"
	case PutKVConfig:
		return "PUT_KV_CONFIG"
	case GetKVConfig:
		return "GET_KV_CONFIG"
	case DeleteKVConfig:
		return "DELETE_KV_CONFIG"
	case RegisterBroker:
		return "REGISTER_BROKER"
	case UnregisterBroker:
		return "UNREGISTER_BROKER"
	case GetRouteInfoByTopic:
		return "GET_ROUTEINFO_BY_TOPIC"
	case GetBrokerClusterInfo:
		return "GET_BROKER_CLUSTER_INFO"
	case WipeWritePermOfBroker:
		return "WIPE_WRITE_PERM_OF_BROKER"
	case GetAllTopicListFromNameServer:
		return "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"
	case DeleteTopicInNamesrv:
		return "DELETE_TOPIC_IN_NAMESRV"
	case RegisterTopicInNamesrv:
		return "REGISTER_TOPIC_IN_NAMESRV"
	case GetKVListByNamespace:
		return "GET_KVLIST_BY_NAMESPACE"
	case GetTopicsByCluster:
		return "GET_TOPICS_BY_CLUSTER"
	case GetSystemTopicListFromNS:
		return "GET_SYSTEM_TOPIC_LIST_FROM_NS"
	case GetUnitTopicList:
		return "GET_UNIT_TOPIC_LIST"
	case GetHasUnitSubTopicList:
		return "GET_HAS_UNIT_SUB_TOPIC_LIST"
	case GetHasUnitSubUnUnitTopicList:
		return "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST"
	case UpdateNamesrvConfig:
		return "UPDATE_NAMESRV_CONFIG"
	case GetNamesrvConfig:
		return "GET_NAMESRV_CONFIG"
	case QueryDataVersion:
		return "QUERY_DATA_VERSION"
	case AddWritePermOfBroker:
		return "ADD_WRITE_PERM_OF_BROKER"
	case GetBrokerMemberGroup:
		return "GET_BROKER_MEMBER_GROUP"
	case BrokerHeartbeat:
		return "BROKER_HEARTBEAT"
	case NotifyMinBrokerIDChange:
		return "NOTIFY_MIN_BROKER_ID_CHANGE"
	}
	return "UNKNOWN"
}

// LanguageCode bytes (LanguageJava is in command.go). JSON headers carry the
// name, binary headers the byte.
const (
	LanguageCPP    byte = 1
	LanguageDotNet byte = 2
	LanguagePython byte = 3
	LanguageDelphi byte = 4
	LanguageErlang byte = 5
	LanguageRuby   byte = 6
	LanguageOther  byte = 7
	LanguageHTTP   byte = 8
	LanguageGo     byte = 9
	LanguagePHP    byte = 10
	LanguageOMS    byte = 11
	LanguageRust   byte = 12
	LanguageNodeJS byte = 13 // 5.x only

	// LanguageUnknown stands for a name or byte Java would parse to a null
	// LanguageCode. Java does not reject such a header, so neither do we.
	LanguageUnknown byte = 0xFF
)

// LanguageName returns the enum name of a LanguageCode byte; ok is false for
// bytes outside the enum.
func LanguageName(b byte) (name string, ok bool) {
	switch b {
	case LanguageJava:
		return "JAVA", true
	case LanguageCPP:
		return "CPP", true
	case LanguageDotNet:
		return "DOTNET", true
	case LanguagePython:
		return "PYTHON", true
	case LanguageDelphi:
		return "DELPHI", true
	case LanguageErlang:
		return "ERLANG", true
	case LanguageRuby:
		return "RUBY", true
	case LanguageOther:
		return "OTHER", true
	case LanguageHTTP:
		return "HTTP", true
	case LanguageGo:
		return "GO", true
	case LanguagePHP:
		return "PHP", true
	case LanguageOMS:
		return "OMS", true
	case LanguageRust:
		return "RUST", true
	case LanguageNodeJS:
		return "NODE_JS", true
	}
	return "", false
}

// LanguageByName maps an enum name to its byte, LanguageUnknown when the
// name is not in the enum (names are case-sensitive, as Enum.valueOf is).
func LanguageByName(name string) byte {
	switch name {
	case "JAVA":
		return LanguageJava
	case "CPP":
		return LanguageCPP
	case "DOTNET":
		return LanguageDotNet
	case "PYTHON":
		return LanguagePython
	case "DELPHI":
		return LanguageDelphi
	case "ERLANG":
		return LanguageErlang
	case "RUBY":
		return LanguageRuby
	case "OTHER":
		return LanguageOther
	case "HTTP":
		return LanguageHTTP
	case "GO":
		return LanguageGo
	case "PHP":
		return LanguagePHP
	case "OMS":
		return LanguageOMS
	case "RUST":
		return LanguageRust
	case "NODE_JS":
		return LanguageNodeJS
	}
	return LanguageUnknown
}
