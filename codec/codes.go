// Request and response codes of the remoting protocol, one line each: the
// constant, its number, and its Java name as the first word of the line
// comment. codes_gen.go derives the name lookups (RequestCodeName,
// ResponseCodeName, and language.go's) from these lines, so adding a code
// is adding its line here and running go generate; a test fails while
// codes_gen.go is stale.

package codec

//go:generate go run ./internal/gencodes

// Request codes, typed as int32 so they compare directly with
// Command.Code: the NameServer's (and the few it sends or tests use), then
// the controller port's.
//
//gencodes:request
const (
	SendMessage                   int32 = 10  // SEND_MESSAGE: a broker code; only used to exercise "not supported"
	PutKVConfig                   int32 = 100 // PUT_KV_CONFIG
	GetKVConfig                   int32 = 101 // GET_KV_CONFIG
	DeleteKVConfig                int32 = 102 // DELETE_KV_CONFIG
	RegisterBroker                int32 = 103 // REGISTER_BROKER
	UnregisterBroker              int32 = 104 // UNREGISTER_BROKER
	GetRouteInfoByTopic           int32 = 105 // GET_ROUTEINFO_BY_TOPIC
	GetBrokerClusterInfo          int32 = 106 // GET_BROKER_CLUSTER_INFO
	WipeWritePermOfBroker         int32 = 205 // WIPE_WRITE_PERM_OF_BROKER
	GetAllTopicListFromNameServer int32 = 206 // GET_ALL_TOPIC_LIST_FROM_NAMESERVER
	DeleteTopicInNamesrv          int32 = 216 // DELETE_TOPIC_IN_NAMESRV
	RegisterTopicInNamesrv        int32 = 217 // REGISTER_TOPIC_IN_NAMESRV
	GetKVListByNamespace          int32 = 219 // GET_KVLIST_BY_NAMESPACE
	GetTopicsByCluster            int32 = 224 // GET_TOPICS_BY_CLUSTER
	GetSystemTopicListFromNS      int32 = 304 // GET_SYSTEM_TOPIC_LIST_FROM_NS
	GetUnitTopicList              int32 = 311 // GET_UNIT_TOPIC_LIST
	GetHasUnitSubTopicList        int32 = 312 // GET_HAS_UNIT_SUB_TOPIC_LIST
	GetHasUnitSubUnUnitTopicList  int32 = 313 // GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST
	UpdateNamesrvConfig           int32 = 318 // UPDATE_NAMESRV_CONFIG
	GetNamesrvConfig              int32 = 319 // GET_NAMESRV_CONFIG
	QueryDataVersion              int32 = 322 // QUERY_DATA_VERSION
	AddWritePermOfBroker          int32 = 327 // ADD_WRITE_PERM_OF_BROKER
	GetBrokerMemberGroup          int32 = 901 // GET_BROKER_MEMBER_GROUP
	BrokerHeartbeat               int32 = 904 // BROKER_HEARTBEAT: also a controller code
	NotifyMinBrokerIDChange       int32 = 905 // NOTIFY_MIN_BROKER_ID_CHANGE: sent by the NameServer to brokers, never received

	// rocketns's own: far above every Java RequestCode (5.x's highest are
	// the pop codes, 3442-3543) and within the int16 code field of the
	// binary header. A Java NameServer answers it
	// REQUEST_CODE_NOT_SUPPORTED.
	GetRouteSnapshot int32 = 30001 // ROCKETNS_GET_ROUTE_SNAPSHOT: the route table as a route snapshot (core/routesnap), for a peer's warm start

	// The controller port's (RIP-44, the broker-id protocol of 5.1.1+),
	// besides BROKER_HEARTBEAT above. Codes 1014-1018 exist only as Java
	// JRaft log entries: a Java controller answers them with
	// REQUEST_CODE_NOT_SUPPORTED.
	ControllerAlterSyncStateSet  int32 = 1001 // CONTROLLER_ALTER_SYNC_STATE_SET
	ControllerElectMaster        int32 = 1002 // CONTROLLER_ELECT_MASTER
	ControllerRegisterBroker     int32 = 1003 // CONTROLLER_REGISTER_BROKER
	ControllerGetReplicaInfo     int32 = 1004 // CONTROLLER_GET_REPLICA_INFO
	ControllerGetMetadataInfo    int32 = 1005 // CONTROLLER_GET_METADATA_INFO
	ControllerGetSyncStateData   int32 = 1006 // CONTROLLER_GET_SYNC_STATE_DATA
	GetBrokerEpochCache          int32 = 1007 // GET_BROKER_EPOCH_CACHE: mqadmin -> broker
	NotifyBrokerRoleChanged      int32 = 1008 // NOTIFY_BROKER_ROLE_CHANGED: controller -> broker, oneway
	UpdateControllerConfig       int32 = 1009 // UPDATE_CONTROLLER_CONFIG
	GetControllerConfig          int32 = 1010 // GET_CONTROLLER_CONFIG
	CleanBrokerData              int32 = 1011 // CLEAN_BROKER_DATA
	ControllerGetNextBrokerID    int32 = 1012 // CONTROLLER_GET_NEXT_BROKER_ID
	ControllerApplyBrokerID      int32 = 1013 // CONTROLLER_APPLY_BROKER_ID
	BrokerCloseChannelRequest    int32 = 1014 // BROKER_CLOSE_CHANNEL_REQUEST
	CheckNotActiveBrokerRequest  int32 = 1015 // CHECK_NOT_ACTIVE_BROKER_REQUEST
	GetBrokerLiveInfoRequest     int32 = 1016 // GET_BROKER_LIVE_INFO_REQUEST
	GetSyncStateDataRequest      int32 = 1017 // GET_SYNC_STATE_DATA_REQUEST
	RaftBrokerHeartBeatEventCode int32 = 1018 // RAFT_BROKER_HEART_BEAT_EVENT_REQUEST
)

// Response codes: those a NameServer emits, then those a controller emits
// besides them.
//
//gencodes:response
const (
	Success                 int32 = 0    // SUCCESS
	SystemError             int32 = 1    // SYSTEM_ERROR
	SystemBusy              int32 = 2    // SYSTEM_BUSY
	RequestCodeNotSupported int32 = 3    // REQUEST_CODE_NOT_SUPPORTED
	NoPermission            int32 = 16   // NO_PERMISSION
	TopicNotExist           int32 = 17   // TOPIC_NOT_EXIST
	QueryNotFound           int32 = 22   // QUERY_NOT_FOUND
	GoAway                  int32 = 1500 // GO_AWAY

	ControllerFencedMasterEpoch          int32 = 2000 // CONTROLLER_FENCED_MASTER_EPOCH
	ControllerFencedSyncStateSetEpoch    int32 = 2001 // CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
	ControllerInvalidMaster              int32 = 2002 // CONTROLLER_INVALID_MASTER
	ControllerInvalidReplicas            int32 = 2003 // CONTROLLER_INVALID_REPLICAS
	ControllerMasterNotAvailable         int32 = 2004 // CONTROLLER_MASTER_NOT_AVAILABLE
	ControllerInvalidRequest             int32 = 2005 // CONTROLLER_INVALID_REQUEST
	ControllerBrokerNotAlive             int32 = 2006 // CONTROLLER_BROKER_NOT_ALIVE
	ControllerNotLeader                  int32 = 2007 // CONTROLLER_NOT_LEADER
	ControllerBrokerMetadataNotExist     int32 = 2008 // CONTROLLER_BROKER_METADATA_NOT_EXIST
	ControllerInvalidCleanBrokerMetadata int32 = 2009 // CONTROLLER_INVALID_CLEAN_BROKER_METADATA
	ControllerBrokerNeedToBeRegistered   int32 = 2010 // CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
	ControllerMasterStillExist           int32 = 2011 // CONTROLLER_MASTER_STILL_EXIST
	ControllerElectMasterFailed          int32 = 2012 // CONTROLLER_ELECT_MASTER_FAILED
	ControllerAlterSyncStateSetFailed    int32 = 2013 // CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
	ControllerBrokerIDInvalid            int32 = 2014 // CONTROLLER_BROKER_ID_INVALID
	ControllerJRaftInternalError         int32 = 2015 // CONTROLLER_JRAFT_INTERNAL_ERROR
	ControllerBrokerLiveInfoNotExists    int32 = 2016 // CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS
)
