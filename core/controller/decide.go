// The decision for each leader-only request: Java 5.3.3's checks in
// Java's order, its codes and remarks, and the events a success replicates.
// Every decision is a method of State taking its request and the Env, so
// that the controller port's code table binds each code to its parser and
// decision alike.

package controller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

// fields builds a reply header in wire order.
type fields []codec.Field

func (fs *fields) add(k, v string) { *fs = append(*fs, codec.Field{Key: k, Value: v}) }

func (fs *fields) addInt(k string, v int64) { fs.add(k, strconv.FormatInt(v, 10)) }

func (fs *fields) addOpt(k string, v *string) {
	if v != nil {
		fs.add(k, *v)
	}
}

func withExt(code int32, remark string, ext fields) Reply {
	if ext == nil {
		ext = fields{}
	}
	return Reply{Code: code, Remark: remark, HasExt: true, Ext: ext}
}

// javaID formats a nullable Long as String.format("%s") does.
func javaID(id int64, ok bool) string {
	if !ok {
		return "null"
	}
	return strconv.FormatInt(id, 10)
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// AlterSyncStateSet decides 1001, sent by a master whose set of in-sync
// replicas changed. Checks, in Java's order: set known, set changed,
// requester is the master (before the epochs: a just-demoted master still
// sends its old set with the new masterEpoch and must get 2002), master
// epoch, set epoch, every proposed id registered and alive, master kept.
func (s *State) AlterSyncStateSet(req AlterSyncStateSetRequest, env Env) Decision {
	fail := func(code int32, remark string) Decision {
		return Decision{Reply: withExt(code, remark, fields{{Key: "newSyncStateSetEpoch", Value: "0"}})}
	}
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	g := s.groups[*req.BrokerName]
	if g == nil {
		return fail(codec.ControllerAlterSyncStateSetFailed, "Broker metadata is not existed")
	}
	if req.Body == nil {
		return systemError(remarkNullSyncStateSet)
	}
	proposed := normIDs(req.Body.IDs)
	if slices.Equal(proposed, g.SyncStateSet) {
		return fail(codec.ControllerAlterSyncStateSetFailed,
			"The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet")
	}
	if !g.HasMaster || req.MasterBrokerID == nil || *req.MasterBrokerID != g.MasterID {
		return fail(codec.ControllerInvalidMaster, fmt.Sprintf(
			"Rejecting alter syncStateSet request because the current leader is:{%s}, not {%s}",
			javaID(g.MasterID, g.HasMaster), javaID(derefOr(req.MasterBrokerID, 0), req.MasterBrokerID != nil)))
	}
	if req.MasterEpoch == nil {
		return systemError(remarkNullMasterEpoch)
	}
	if *req.MasterEpoch != g.MasterEpoch {
		return fail(codec.ControllerFencedMasterEpoch, fmt.Sprintf(
			"Rejecting alter syncStateSet request because the current master epoch is:{%d}, not {%d}",
			g.MasterEpoch, *req.MasterEpoch))
	}
	if req.Body.Epoch != g.SyncStateSetEpoch {
		return fail(codec.ControllerFencedSyncStateSetEpoch, fmt.Sprintf(
			"Rejecting alter syncStateSet request because the current syncStateSet epoch is:{%d}, not {%d}",
			g.SyncStateSetEpoch, req.Body.Epoch))
	}
	for _, id := range proposed {
		if !g.Registered(id) {
			return fail(codec.ControllerInvalidReplicas, fmt.Sprintf(
				"Rejecting alter syncStateSet request because the replicas {%d} don't exist", id))
		}
		if !env.alive(g.Cluster, g.Name, id) {
			return fail(codec.ControllerBrokerNotAlive, fmt.Sprintf(
				"Rejecting alter syncStateSet request because the replicas {%d} don't alive", id))
		}
	}
	if !slices.Contains(proposed, g.MasterID) {
		return fail(codec.ControllerAlterSyncStateSetFailed, fmt.Sprintf(
			"Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {%d}", g.MasterID))
	}
	epoch := g.SyncStateSetEpoch + 1
	var ext fields
	ext.addInt("newSyncStateSetEpoch", int64(epoch))
	r := withExt(codec.Success, "", ext)
	r.Body = body.AppendSyncStateSet(nil, proposed, epoch)
	return Decision{Reply: r, Events: []Event{{Type: EventAlterSyncStateSet, BrokerName: g.Name, IDs: proposed}}}
}

// ElectMaster decides 1002 for the three triggers (broker, admin with
// DesignateElect, controller with BrokerID -1; see §5.4 of the reference):
//
//   - a set that never had a master (masterEpoch 0) takes the requester's
//     id, with no liveness check: a broker's first 1002 may arrive before
//     its first heartbeat;
//   - otherwise the policy (electPolicy) picks, the admin's id preferred;
//   - keeping the old master answers 2011, which brokers take as success;
//   - no candidate answers 2012, or for the controller trigger 2004 and
//     the master is cleared (masterEpoch+1), which makes the brokers'
//     next 1004 poll ask for an election themselves.
//
// Java clears the master again on each of its controller-trigger retries,
// bumping masterEpoch each time; here a master already cleared stays so
// without an event.
func (s *State) ElectMaster(req ElectMasterRequest, env Env) Decision {
	g := s.groups[req.BrokerName]
	if g == nil {
		return Decision{Reply: withExt(codec.ControllerBrokerNeedToBeRegistered, "Broker hasn't been registered", nil)}
	}
	var (
		newID int64
		found bool
	)
	if g.MasterEpoch == 0 {
		newID, found = req.BrokerID, true
	}
	if !found || newID == -1 {
		newID, found = electPolicy(g, &env, req.BrokerID, req.DesignateElect)
	}
	if found && g.HasMaster && newID == g.MasterID {
		var ext fields
		ext.addInt("masterBrokerId", g.MasterID)
		if addr, ok := g.Addr(g.MasterID); ok {
			ext.add("masterAddress", addr)
		}
		ext.addInt("syncStateSetEpoch", int64(g.SyncStateSetEpoch))
		ext.addInt("masterEpoch", int64(g.MasterEpoch))
		r := withExt(codec.ControllerMasterStillExist, fmt.Sprintf(
			"The old master %d is still alive, not need to elect new master for broker %s", g.MasterID, g.Name), ext)
		r.Body = body.AppendElectMasterBody(nil, nil, g.SyncStateSet)
		return Decision{Reply: r}
	}
	if found {
		rc := &RoleChange{
			Cluster:           g.Cluster,
			BrokerName:        g.Name,
			MasterID:          newID,
			MasterEpoch:       g.MasterEpoch + 1,
			SyncStateSetEpoch: g.SyncStateSetEpoch + 1,
			Members:           make([]body.BrokerAddr, len(g.Brokers)),
		}
		rc.MasterAddr, rc.HasMasterAddr = g.Addr(newID)
		for i, b := range g.Brokers {
			rc.Members[i] = body.BrokerAddr{ID: b.ID, Addr: b.Addr}
		}
		var ext fields
		ext.addInt("masterBrokerId", newID)
		if rc.HasMasterAddr {
			ext.add("masterAddress", rc.MasterAddr)
		}
		ext.addInt("syncStateSetEpoch", int64(rc.SyncStateSetEpoch))
		ext.addInt("masterEpoch", int64(rc.MasterEpoch))
		r := withExt(codec.Success, "", ext)
		r.Body = body.AppendElectMasterBody(nil,
			&body.MemberGroup{Cluster: g.Cluster, BrokerName: g.Name, Addrs: rc.Members}, []int64{newID})
		return Decision{
			Reply:      r,
			Events:     []Event{{Type: EventElectMaster, BrokerName: g.Name, Elected: true, BrokerID: newID}},
			RoleChange: rc,
		}
	}
	if req.BrokerID != -1 {
		return Decision{Reply: withExt(codec.ControllerElectMasterFailed, "Failed to elect a new master", nil)}
	}
	d := Decision{Reply: withExt(codec.ControllerMasterNotAvailable, "Old master has down and failed to elect a new broker master", nil)}
	if g.HasMaster {
		d.Events = []Event{{Type: EventElectMaster, BrokerName: g.Name}}
	}
	return d
}

// MasterRoleChange returns the 1008 that announces the set's current
// master, as the election that named it would have sent it: a leader
// announces a master again when it cannot tell whether the announcement
// was made (an election committed while its leader timed out or lost
// leadership). Brokers act on a 1008 only when its masterEpoch is higher
// than theirs, so announcing the same master twice changes nothing. It
// reports false for an unknown set or one without a master.
func (s *State) MasterRoleChange(brokerName string) (*RoleChange, bool) {
	g := s.groups[brokerName]
	if g == nil || !g.HasMaster {
		return nil, false
	}
	rc := &RoleChange{
		Cluster:           g.Cluster,
		BrokerName:        g.Name,
		MasterID:          g.MasterID,
		MasterEpoch:       g.MasterEpoch,
		SyncStateSetEpoch: g.SyncStateSetEpoch,
		Members:           make([]body.BrokerAddr, len(g.Brokers)),
		SyncStateSet:      slices.Clone(g.SyncStateSet),
	}
	rc.MasterAddr, rc.HasMasterAddr = g.Addr(g.MasterID)
	for i, b := range g.Brokers {
		rc.Members[i] = body.BrokerAddr{ID: b.ID, Addr: b.Addr}
	}
	return rc, true
}

// ControllerElect is the election the leader triggers itself when a set's
// master is gone (its connection closed, its heartbeats expired, or the
// inactive-master scan found it): ElectMaster of ControllerTrigger. The
// caller retries up to electMasterMaxRetryCount times until SUCCESS and
// notifies after each SUCCESS, as Java does.
func (s *State) ControllerElect(brokerName string, env Env) Decision {
	return s.ElectMaster(ControllerTrigger(brokerName), env)
}

// RegisterBroker decides 1003, a broker's address refresh once it knows its
// id. The reply names the master only if that master is alive (checked
// under the request's clusterName, as Java does), and always carries the
// SyncStateSet. A changed address is replicated.
func (s *State) RegisterBroker(req RegisterBrokerRequest, env Env) Decision {
	var ext fields
	ext.addOpt("clusterName", req.ClusterName)
	ext.addOpt("brokerName", req.BrokerName)
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	g := s.groups[*req.BrokerName]
	if g == nil {
		return Decision{Reply: withExt(codec.ControllerBrokerNeedToBeRegistered,
			fmt.Sprintf("Broker-set: %s hasn't been registered in controller", *req.BrokerName), ext)}
	}
	if req.BrokerID == nil {
		return systemError(remarkNullKey)
	}
	id := *req.BrokerID
	recorded, ok := g.Addr(id)
	if !ok {
		return Decision{Reply: withExt(codec.ControllerBrokerNeedToBeRegistered,
			fmt.Sprintf("BrokerId: %d hasn't been registered in broker-set: %s", id, g.Name), ext)}
	}
	if req.BrokerAddress == nil {
		return systemError(remarkNullBrokerAddress)
	}
	if f, n := longField("brokerAddress", req.BrokerAddress); f != "" {
		return bounded(BoundFieldSize, fieldTooLong(codec.ControllerRegisterBroker, f, n))
	}
	ext = ext[:0]
	if g.HasMaster && env.alive(derefOr(req.ClusterName, ""), g.Name, g.MasterID) {
		ext.addInt("masterBrokerId", g.MasterID)
		if addr, ok := g.Addr(g.MasterID); ok {
			ext.add("masterAddress", addr)
		}
		ext.addOpt("clusterName", req.ClusterName)
		ext.addOpt("brokerName", req.BrokerName)
		ext.addInt("syncStateSetEpoch", int64(g.SyncStateSetEpoch))
		ext.addInt("masterEpoch", int64(g.MasterEpoch))
	} else {
		ext.addOpt("clusterName", req.ClusterName)
		ext.addOpt("brokerName", req.BrokerName)
	}
	r := withExt(codec.Success, "", ext)
	r.Body = body.AppendSyncStateSet(nil, g.SyncStateSet, g.SyncStateSetEpoch)
	d := Decision{Reply: r}
	if *req.BrokerAddress != recorded {
		d.Events = []Event{{Type: EventUpdateBrokerAddress, Cluster: derefOr(req.ClusterName, ""),
			BrokerName: g.Name, BrokerID: id, Addr: *req.BrokerAddress}}
	}
	return d
}

// GetReplicaInfo decides 1004, the brokers' 5 s poll. Unlike 1003 it
// reports the recorded master whether alive or not.
func (s *State) GetReplicaInfo(req GetReplicaInfoRequest, _ Env) Decision {
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	g := s.groups[*req.BrokerName]
	if g == nil {
		return Decision{Reply: withExt(codec.ControllerBrokerMetadataNotExist, "Broker metadata is not existed", nil)}
	}
	var ext fields
	if g.HasMaster {
		ext.addInt("masterBrokerId", g.MasterID)
		if addr, ok := g.Addr(g.MasterID); ok {
			ext.add("masterAddress", addr)
		}
	}
	ext.addInt("masterEpoch", int64(g.MasterEpoch))
	r := withExt(codec.Success, "", ext)
	r.Body = body.AppendSyncStateSet(nil, g.SyncStateSet, g.SyncStateSetEpoch)
	return Decision{Reply: r}
}

// GetSyncStateData decides 1006 (mqadmin getSyncStateSet): each requested
// set that exists, with its replicas split by SyncStateSet membership and
// marked alive from this node's table; unknown names are skipped. No body,
// or an empty list, gets Java's "not set any response code".
func (s *State) GetSyncStateData(req GetSyncStateDataRequest, env Env) Decision {
	if len(req.Names) == 0 {
		return systemError(remarkNoResponseCode)
	}
	var sets []body.ReplicasInfo
	seen := make(map[string]bool, min(len(req.Names), len(s.groups)))
	for _, name := range req.Names {
		g := s.groups[name]
		if g == nil || seen[name] {
			continue
		}
		seen[name] = true
		ri := body.ReplicasInfo{
			BrokerName:        g.Name,
			HasMaster:         g.HasMaster,
			MasterBrokerID:    g.MasterID,
			MasterEpoch:       g.MasterEpoch,
			SyncStateSetEpoch: g.SyncStateSetEpoch,
			InSync:            []body.ReplicaIdentity{},
			NotInSync:         []body.ReplicaIdentity{},
		}
		if g.HasMaster {
			ri.MasterAddress, ri.HasMasterAddress = g.Addr(g.MasterID)
		}
		for _, b := range g.Brokers {
			id := body.ReplicaIdentity{BrokerName: g.Name, BrokerID: b.ID, BrokerAddress: b.Addr,
				Alive: env.alive(g.Cluster, g.Name, b.ID)}
			if g.InSyncStateSet(b.ID) {
				ri.InSync = append(ri.InSync, id)
			} else {
				ri.NotInSync = append(ri.NotInSync, id)
			}
		}
		sets = append(sets, ri)
	}
	return Decision{Reply: Reply{Code: codec.Success, Body: body.AppendBrokerReplicasInfo(nil, sets)}}
}

// CleanBrokerData decides 1011 (mqadmin cleanBrokerMetadata). Unless
// CleanLiving, it refuses to clean a set that still records a master when
// no ids are given, ids that do not parse, and ids that are alive (under
// the request's clusterName). Then the set must exist.
//
// With CleanLiving Java skips the id string altogether and removes the
// whole set even when ids were given; here the ids are still honoured
// (parsed, and only they removed), without the liveness check.
func (s *State) CleanBrokerData(req CleanBrokerDataRequest, env Env) Decision {
	fail := func(remark string) Decision {
		return Decision{Reply: Reply{Code: codec.ControllerInvalidCleanBrokerMetadata, Remark: remark}}
	}
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	name := *req.BrokerName
	g := s.groups[name]
	idText := derefOr(req.IDs, "")
	var ids []int64
	if !javaBlank(idText) {
		var bad string
		var ok bool
		if ids, bad, ok = parseIDList(idText); !ok {
			return fail("Please set the option <brokerControllerIdsToClean> according to the format, exception: " +
				`java.lang.NumberFormatException: For input string: "` + bad + `"`)
		}
	}
	if !req.CleanLiving {
		if javaBlank(idText) && g != nil && g.HasMaster {
			return fail(fmt.Sprintf("Broker %s is still alive, clean up failure", name))
		}
		cluster := derefOr(req.ClusterName, "")
		for _, id := range ids {
			if env.alive(cluster, name, id) {
				return fail(fmt.Sprintf("Broker [%s,  %d] is still alive, clean up failure", name, id))
			}
		}
	}
	if g == nil {
		return fail(fmt.Sprintf("Broker %s is not existed,clean broker data failure.", name))
	}
	return Decision{
		Reply:  Reply{Code: codec.Success},
		Events: []Event{{Type: EventCleanBrokerData, BrokerName: g.Name, IDs: ids}},
	}
}

// parseIDList parses "1;2;3" as Java's split(";") and Long.valueOf do:
// trailing empty pieces are dropped, any other piece must be a long. It
// returns the ids ascending without duplicates, or the first bad piece.
// A text made only of ';' yields no id, which Java then treats as "clean
// the whole set".
func parseIDList(s string) (ids []int64, bad string, ok bool) {
	pieces := strings.Split(s, ";")
	for len(pieces) > 0 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	for _, p := range pieces {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, p, false
		}
		ids = append(ids, id)
	}
	return normIDs(ids), "", true
}

// javaBlank is StringUtils.isBlank: empty or only Character.isWhitespace.
func javaBlank(s string) bool {
	for _, r := range s {
		switch {
		case r == ' ', r >= '\t' && r <= '\r', r >= 0x1C && r <= 0x1F:
		case r == 0x1680, r >= 0x2000 && r <= 0x2006, r >= 0x2008 && r <= 0x200A,
			r == 0x2028, r == 0x2029, r == 0x205F, r == 0x3000:
		default:
			return false
		}
	}
	return true
}

// NextBrokerID decides 1012: the set's next-id counter, 1 for an unknown
// set. It never fails.
func (s *State) NextBrokerID(req NextBrokerIDRequest, _ Env) Decision {
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	next := int64(1)
	if g := s.groups[*req.BrokerName]; g != nil {
		next = g.NextID
	}
	var ext fields
	ext.addOpt("clusterName", req.ClusterName)
	ext.addInt("nextBrokerId", next)
	ext.addOpt("brokerName", req.BrokerName)
	return Decision{Reply: withExt(codec.Success, "", ext)}
}

// ApplyBrokerID decides 1013: a broker claims the id 1012 gave it, proven
// by its registerCheckCode. A new set accepts only id 1; a known set
// accepts an id not yet bound, or bound to the same check code (a retry,
// which needs no event). The reply carries no id: a refused broker starts
// over at 1012.
//
// Beyond Java: a name, cluster or check code longer than MaxFieldBytes is
// refused, and so is a new set or id beyond the settings' bounds (a retry
// is not refused: it adds nothing).
func (s *State) ApplyBrokerID(req ApplyBrokerIDRequest, env Env) Decision {
	var ext fields
	ext.addOpt("clusterName", req.ClusterName)
	ext.addOpt("brokerName", req.BrokerName)
	if req.CheckCode == nil {
		return systemError(remarkNullCheckCode)
	}
	addr, ok := checkCodeAddr(*req.CheckCode)
	if !ok {
		return systemError(remarkEmptyCheckCode)
	}
	if req.BrokerName == nil {
		return systemError(remarkNullKey)
	}
	if req.BrokerID == nil {
		return systemError(remarkNullAppliedID)
	}
	if f, n := longField("clusterName", req.ClusterName, "brokerName", req.BrokerName, "registerCheckCode", req.CheckCode); f != "" {
		return bounded(BoundFieldSize, fieldTooLong(codec.ControllerApplyBrokerID, f, n))
	}
	id, name := *req.BrokerID, *req.BrokerName
	apply := Decision{
		Reply: withExt(codec.Success, "", ext),
		Events: []Event{{Type: EventApplyBrokerID, Cluster: derefOr(req.ClusterName, ""), BrokerName: name,
			BrokerID: id, Addr: addr, CheckCode: *req.CheckCode}},
	}
	g := s.groups[name]
	if g == nil {
		if id == 1 {
			if max := env.Settings.MaxBrokerSets; max > 0 && len(s.groups) >= max {
				return bounded(BoundBrokerSets, fmt.Sprintf("apply broker id refused: this controller holds at most %d broker sets "+
					"(controllerMaxBrokerSets) and %s would be one more; remove unused sets with mqadmin cleanBrokerMetadata, or raise the setting",
					max, clip(name)))
			}
			return apply
		}
		return Decision{Reply: withExt(codec.ControllerBrokerIDInvalid, fmt.Sprintf(
			"Broker-set: %s hasn't been registered in controller, but broker try to apply brokerId: %d", name, id), ext)}
	}
	i, bound := g.broker(id)
	if !bound {
		if max := env.Settings.MaxBrokersPerSet; max > 0 && len(g.Brokers) >= max {
			return bounded(BoundBrokersPerSet, fmt.Sprintf("apply broker id refused: broker set %s holds %d ids, at most %d (controllerMaxBrokersPerSet); "+
				"remove the ids of brokers that are gone with mqadmin cleanBrokerMetadata -b, or raise the setting", clip(name), len(g.Brokers), max))
		}
		return apply
	}
	if g.Brokers[i].CheckCode == *req.CheckCode {
		apply.Events = nil
		return apply
	}
	return Decision{Reply: withExt(codec.ControllerBrokerIDInvalid, fmt.Sprintf(
		"Fail to apply brokerId: %d in broker-set: %s", id, name), ext)}
}

// checkCodeAddr is registerCheckCode.split(";")[0]; ok is false where Java
// fails because the split yields nothing (a code made only of ';').
func checkCodeAddr(code string) (string, bool) {
	i := strings.IndexByte(code, ';')
	if i < 0 {
		return code, true
	}
	if strings.Trim(code, ";") == "" {
		return "", false
	}
	return code[:i], true
}

// MaxFieldBytes bounds each string the controller stores from a request
// (a cluster or broker name, a broker address, a check code), in the
// replicated state and in the liveness table: real ones are a few dozen
// bytes, and a peer could otherwise store a frame's worth per broker.
const MaxFieldBytes = 256

// longField returns the first of the named fields (name, value pairs)
// longer than MaxFieldBytes, and its length; "" when none is.
func longField(kv ...any) (string, int) {
	for i := 0; i+1 < len(kv); i += 2 {
		if v, _ := kv[i+1].(*string); v != nil && len(*v) > MaxFieldBytes {
			return kv[i].(string), len(*v)
		}
	}
	return "", 0
}

// fieldTooLong is the remark refusing a field longer than MaxFieldBytes.
func fieldTooLong(code int32, field string, n int) string {
	return fmt.Sprintf("%s refused: its %s is %d bytes, at most %d", codec.RequestCodeName(code), field, n, MaxFieldBytes)
}

// maxEcho bounds a peer's string quoted in a remark.
const maxEcho = 128

// clip is s cut to maxEcho bytes for a remark.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return strings.ToValidUTF8(s[:maxEcho], "") + "...(" + strconv.Itoa(len(s)) + " bytes)"
}

// bounded is a SYSTEM_ERROR refusal by bound b, as the NameServer answers
// a request past one of its bounds.
func bounded(b Bound, remark string) Decision {
	d := systemError(remark)
	d.Bound = b
	return d
}
