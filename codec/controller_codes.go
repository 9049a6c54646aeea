// Request and response codes of the RocketMQ 5.x controller protocol.

package codec

// Request codes of the controller port (RIP-44, the broker-id protocol of
// 5.1.1+). BROKER_HEARTBEAT (904) is shared with the NameServer and lives
// in codes.go. Codes 1014-1018 exist only as Java JRaft log entries: a Java
// controller answers them with REQUEST_CODE_NOT_SUPPORTED.
const (
	ControllerAlterSyncStateSet  int32 = 1001
	ControllerElectMaster        int32 = 1002
	ControllerRegisterBroker     int32 = 1003
	ControllerGetReplicaInfo     int32 = 1004
	ControllerGetMetadataInfo    int32 = 1005
	ControllerGetSyncStateData   int32 = 1006
	GetBrokerEpochCache          int32 = 1007 // mqadmin -> broker
	NotifyBrokerRoleChanged      int32 = 1008 // controller -> broker, oneway
	UpdateControllerConfig       int32 = 1009
	GetControllerConfig          int32 = 1010
	CleanBrokerData              int32 = 1011
	ControllerGetNextBrokerID    int32 = 1012
	ControllerApplyBrokerID      int32 = 1013
	BrokerCloseChannelRequest    int32 = 1014
	CheckNotActiveBrokerRequest  int32 = 1015
	GetBrokerLiveInfoRequest     int32 = 1016
	GetSyncStateDataRequest      int32 = 1017
	RaftBrokerHeartBeatEventCode int32 = 1018
)

// Response codes a controller emits besides the common ones of codes.go.
const (
	ControllerFencedMasterEpoch          int32 = 2000
	ControllerFencedSyncStateSetEpoch    int32 = 2001
	ControllerInvalidMaster              int32 = 2002
	ControllerInvalidReplicas            int32 = 2003
	ControllerMasterNotAvailable         int32 = 2004
	ControllerInvalidRequest             int32 = 2005
	ControllerBrokerNotAlive             int32 = 2006
	ControllerNotLeader                  int32 = 2007
	ControllerBrokerMetadataNotExist     int32 = 2008
	ControllerInvalidCleanBrokerMetadata int32 = 2009
	ControllerBrokerNeedToBeRegistered   int32 = 2010
	ControllerMasterStillExist           int32 = 2011
	ControllerElectMasterFailed          int32 = 2012
	ControllerAlterSyncStateSetFailed    int32 = 2013
	ControllerBrokerIDInvalid            int32 = 2014
	ControllerJRaftInternalError         int32 = 2015
	ControllerBrokerLiveInfoNotExists    int32 = 2016
)

// ControllerRequestCodeName is the Java RequestCode constant name of a
// controller request code (1001-1018, and 904), for logs and metric labels;
// other codes give "UNKNOWN".
func ControllerRequestCodeName(code int32) string {
	switch code {
	case ControllerAlterSyncStateSet:
		return "CONTROLLER_ALTER_SYNC_STATE_SET"
	case ControllerElectMaster:
		return "CONTROLLER_ELECT_MASTER"
	case ControllerRegisterBroker:
		return "CONTROLLER_REGISTER_BROKER"
	case ControllerGetReplicaInfo:
		return "CONTROLLER_GET_REPLICA_INFO"
	case ControllerGetMetadataInfo:
		return "CONTROLLER_GET_METADATA_INFO"
	case ControllerGetSyncStateData:
		return "CONTROLLER_GET_SYNC_STATE_DATA"
	case GetBrokerEpochCache:
		return "GET_BROKER_EPOCH_CACHE"
	case NotifyBrokerRoleChanged:
		return "NOTIFY_BROKER_ROLE_CHANGED"
	case UpdateControllerConfig:
		return "UPDATE_CONTROLLER_CONFIG"
	case GetControllerConfig:
		return "GET_CONTROLLER_CONFIG"
	case CleanBrokerData:
		return "CLEAN_BROKER_DATA"
	case ControllerGetNextBrokerID:
		return "CONTROLLER_GET_NEXT_BROKER_ID"
	case ControllerApplyBrokerID:
		return "CONTROLLER_APPLY_BROKER_ID"
	case BrokerCloseChannelRequest:
		return "BROKER_CLOSE_CHANNEL_REQUEST"
	case CheckNotActiveBrokerRequest:
		return "CHECK_NOT_ACTIVE_BROKER_REQUEST"
	case GetBrokerLiveInfoRequest:
		return "GET_BROKER_LIVE_INFO_REQUEST"
	case GetSyncStateDataRequest:
		return "GET_SYNC_STATE_DATA_REQUEST"
	case RaftBrokerHeartBeatEventCode:
		return "RAFT_BROKER_HEART_BEAT_EVENT_REQUEST"
	case BrokerHeartbeat:
		return "BROKER_HEARTBEAT"
	}
	return "UNKNOWN"
}
