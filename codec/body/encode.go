// Encoders for the bodies the NameServer sends: route, cluster info, topic
// lists, KV tables, data versions and broker member groups.

package body

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// AppendTopicRoute appends the GET_ROUTEINFO_BY_TOPIC body in dialect d.
//
// Bean properties are alphabetical as fastjson writes them. Every
// BrokerData carries enableActingMaster (5.x servers always write it;
// 4.x clients ignore it). filterServerTable is always present and its keys
// are written sorted in both dialects, so equal routes give equal bytes.
// MappingByBroker values are re-encoded for the dialect: strings escaped
// for it, big longs quoted in Standard, and in Legacy the all-digit keys of
// the Integer-keyed maps (currIdMap, hostedQueues) written bare again.
// Members inside a mapping keep their stored order (fastjson writes them
// sorted already). An entry whose stored JSON does not parse is left out
// rather than corrupt the body.
func AppendTopicRoute(dst []byte, r *TopicRoute, d Dialect) []byte {
	dst = append(dst, `{"brokerDatas":[`...)
	for i := range r.BrokerDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendBrokerData(dst, &r.BrokerDatas[i], d)
	}
	dst = append(dst, `],"filterServerTable":`...)
	dst = appendStringListMap(dst, r.FilterServerTable, d)
	if r.OrderTopicConf != "" {
		dst = appendField(dst, true, "orderTopicConf")
		dst = AppendString(dst, r.OrderTopicConf, d)
	}
	dst = append(dst, `,"queueDatas":[`...)
	for i := range r.QueueDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendQueueData(dst, &r.QueueDatas[i], d)
	}
	dst = append(dst, ']')
	if r.MappingByBroker != nil {
		dst = append(dst, `,"topicQueueMappingByBroker":{`...)
		first := true
		for _, name := range sortedKeys(r.MappingByBroker) {
			mark := len(dst)
			if !first {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, name, d)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSON(dst, r.MappingByBroker[name], d); err != nil {
				dst = dst[:mark]
				continue
			}
			first = false
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendBrokerData(dst []byte, b *BrokerData, d Dialect) []byte {
	dst = append(dst, `{"brokerAddrs":`...)
	dst = appendBrokerAddrs(dst, b.Addrs, d)
	dst = appendField(dst, true, "brokerName")
	dst = AppendString(dst, b.BrokerName, d)
	dst = appendField(dst, true, "cluster")
	dst = AppendString(dst, b.Cluster, d)
	dst = appendField(dst, true, "enableActingMaster")
	dst = AppendBool(dst, b.EnableActingMaster)
	if b.ZoneName != "" {
		dst = appendField(dst, true, "zoneName")
		dst = AppendString(dst, b.ZoneName, d)
	}
	return append(dst, '}')
}

// appendBrokerAddrs writes the id -> address map in ascending id order.
// Addrs is normally sorted already; if not, ids are picked in order
// without allocating (groups hold a handful of ids).
func appendBrokerAddrs(dst []byte, addrs []BrokerAddr, d Dialect) []byte {
	dst = append(dst, '{')
	sorted := slices.IsSortedFunc(addrs, ByBrokerID)
	if sorted {
		for i := range addrs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendIntKey(dst, addrs[i].ID, d)
			dst = AppendString(dst, addrs[i].Addr, d)
		}
		return append(dst, '}')
	}
	// Selection by (ID, index): each step takes the smallest pair greater
	// than the previous one, so duplicates keep their relative order.
	lastID, lastIdx := int64(0), -1
	for n := 0; n < len(addrs); n++ {
		best := -1
		for j := range addrs {
			if lastIdx >= 0 && (addrs[j].ID < lastID || addrs[j].ID == lastID && j <= lastIdx) {
				continue
			}
			if best < 0 || addrs[j].ID < addrs[best].ID {
				best = j
			}
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = appendIntKey(dst, addrs[best].ID, d)
		dst = AppendString(dst, addrs[best].Addr, d)
		lastID, lastIdx = addrs[best].ID, best
	}
	return append(dst, '}')
}

func appendQueueData(dst []byte, q *QueueData, d Dialect) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = AppendString(dst, q.BrokerName, d)
	dst = append(dst, `,"perm":`...)
	dst = AppendInt32(dst, q.Perm)
	dst = append(dst, `,"readQueueNums":`...)
	dst = AppendInt32(dst, q.ReadQueueNums)
	dst = append(dst, `,"topicSysFlag":`...)
	dst = AppendInt32(dst, q.TopicSysFlag)
	dst = append(dst, `,"writeQueueNums":`...)
	dst = AppendInt32(dst, q.WriteQueueNums)
	return append(dst, '}')
}

// appendStringListMap writes map[string][]string with sorted keys.
func appendStringListMap(dst []byte, m map[string][]string, d Dialect) []byte {
	dst = append(dst, '{')
	if len(m) == 1 {
		// The common non-empty case; skips the key slice.
		for k, v := range m {
			dst = AppendString(dst, k, d)
			dst = append(dst, ':')
			dst = appendStringList(dst, v, d)
		}
		return append(dst, '}')
	}
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k, d)
		dst = append(dst, ':')
		dst = appendStringList(dst, m[k], d)
	}
	return append(dst, '}')
}

// sortedKeys returns m's keys in the order of the TreeMap that Standard's
// MapSortField writes through. Legacy maps are Java HashMaps, in an order
// no reader relies on; they get the same order so equal maps give equal
// bytes in both dialects.
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	return keys
}

// compareUTF16 orders strings as Java's String.compareTo does, by UTF-16
// code units. That differs from byte (code point) order only where a
// character above U+FFFF meets one in U+E000..U+FFFF: its surrogate pair
// starts below U+E000, so it sorts first. Invalid UTF-8 counts as U+FFFD,
// as Java decodes it; strings still equal then fall back to byte order so
// that the output does not depend on map iteration.
func compareUTF16(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if ca, cb := a[i], b[j]; ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			if ca != cb {
				return cmp.Compare(ca, cb)
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			ha, la := utf16Units(ra)
			hb, lb := utf16Units(rb)
			if ha != hb {
				return cmp.Compare(ha, hb)
			}
			return cmp.Compare(la, lb)
		}
		i += na
		j += nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

// utf16Units returns r's UTF-16 encoding: one unit and 0, or a surrogate
// pair.
func utf16Units(r rune) (rune, rune) {
	if r < 0x10000 {
		return r, 0
	}
	r -= 0x10000
	return 0xD800 + r>>10, 0xDC00 + r&0x3FF
}

// AppendClusterInfo appends the GET_BROKER_CLUSTER_INFO body, always in the
// legacy form (Java never negotiates it). brokerAddrTable follows the order
// of ci.Brokers; clusterAddrTable keys are sorted and each list keeps its
// order. Java writes both in hash order, which no client relies on.
func AppendClusterInfo(dst []byte, ci *ClusterInfo) []byte {
	dst = append(dst, `{"brokerAddrTable":{`...)
	for i := range ci.Brokers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, ci.Brokers[i].BrokerName, Legacy)
		dst = append(dst, ':')
		dst = appendBrokerData(dst, &ci.Brokers[i], Legacy)
	}
	dst = append(dst, `},"clusterAddrTable":`...)
	dst = appendStringListMap(dst, ci.Clusters, Legacy)
	return append(dst, '}')
}

// AppendTopicList appends a TopicList body; brokerAddr is written only
// when not empty (GET_SYSTEM_TOPIC_LIST_FROM_NS sets it).
func AppendTopicList(dst []byte, topics []string, brokerAddr string) []byte {
	dst = append(dst, '{')
	if brokerAddr != "" {
		dst = append(dst, `"brokerAddr":`...)
		dst = AppendString(dst, brokerAddr, Legacy)
		dst = append(dst, ',')
	}
	dst = append(dst, `"topicList":`...)
	dst = appendStringList(dst, topics, Legacy)
	return append(dst, '}')
}

// AppendKVTable appends {"table":{...}} with sorted keys.
func AppendKVTable(dst []byte, table map[string]string) []byte {
	dst = append(dst, `{"table":`...)
	dst = appendStringMap(dst, table)
	return append(dst, '}')
}

// AppendDataVersion appends a 5.x DataVersion; stateVersion is always
// written (a 4.x reader ignores it).
func AppendDataVersion(dst []byte, dv DataVersion) []byte {
	dst = append(dst, `{"counter":`...)
	dst = AppendInt64(dst, dv.Counter, Legacy)
	dst = append(dst, `,"stateVersion":`...)
	dst = AppendInt64(dst, dv.StateVersion, Legacy)
	dst = append(dst, `,"timestamp":`...)
	dst = AppendInt64(dst, dv.Timestamp, Legacy)
	return append(dst, '}')
}

// AppendBrokerMemberGroup appends the GET_BROKER_MEMBER_GROUP body in the
// legacy form; addrs are written in ascending id order.
func AppendBrokerMemberGroup(dst []byte, cluster, brokerName string, addrs []BrokerAddr) []byte {
	dst = append(dst, `{"brokerMemberGroup":{"brokerAddrs":`...)
	dst = appendBrokerAddrs(dst, addrs, Legacy)
	dst = append(dst, `,"brokerName":`...)
	dst = AppendString(dst, brokerName, Legacy)
	dst = append(dst, `,"cluster":`...)
	dst = AppendString(dst, cluster, Legacy)
	return append(dst, "}}"...)
}
