// Bodies of the RocketMQ 5.x controller protocol: SyncStateSet, the
// CONTROLLER_ELECT_MASTER reply, BrokerReplicasInfo (1006 reply), the 1006
// request's list of broker names, and a broker's EpochEntryCache (1007).

package body

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/rocketns/rocketns/codec/jsontext"
)

// SyncStateSet is the SyncStateSet body (1001 request and reply, 1003,
// 1004, 1008): the ids of the replicas in sync with the master, and the
// epoch of that set.
type SyncStateSet struct {
	IDs   []int64 // ascending, without duplicates
	Epoch int32
}

// AppendSyncStateSet appends {"syncStateSet":[...],"syncStateSetEpoch":n}
// as fastjson writes it. ids should be ascending: Java writes a HashSet,
// whose order for small non-negative ids is ascending.
func AppendSyncStateSet(dst []byte, ids []int64, epoch int32) []byte {
	dst = append(dst, `{"syncStateSet":`...)
	dst = appendIDList(dst, ids)
	dst = append(dst, `,"syncStateSetEpoch":`...)
	dst = AppendInt32(dst, epoch)
	return append(dst, '}')
}

func appendIDList(dst []byte, ids []int64) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendInt64(dst, id, Legacy)
	}
	return append(dst, ']')
}

// errNullIDs is what a null or missing syncStateSet list decodes to: Java
// builds the set with new HashSet<>(list), which throws on null.
var errNullIDs = errors.New("syncStateSet is null")

// DecodeSyncStateSet decodes a SyncStateSet body the way fastjson reads it
// into Java's class: ids and epoch may be numbers or quoted numbers,
// duplicates collapse (it is a Set), unknown members are skipped, a missing
// epoch is 0. A missing or null id list, a null id and anything that is
// not an integer are errors. The JSON literal null decodes to (nil, nil):
// Java's decoder returns null for it, which the caller treats like an
// absent body.
func DecodeSyncStateSet(b []byte) (*SyncStateSet, error) {
	if isNull(b) {
		return nil, nil
	}
	var s SyncStateSet
	seenIDs := false
	it := memberIter{obj: b}
	for it.next() {
		var err error
		switch string(it.key) {
		case "syncStateSet":
			seenIDs = true
			s.IDs, err = decodeIDList(it.val)
		case "syncStateSetEpoch":
			if !isNull(it.val) {
				s.Epoch, err = jsonInt32(it.val)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("decode sync state set: %s: %w", it.key, err)
		}
	}
	if it.err != nil {
		return nil, fmt.Errorf("decode sync state set: %w", it.err)
	}
	if !seenIDs {
		return nil, fmt.Errorf("decode sync state set: %w", errNullIDs)
	}
	return &s, nil
}

// decodeIDList reads a JSON array of broker ids (numbers or quoted
// numbers) into an ascending list without duplicates.
func decodeIDList(val []byte) ([]int64, error) {
	if isNull(val) {
		return nil, errNullIDs
	}
	ids := []int64{}
	err := forEachElement(val, func(elem []byte) error {
		id, err := jsonInt64(elem)
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// forEachElement calls fn with every raw element of the JSON array arr.
func forEachElement(arr []byte, fn func(elem []byte) error) error {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errors.New("expected a JSON array")
	}
	i = skipWS(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return trailing(arr, i+1)
	}
	for {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = skipWS(arr, end)
		if i >= len(arr) {
			return errUnexpectedEnd
		}
		switch arr[i] {
		case ',':
			i = skipWS(arr, i+1)
		case ']':
			return trailing(arr, i+1)
		default:
			return fmt.Errorf("expected ',' or ']' at offset %d", i)
		}
	}
}

// trailing rejects anything but whitespace after a top-level value.
func trailing(b []byte, i int) error {
	if i = skipWS(b, i); i < len(b) {
		return fmt.Errorf("unexpected data after the JSON value at offset %d", i)
	}
	return nil
}

// jsonInt64 reads a Java long; like fastjson it also takes a quoted number.
func jsonInt64(val []byte) (int64, error) {
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		val = val[1 : len(val)-1]
	}
	v, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a long, got %.20q", val)
	}
	return v, nil
}

// MemberGroup is a BrokerMemberGroup as the controller sends it inside an
// election reply: every registered id of a broker set with its address.
type MemberGroup struct {
	Cluster    string
	BrokerName string
	Addrs      []BrokerAddr // ascending by ID
}

// ElectMasterBody is the CONTROLLER_ELECT_MASTER reply body.
type ElectMasterBody struct {
	// Group is nil when the body has none (the old master was kept, 2011).
	Group        *MemberGroup
	SyncStateSet []int64
}

// AppendElectMasterBody appends an ElectMasterResponseBody in fastjson's
// form: brokerAddrs keys are bare integers ({1:"127.0.0.1:30911"}), which
// Java also reads back when quoted; g == nil leaves brokerMemberGroup out.
func AppendElectMasterBody(dst []byte, g *MemberGroup, syncStateSet []int64) []byte {
	dst = append(dst, '{')
	if g != nil {
		dst = append(dst, `"brokerMemberGroup":{"brokerAddrs":`...)
		dst = appendBrokerAddrs(dst, g.Addrs, Legacy)
		dst = append(dst, `,"brokerName":`...)
		dst = AppendString(dst, g.BrokerName, Legacy)
		dst = append(dst, `,"cluster":`...)
		dst = AppendString(dst, g.Cluster, Legacy)
		dst = append(dst, "},"...)
	}
	dst = append(dst, `"syncStateSet":`...)
	dst = appendIDList(dst, syncStateSet)
	return append(dst, '}')
}

// DecodeElectMasterBody decodes an ElectMasterResponseBody, bare or quoted
// keys alike. A missing syncStateSet reads as empty.
func DecodeElectMasterBody(b []byte) (*ElectMasterBody, error) {
	var v struct {
		Group *struct {
			Cluster     string           `json:"cluster"`
			BrokerName  string           `json:"brokerName"`
			BrokerAddrs map[int64]string `json:"brokerAddrs"`
		} `json:"brokerMemberGroup"`
		SyncStateSet []int64 `json:"syncStateSet"`
	}
	if err := jsonAPI.Unmarshal(Lenient(b), &v); err != nil {
		return nil, fmt.Errorf("decode elect master body: %w", err)
	}
	out := &ElectMasterBody{SyncStateSet: v.SyncStateSet}
	if out.SyncStateSet == nil {
		out.SyncStateSet = []int64{}
	}
	slices.Sort(out.SyncStateSet)
	out.SyncStateSet = slices.Compact(out.SyncStateSet)
	if g := v.Group; g != nil {
		out.Group = &MemberGroup{Cluster: g.Cluster, BrokerName: g.BrokerName, Addrs: []BrokerAddr{}}
		for id, addr := range g.BrokerAddrs {
			out.Group.Addrs = append(out.Group.Addrs, BrokerAddr{ID: id, Addr: addr})
		}
		slices.SortFunc(out.Group.Addrs, ByBrokerID)
	}
	return out, nil
}

// ReplicaIdentity is one replica of a set in a BrokerReplicasInfo body.
type ReplicaIdentity struct {
	BrokerName    string
	BrokerID      int64
	BrokerAddress string
	Alive         bool
}

// ReplicasInfo is one broker set of a BrokerReplicasInfo body.
type ReplicasInfo struct {
	BrokerName string // its replicasInfoTable key
	// HasMaster and HasMasterAddress tell whether masterBrokerId and
	// masterAddress are written: Java leaves out the id when the set has
	// no master, and the address when that id is not registered.
	HasMaster         bool
	MasterBrokerID    int64
	HasMasterAddress  bool
	MasterAddress     string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	InSync            []ReplicaIdentity // ascending by id
	NotInSync         []ReplicaIdentity // ascending by id
}

// AppendBrokerReplicasInfo appends the CONTROLLER_GET_SYNC_STATE_DATA reply
// body. Sets are written in the order given (Java's is HashMap order,
// which no reader relies on).
func AppendBrokerReplicasInfo(dst []byte, sets []ReplicasInfo) []byte {
	dst = append(dst, `{"replicasInfoTable":{`...)
	for i := range sets {
		r := &sets[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, r.BrokerName, Legacy)
		dst = append(dst, `:{"inSyncReplicas":`...)
		dst = appendReplicas(dst, r.InSync)
		if r.HasMasterAddress {
			dst = append(dst, `,"masterAddress":`...)
			dst = AppendString(dst, r.MasterAddress, Legacy)
		}
		if r.HasMaster {
			dst = append(dst, `,"masterBrokerId":`...)
			dst = AppendInt64(dst, r.MasterBrokerID, Legacy)
		}
		dst = append(dst, `,"masterEpoch":`...)
		dst = AppendInt32(dst, r.MasterEpoch)
		dst = append(dst, `,"notInSyncReplicas":`...)
		dst = appendReplicas(dst, r.NotInSync)
		dst = append(dst, `,"syncStateSetEpoch":`...)
		dst = AppendInt32(dst, r.SyncStateSetEpoch)
		dst = append(dst, '}')
	}
	return append(dst, "}}"...)
}

func appendReplicas(dst []byte, rs []ReplicaIdentity) []byte {
	dst = append(dst, '[')
	for i := range rs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"alive":`...)
		dst = AppendBool(dst, rs[i].Alive)
		dst = append(dst, `,"brokerAddress":`...)
		dst = AppendString(dst, rs[i].BrokerAddress, Legacy)
		dst = append(dst, `,"brokerId":`...)
		dst = AppendInt64(dst, rs[i].BrokerID, Legacy)
		dst = append(dst, `,"brokerName":`...)
		dst = AppendString(dst, rs[i].BrokerName, Legacy)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

type replicaIdentityJSON struct {
	BrokerName    string `json:"brokerName"`
	BrokerID      int64  `json:"brokerId"`
	BrokerAddress string `json:"brokerAddress"`
	Alive         bool   `json:"alive"`
}

type replicasInfoJSON struct {
	MasterBrokerID    *int64                `json:"masterBrokerId"`
	MasterAddress     *string               `json:"masterAddress"`
	MasterEpoch       int32                 `json:"masterEpoch"`
	SyncStateSetEpoch int32                 `json:"syncStateSetEpoch"`
	InSync            []replicaIdentityJSON `json:"inSyncReplicas"`
	NotInSync         []replicaIdentityJSON `json:"notInSyncReplicas"`
}

// DecodeBrokerReplicasInfo decodes a BrokerReplicasInfo body; the sets come
// back in the body's order.
func DecodeBrokerReplicasInfo(b []byte) ([]ReplicasInfo, error) {
	var out []ReplicasInfo
	err := forEachMember(b, func(key, val []byte) error {
		if string(key) != "replicasInfoTable" {
			return nil
		}
		return forEachMember(val, func(name, set []byte) error {
			brokerName, err := jsontext.Unquote(name)
			if err != nil {
				return err
			}
			var v replicasInfoJSON
			if err := jsonAPI.Unmarshal(set, &v); err != nil {
				return fmt.Errorf("%s: %w", brokerName, err)
			}
			r := ReplicasInfo{
				BrokerName:        brokerName,
				MasterEpoch:       v.MasterEpoch,
				SyncStateSetEpoch: v.SyncStateSetEpoch,
				InSync:            replicaIdentities(v.InSync),
				NotInSync:         replicaIdentities(v.NotInSync),
			}
			if v.MasterBrokerID != nil {
				r.HasMaster, r.MasterBrokerID = true, *v.MasterBrokerID
			}
			if v.MasterAddress != nil {
				r.HasMasterAddress, r.MasterAddress = true, *v.MasterAddress
			}
			out = append(out, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("decode broker replicas info: %w", err)
	}
	if out == nil {
		out = []ReplicasInfo{}
	}
	return out, nil
}

func replicaIdentities(in []replicaIdentityJSON) []ReplicaIdentity {
	out := make([]ReplicaIdentity, len(in))
	for i, r := range in {
		out[i] = ReplicaIdentity(r)
	}
	return out
}

// AppendBrokerNames appends the CONTROLLER_GET_SYNC_STATE_DATA request
// body: a compact JSON array of broker names, as mqadmin sends it.
func AppendBrokerNames(dst []byte, names []string) []byte {
	return appendStringList(dst, names, Legacy)
}

// DecodeBrokerNames decodes the CONTROLLER_GET_SYNC_STATE_DATA request
// body, a JSON array of broker names (whitespace allowed, as fastjson
// allows it). Java reads it into a raw List and then uses every element as
// a String, so a non-string or null element fails the request; so does
// anything that is not an array.
func DecodeBrokerNames(b []byte) ([]string, error) {
	names := []string{}
	err := forEachElement(b, func(elem []byte) error {
		s, err := jsonString(elem)
		if err != nil {
			return err
		}
		names = append(names, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decode broker names: %w", err)
	}
	return names, nil
}

// EpochEntry is one <epoch, startOffset, endOffset> of a broker's epoch
// history.
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
	EndOffset   int64 `json:"endOffset"`
}

// EpochEntryCache is the GET_BROKER_EPOCH_CACHE (1007) reply body a broker
// sends to mqadmin.
type EpochEntryCache struct {
	ClusterName string       `json:"clusterName"`
	BrokerName  string       `json:"brokerName"`
	BrokerID    int64        `json:"brokerId"`
	EpochList   []EpochEntry `json:"epochList"`
	MaxOffset   int64        `json:"maxOffset"`
}

// AppendEpochEntryCache appends c as a Java broker writes it.
func AppendEpochEntryCache(dst []byte, c *EpochEntryCache) []byte {
	dst = append(dst, `{"brokerId":`...)
	dst = AppendInt64(dst, c.BrokerID, Legacy)
	dst = append(dst, `,"brokerName":`...)
	dst = AppendString(dst, c.BrokerName, Legacy)
	dst = append(dst, `,"clusterName":`...)
	dst = AppendString(dst, c.ClusterName, Legacy)
	dst = append(dst, `,"epochList":[`...)
	for i, e := range c.EpochList {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"endOffset":`...)
		dst = AppendInt64(dst, e.EndOffset, Legacy)
		dst = append(dst, `,"epoch":`...)
		dst = AppendInt32(dst, e.Epoch)
		dst = append(dst, `,"startOffset":`...)
		dst = AppendInt64(dst, e.StartOffset, Legacy)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"maxOffset":`...)
	dst = AppendInt64(dst, c.MaxOffset, Legacy)
	return append(dst, '}')
}

// DecodeEpochEntryCache decodes an EpochEntryCache body.
func DecodeEpochEntryCache(b []byte) (*EpochEntryCache, error) {
	var c EpochEntryCache
	if err := jsonAPI.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decode epoch entry cache: %w", err)
	}
	if c.EpochList == nil {
		c.EpochList = []EpochEntry{}
	}
	return &c, nil
}
