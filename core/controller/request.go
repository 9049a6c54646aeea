// Requests as Java's header classes read them from extFields: typed, with
// absent fields kept absent (nil) where Java's field is a nullable object,
// so that each decision can fail exactly where Java's handler would.

package controller

import (
	"strconv"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// Fields is where a request's extFields are read from; *codec.Command
// satisfies it. A nil Fields has no fields (Java's header object then
// keeps every default, as for a frame without extFields).
type Fields interface {
	ExtValue(key string) (string, bool)
}

// MapFields is a Fields backed by a map, for tests and tools.
type MapFields map[string]string

// ExtValue implements Fields.
func (m MapFields) ExtValue(key string) (string, bool) {
	v, ok := m[key]
	return v, ok
}

// Java's header decoding: a field absent from extFields keeps its default,
// and so does one whose text does not parse as its type (the error is
// logged and skipped). @CFNotNull marks are not enforced on this path.
// Numbers parse as Long.parseLong / Integer.parseInt do (optional sign,
// decimal digits), booleans as Boolean.parseBoolean (only "true", in any
// case, is true).

func ext(f Fields, key string) (string, bool) {
	if f == nil {
		return "", false
	}
	return f.ExtValue(key)
}

// optString is a nullable String field, copied out of the request buffer.
func optString(f Fields, key string) *string {
	v, ok := ext(f, key)
	if !ok {
		return nil
	}
	v = strings.Clone(v)
	return &v
}

func optInt64(f Fields, key string) *int64 {
	v, ok := ext(f, key)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func optInt32(f Fields, key string) *int32 {
	v, ok := ext(f, key)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return nil
	}
	n32 := int32(n)
	return &n32
}

func int64Or(f Fields, key string, def int64) int64 {
	if v, ok := ext(f, key); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

func int32Or(f Fields, key string, def int32) int32 {
	if v, ok := ext(f, key); ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			return int32(n)
		}
	}
	return def
}

func boolOr(f Fields, key string, def bool) bool {
	if v, ok := ext(f, key); ok {
		return strings.EqualFold(v, "true")
	}
	return def
}

// AlterSyncStateSetRequest is CONTROLLER_ALTER_SYNC_STATE_SET (1001).
type AlterSyncStateSetRequest struct {
	BrokerName     *string
	MasterBrokerID *int64
	MasterEpoch    *int32
	// Body is the proposed set and the epoch the master believes current;
	// nil when the frame had no body (or the JSON null).
	Body *body.SyncStateSet
}

// ParseAlterSyncStateSet reads a 1001 request. A body that is present but
// not a SyncStateSet is an error: Java fails such a request with
// SYSTEM_ERROR before looking at anything else (see BodyErrorReply).
func ParseAlterSyncStateSet(f Fields, b []byte) (AlterSyncStateSetRequest, error) {
	r := AlterSyncStateSetRequest{
		BrokerName:     optString(f, "brokerName"),
		MasterBrokerID: optInt64(f, "masterBrokerId"),
		MasterEpoch:    optInt32(f, "masterEpoch"),
	}
	if len(b) > 0 {
		s, err := body.DecodeSyncStateSet(b)
		if err != nil {
			return r, err
		}
		r.Body = s
	}
	return r, nil
}

// ElectMasterRequest is CONTROLLER_ELECT_MASTER (1002). Its fields are not
// nullable in Java: absent ones keep the class defaults "", "", -1, false.
type ElectMasterRequest struct {
	ClusterName string
	BrokerName  string
	// BrokerID is the requester's own id (broker trigger), the id the
	// admin wants (admin trigger, DesignateElect) or -1 (controller
	// trigger). It is what a first election elects.
	BrokerID       int64
	DesignateElect bool
}

// ParseElectMaster reads a 1002 request.
func ParseElectMaster(f Fields) ElectMasterRequest {
	r := ElectMasterRequest{BrokerID: int64Or(f, "brokerId", -1), DesignateElect: boolOr(f, "designateElect", false)}
	if v, ok := ext(f, "clusterName"); ok {
		r.ClusterName = strings.Clone(v)
	}
	if v, ok := ext(f, "brokerName"); ok {
		r.BrokerName = strings.Clone(v)
	}
	return r
}

// ControllerTrigger is the election the controller asks for itself when a
// set's master is gone (Java's ElectMasterRequestHeader.ofControllerTrigger):
// brokerName only, brokerId -1.
func ControllerTrigger(brokerName string) ElectMasterRequest {
	return ElectMasterRequest{BrokerName: brokerName, BrokerID: -1}
}

// RegisterBrokerRequest is CONTROLLER_REGISTER_BROKER (1003).
type RegisterBrokerRequest struct {
	ClusterName   *string
	BrokerName    *string
	BrokerID      *int64
	BrokerAddress *string
}

// ParseRegisterBroker reads a 1003 request.
func ParseRegisterBroker(f Fields) RegisterBrokerRequest {
	return RegisterBrokerRequest{
		ClusterName:   optString(f, "clusterName"),
		BrokerName:    optString(f, "brokerName"),
		BrokerID:      optInt64(f, "brokerId"),
		BrokerAddress: optString(f, "brokerAddress"),
	}
}

// GetReplicaInfoRequest is CONTROLLER_GET_REPLICA_INFO (1004).
type GetReplicaInfoRequest struct {
	BrokerName *string
}

// ParseGetReplicaInfo reads a 1004 request.
func ParseGetReplicaInfo(f Fields) GetReplicaInfoRequest {
	return GetReplicaInfoRequest{BrokerName: optString(f, "brokerName")}
}

// GetSyncStateDataRequest is CONTROLLER_GET_SYNC_STATE_DATA (1006): the
// broker names of its body. Names is nil when there was no body.
type GetSyncStateDataRequest struct {
	Names []string
}

// ParseGetSyncStateData reads a 1006 request body; one that is not a JSON
// array of strings is an error (SYSTEM_ERROR in Java, see BodyErrorReply).
func ParseGetSyncStateData(b []byte) (GetSyncStateDataRequest, error) {
	if len(b) == 0 {
		return GetSyncStateDataRequest{}, nil
	}
	names, err := body.DecodeBrokerNames(b)
	return GetSyncStateDataRequest{Names: names}, err
}

// CleanBrokerDataRequest is CLEAN_BROKER_DATA (1011).
type CleanBrokerDataRequest struct {
	ClusterName *string
	BrokerName  *string
	// IDs is brokerControllerIdsToClean as sent ("1;2;3"); it is parsed by
	// the decision, whose error answer quotes it.
	IDs         *string
	CleanLiving bool // isCleanLivingBroker
}

// ParseCleanBrokerData reads a 1011 request.
func ParseCleanBrokerData(f Fields) CleanBrokerDataRequest {
	return CleanBrokerDataRequest{
		ClusterName: optString(f, "clusterName"),
		BrokerName:  optString(f, "brokerName"),
		IDs:         optString(f, "brokerControllerIdsToClean"),
		CleanLiving: boolOr(f, "isCleanLivingBroker", false),
	}
}

// NextBrokerIDRequest is CONTROLLER_GET_NEXT_BROKER_ID (1012).
type NextBrokerIDRequest struct {
	ClusterName *string
	BrokerName  *string
}

// ParseNextBrokerID reads a 1012 request.
func ParseNextBrokerID(f Fields) NextBrokerIDRequest {
	return NextBrokerIDRequest{ClusterName: optString(f, "clusterName"), BrokerName: optString(f, "brokerName")}
}

// ApplyBrokerIDRequest is CONTROLLER_APPLY_BROKER_ID (1013).
type ApplyBrokerIDRequest struct {
	ClusterName *string
	BrokerName  *string
	BrokerID    *int64 // appliedBrokerId
	// CheckCode is registerCheckCode, "<ip:port>;<ms>" from Java brokers:
	// the part before the first ';' is the address recorded for the id.
	CheckCode *string
}

// ParseApplyBrokerID reads a 1013 request.
func ParseApplyBrokerID(f Fields) ApplyBrokerIDRequest {
	return ApplyBrokerIDRequest{
		ClusterName: optString(f, "clusterName"),
		BrokerName:  optString(f, "brokerName"),
		BrokerID:    optInt64(f, "appliedBrokerId"),
		CheckCode:   optString(f, "registerCheckCode"),
	}
}

// Heartbeat is BROKER_HEARTBEAT (904) as the liveness table reads it, with
// Java's defaults for absent or unparsable fields already applied.
type Heartbeat struct {
	// Strings point into the request: valid as long as the Fields they
	// came from. Liveness.Heartbeat copies what it keeps.
	ClusterName, BrokerAddr, BrokerName string
	BrokerID                            int64
	HasBrokerID                         bool
	Epoch                               int32 // -1 when absent
	MaxOffset                           int64 // -1 when absent
	ConfirmOffset                       int64 // -1 when absent
	TimeoutMillis                       int64 // heartbeatTimeoutMills, DefaultHeartbeatTimeout when absent
	ElectionPriority                    int32 // DefaultElectionPriority when absent
}

// ParseHeartbeat reads a 904 request into hb without allocating (brokers
// send one per second to every controller node).
func ParseHeartbeat(f Fields, hb *Heartbeat) {
	*hb = Heartbeat{
		Epoch:            int32Or(f, "epoch", defaultHeartbeatEpoch),
		MaxOffset:        int64Or(f, "maxOffset", defaultHeartbeatOffset),
		ConfirmOffset:    int64Or(f, "confirmOffset", defaultHeartbeatConfirm),
		TimeoutMillis:    int64Or(f, "heartbeatTimeoutMills", DefaultHeartbeatTimeout),
		ElectionPriority: int32Or(f, "electionPriority", DefaultElectionPriority),
	}
	hb.ClusterName, _ = ext(f, "clusterName")
	hb.BrokerAddr, _ = ext(f, "brokerAddr")
	hb.BrokerName, _ = ext(f, "brokerName")
	if v, ok := ext(f, "brokerId"); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			hb.BrokerID, hb.HasBrokerID = n, true
		}
	}
}
