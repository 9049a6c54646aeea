// Replies and decisions: the answer Java would send, the events to
// replicate before sending it, and the role-change notices that follow an
// election.

package controller

import (
	"strconv"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

// Reply is the response a request gets: code, remark ("" = none), header
// fields in the order a Java 5.3.3 controller writes them, and body.
type Reply struct {
	Code   int32
	Remark string
	// HasExt tells whether the header carries extFields at all. Java writes
	// them (possibly {}) for replies built from a response header class,
	// and none for replies without one (1006, 1011, 904) or built from an
	// exception (every code 1).
	HasExt bool
	Ext    []codec.Field
	Body   []byte // nil = no body
}

// ExtValue returns the header field key.
func (r *Reply) ExtValue(key string) (string, bool) {
	for _, f := range r.Ext {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Fill copies r into the response command c (code, remark, extFields,
// body); c's other fields (opaque, flag, version, ...) are the caller's.
func (r *Reply) Fill(c *codec.Command) {
	c.Code, c.Remark, c.Body = r.Code, r.Remark, r.Body
	c.HasExt = r.HasExt
	c.Ext = append(c.Ext[:0], r.Ext...)
}

// Decision is what the leader does with one request: reply, and first
// replicate Events (if any) and apply them on commit. The reply already
// holds the values the state will have once the events are applied (the
// new epochs), so it must not be sent before the commit.
type Decision struct {
	Reply  Reply
	Events []Event
	// RoleChange is set when a new master is elected: the leader then
	// sends NOTIFY_BROKER_ROLE_CHANGED (1008) to the set's live brokers
	// after the commit, if notifyBrokerRoleChanged is on.
	RoleChange *RoleChange
	// Bound, when set, is the bound on the state that refused the request
	// (Java has none), for the caller to count and log.
	Bound Bound
}

// Bound is one of the bounds on what a request may add to the state.
type Bound uint8

const (
	BoundNone          Bound = iota
	BoundBrokerSets          // Settings.MaxBrokerSets
	BoundBrokersPerSet       // Settings.MaxBrokersPerSet
	BoundFieldSize           // MaxFieldBytes
)

// Java's remark for an exception reply is "<exception>, <first stack
// frame>". The request failed inside the event scheduler and came back
// through CompletableFuture.get, hence the wrapping and the frame; the
// messages are JDK 17's helpful NullPointerException texts, as recorded.
const (
	execPrefix = "java.util.concurrent.ExecutionException: "
	execFrame  = ", java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)"

	// A null brokerName (or 1003's null brokerId) used as a map key.
	remarkNullKey = execPrefix + `java.lang.NullPointerException: Cannot invoke "Object.hashCode()" because "key" is null` + execFrame
	// 1013 without appliedBrokerId.
	remarkNullAppliedID = execPrefix + `java.lang.NullPointerException: Cannot invoke "java.lang.Long.longValue()" because "brokerId" is null` + execFrame
	// 1001 without masterEpoch.
	remarkNullMasterEpoch = execPrefix + `java.lang.NullPointerException: Cannot invoke "java.lang.Integer.intValue()" because the return value of "org.apache.rocketmq.remoting.protocol.header.controller.AlterSyncStateSetRequestHeader.getMasterEpoch()" is null` + execFrame
	// 1001 without a body.
	remarkNullSyncStateSet = execPrefix + `java.lang.NullPointerException: Cannot invoke "org.apache.rocketmq.remoting.protocol.body.SyncStateSet.getSyncStateSet()" because "syncStateSet" is null` + execFrame
	// Not recorded, written the same way from the 5.3.3 handlers: 1013
	// without registerCheckCode, or one made only of ';' (String.split
	// then returns no element); 1003 without brokerAddress.
	remarkNullCheckCode     = execPrefix + `java.lang.NullPointerException: Cannot invoke "String.split(String)" because "registerCheckCode" is null` + execFrame
	remarkEmptyCheckCode    = execPrefix + `java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0` + execFrame
	remarkNullBrokerAddress = execPrefix + `java.lang.NullPointerException: Cannot invoke "String.equals(Object)" because "brokerAddress" is null` + execFrame

	// A handler that produced no response (1006 without a usable body).
	remarkNoResponseCode = "not set any response code"
)

// systemError is a code-1 reply: no extFields, as every Java exception
// reply.
func systemError(remark string) Decision {
	return Decision{Reply: Reply{Code: codec.SystemError, Remark: remark}}
}

// BodyErrorReply is the answer to a request whose body does not decode
// (ParseAlterSyncStateSet, ParseGetSyncStateData): Java's fastjson throws
// before the request reaches the controller, and the exception becomes a
// SYSTEM_ERROR. Its exact text cannot be reproduced and no client reads it.
func BodyErrorReply(err error) Reply {
	return Reply{Code: codec.SystemError, Remark: "com.alibaba.fastjson.JSONException: " + err.Error()}
}

// HeartbeatReply is the answer to a 904 that is not oneway (brokers always
// send it oneway; a oneway request is never answered).
func HeartbeatReply(hb *Heartbeat) Reply {
	if !hb.HasBrokerID {
		return Reply{Code: codec.ControllerInvalidRequest, Remark: heartbeatNoBrokerIDRemark}
	}
	return Reply{Code: codec.Success, Remark: heartbeatSuccessRemark}
}

// RoleChange is a newly elected master, as NOTIFY_BROKER_ROLE_CHANGED
// announces it.
type RoleChange struct {
	Cluster, BrokerName string
	MasterID            int64
	// MasterAddr is empty when HasMasterAddr is false: a first election
	// may elect an id that is not registered.
	MasterAddr        string
	HasMasterAddr     bool
	MasterEpoch       int32
	SyncStateSetEpoch int32
	// Members is every registered id of the set with its address, when
	// the election was decided.
	Members []body.BrokerAddr
	// SyncStateSet is the body's set; nil is the new master alone, as an
	// election leaves it.
	SyncStateSet []int64
}

// Targets returns the addresses to notify: the recorded address of every
// member that is alive at now in l (keyed by the set's recorded cluster),
// in id order, each address once. Java sends one 1008 per member id.
func (rc *RoleChange) Targets(l *Liveness, now int64) []string {
	var out []string
	for _, m := range rc.Members {
		if m.Addr == "" || !l.Alive(LiveKey{rc.Cluster, rc.BrokerName, m.ID}, now) {
			continue
		}
		dup := false
		for _, a := range out {
			dup = dup || a == m.Addr
		}
		if !dup {
			out = append(out, m.Addr)
		}
	}
	return out
}

// NotifyExt returns the 1008 request's extFields, in the order Java
// writes them.
func (rc *RoleChange) NotifyExt() []codec.Field {
	ext := make([]codec.Field, 0, 4)
	if rc.HasMasterAddr {
		ext = append(ext, codec.Field{Key: "masterAddress", Value: rc.MasterAddr})
	}
	return append(ext,
		codec.Field{Key: "masterBrokerId", Value: strconv.FormatInt(rc.MasterID, 10)},
		codec.Field{Key: "syncStateSetEpoch", Value: strconv.FormatInt(int64(rc.SyncStateSetEpoch), 10)},
		codec.Field{Key: "masterEpoch", Value: strconv.FormatInt(int64(rc.MasterEpoch), 10)})
}

// NotifyBody returns the 1008 request's body: the new SyncStateSet, which
// is the new master alone.
func (rc *RoleChange) NotifyBody() []byte {
	ids := rc.SyncStateSet
	if ids == nil {
		ids = []int64{rc.MasterID}
	}
	return body.AppendSyncStateSet(nil, ids, rc.SyncStateSetEpoch)
}

// NotifyCommand fills c as the oneway 1008 request (opaque and version are
// the caller's).
func (rc *RoleChange) NotifyCommand(c *codec.Command) {
	c.Code = codec.NotifyBrokerRoleChanged
	c.Flag = codec.FlagOneway
	c.Remark = ""
	c.HasExt = true
	c.Ext = append(c.Ext[:0], rc.NotifyExt()...)
	c.Body = rc.NotifyBody()
}
