// NameServer admin request helpers: write permissions, topic lists, topic
// deletion and registration, the server's own configuration, broker member
// groups and stored data versions, with the header fields mqadmin sends.

package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
)

// WipeWritePerm sends WIPE_WRITE_PERM_OF_BROKER (205): the NameServer
// clears the write bit of every queue brokerName serves and answers how many
// topics it touched. Only the NameServer's copy changes; the broker's next
// changed registration restores its own perms.
func (c *Client) WipeWritePerm(ctx context.Context, brokerName string) (int, error) {
	return c.writePerm(ctx, codec.WipeWritePermOfBroker, "wipeTopicCount", "wipe write perm", brokerName)
}

// AddWritePerm sends ADD_WRITE_PERM_OF_BROKER (327, 5.x): the queues of
// brokerName get perm READ|WRITE (6) and the answer counts the topics
// touched. A 4.x NameServer answers code 3.
func (c *Client) AddWritePerm(ctx context.Context, brokerName string) (int, error) {
	return c.writePerm(ctx, codec.AddWritePermOfBroker, "addTopicCount", "add write perm", brokerName)
}

func (c *Client) writePerm(ctx context.Context, code int32, countKey, what, brokerName string) (int, error) {
	req := &codec.Command{Code: code, Version: codec.ServerVersion}
	req.SetExt("brokerName", brokerName)
	resp, err := c.call(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", what, brokerName, err)
	}
	v, ok := resp.ExtValue(countKey)
	if !ok {
		return 0, fmt.Errorf("%s: %s of %s: response lacks %s", c.addr, what, brokerName, countKey)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %s of %s: bad %s %q: %w", c.addr, what, brokerName, countKey, v, err)
	}
	return n, nil
}

// topicList sends a request whose answer is a TopicList body.
func (c *Client) topicList(ctx context.Context, req *codec.Command, what string) (topics []string, brokerAddr string, err error) {
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", what, err)
	}
	topics, brokerAddr, err = body.DecodeTopicList(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %s: %w", c.addr, what, err)
	}
	if topics == nil {
		topics = []string{}
	}
	return topics, brokerAddr, nil
}

// AllTopicList sends GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206), in pages of
// topicPageSize: a list of hundreds of thousands of topics does not fit one
// frame. rocketns answers each page and names where the next one starts; a
// Java NameServer ignores the paging fields and answers the whole list,
// which then is the only page. A server with enableAllTopicList=false
// answers SYSTEM_ERROR "disable".
func (c *Client) AllTopicList(ctx context.Context) ([]string, error) {
	var all []string
	after := ""
	for page := 0; ; page++ {
		req := &codec.Command{Code: codec.GetAllTopicListFromNameServer, Version: codec.ServerVersion}
		req.SetExt(pageSizeKey, strconv.Itoa(topicPageSize))
		if page > 0 {
			req.SetExt(pageAfterKey, after)
		}
		resp, err := c.call(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("all topic list: %w", err)
		}
		topics, _, err := body.DecodeTopicList(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("%s: all topic list: %w", c.addr, err)
		}
		all = append(all, topics...)
		next, more := resp.ExtValue(nextAfterKey)
		if !more {
			break
		}
		if next <= after {
			return nil, fmt.Errorf("%s: all topic list: page %d does not move forward (%q after %q)", c.addr, page, next, after)
		}
		after = next
	}
	if all == nil {
		all = []string{}
	}
	return all, nil
}

// The paging extension of 206 (see the server's handleAllTopicList).
const (
	pageSizeKey   = "rocketnsPageSize"
	pageAfterKey  = "rocketnsPageAfter"
	nextAfterKey  = "rocketnsNextPageAfter"
	topicPageSize = 20000
)

// TopicsByCluster sends GET_TOPICS_BY_CLUSTER (224): the topics with queues
// on any broker of cluster. The header field is "cluster", not
// "clusterName", as in Java's GetTopicsByClusterRequestHeader.
func (c *Client) TopicsByCluster(ctx context.Context, cluster string) ([]string, error) {
	req := &codec.Command{Code: codec.GetTopicsByCluster, Version: codec.ServerVersion}
	req.SetExt("cluster", cluster)
	topics, _, err := c.topicList(ctx, req, "topics of cluster "+cluster)
	return topics, err
}

// SystemTopicList sends GET_SYSTEM_TOPIC_LIST_FROM_NS (304): every cluster
// and broker name (the names of their auto-created topics) and the address
// of one broker.
func (c *Client) SystemTopicList(ctx context.Context) (topics []string, brokerAddr string, err error) {
	return c.topicList(ctx, &codec.Command{Code: codec.GetSystemTopicListFromNS, Version: codec.ServerVersion}, "system topic list")
}

// UnitTopicList sends GET_UNIT_TOPIC_LIST (311).
func (c *Client) UnitTopicList(ctx context.Context) ([]string, error) {
	topics, _, err := c.topicList(ctx, &codec.Command{Code: codec.GetUnitTopicList, Version: codec.ServerVersion}, "unit topic list")
	return topics, err
}

// HasUnitSubTopicList sends GET_HAS_UNIT_SUB_TOPIC_LIST (312).
func (c *Client) HasUnitSubTopicList(ctx context.Context) ([]string, error) {
	topics, _, err := c.topicList(ctx, &codec.Command{Code: codec.GetHasUnitSubTopicList, Version: codec.ServerVersion}, "has-unit-sub topic list")
	return topics, err
}

// HasUnitSubUnUnitTopicList sends GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313).
func (c *Client) HasUnitSubUnUnitTopicList(ctx context.Context) ([]string, error) {
	topics, _, err := c.topicList(ctx, &codec.Command{Code: codec.GetHasUnitSubUnUnitTopicList, Version: codec.ServerVersion}, "has-unit-sub-ununit topic list")
	return topics, err
}

// DeleteTopic sends DELETE_TOPIC_IN_NAMESRV (216). An empty cluster removes
// the topic entirely; otherwise only the queues on that cluster's brokers
// go. The field is left out when cluster is empty, as mqadmin does.
func (c *Client) DeleteTopic(ctx context.Context, topic, cluster string) error {
	req := &codec.Command{Code: codec.DeleteTopicInNamesrv, Version: codec.ServerVersion}
	req.SetExt("topic", topic)
	if cluster != "" {
		req.SetExt("clusterName", cluster)
	}
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	return nil
}

// RegisterTopic sends REGISTER_TOPIC_IN_NAMESRV (217, 5.x) with a
// TopicRouteData body holding only queues, the body a 5.x broker sends. The
// server ignores queues of brokers it does not know and still answers
// SUCCESS, so callers that care read the route back.
func (c *Client) RegisterTopic(ctx context.Context, topic string, queues []body.QueueData) error {
	req := &codec.Command{Code: codec.RegisterTopicInNamesrv, Version: codec.ServerVersion}
	req.SetExt("topic", topic)
	req.Body = body.AppendTopicRoute(nil, &body.TopicRoute{QueueDatas: queues}, body.Legacy)
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("register topic %s: %w", topic, err)
	}
	return nil
}

// UpdateNamesrvConfig sends UPDATE_NAMESRV_CONFIG (318) with pairs as
// properties text, in the given order: ordinary keys and values go out
// byte for byte as mqadmin sends them, and the few characters Java's
// Properties.load would read differently are escaped. Blacklisted keys get
// NO_PERMISSION (16) and nothing of the request is applied.
func (c *Client) UpdateNamesrvConfig(ctx context.Context, pairs []properties.Property) error {
	req := &codec.Command{Code: codec.UpdateNamesrvConfig, Version: codec.ServerVersion, Body: properties.Append(nil, pairs)}
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("update namesrv config: %w", err)
	}
	return nil
}

// UpdateNamesrvConfigMap is UpdateNamesrvConfig with the keys of m sorted,
// so the body is the same for the same map.
func (c *Client) UpdateNamesrvConfigMap(ctx context.Context, m map[string]string) error {
	pairs := make([]properties.Property, 0, len(m))
	for k, v := range m {
		pairs = append(pairs, properties.Property{Key: k, Value: v})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].Key < pairs[j].Key })
	return c.UpdateNamesrvConfig(ctx, pairs)
}

// GetNamesrvConfig sends GET_NAMESRV_CONFIG (319) and returns the body text
// as sent and its entries as Properties.load reads them (mqadmin parses it
// the same way), in text order.
func (c *Client) GetNamesrvConfig(ctx context.Context) (text string, pairs []properties.Property, err error) {
	resp, err := c.call(ctx, &codec.Command{Code: codec.GetNamesrvConfig, Version: codec.ServerVersion})
	if err != nil {
		return "", nil, fmt.Errorf("get namesrv config: %w", err)
	}
	if !utf8.Valid(resp.Body) {
		return "", nil, fmt.Errorf("%s: get namesrv config: body is not UTF-8", c.addr)
	}
	pairs, err = properties.Parse(bytes.NewReader(resp.Body))
	if err != nil {
		return "", nil, fmt.Errorf("%s: get namesrv config: %w", c.addr, err)
	}
	return string(resp.Body), pairs, nil
}

// BrokerMemberGroup is the GET_BROKER_MEMBER_GROUP answer: the addresses of
// one broker group, by id ascending.
type BrokerMemberGroup struct {
	Cluster    string
	BrokerName string
	Addrs      []body.BrokerAddr
}

// GetBrokerMemberGroup sends GET_BROKER_MEMBER_GROUP (901, 5.x). An unknown
// group is not an error: it comes back with no addresses.
func (c *Client) GetBrokerMemberGroup(ctx context.Context, cluster, brokerName string) (*BrokerMemberGroup, error) {
	req := &codec.Command{Code: codec.GetBrokerMemberGroup, Version: codec.ServerVersion}
	req.SetExt("clusterName", cluster)
	req.SetExt("brokerName", brokerName)
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("broker member group %s/%s: %w", cluster, brokerName, err)
	}
	g, err := DecodeBrokerMemberGroup(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: broker member group %s/%s: %w", c.addr, cluster, brokerName, err)
	}
	return g, nil
}

// DecodeBrokerMemberGroup reads a GetBrokerMemberGroupResponseBody in either
// JSON dialect (fastjson writes the id keys bare).
func DecodeBrokerMemberGroup(b []byte) (*BrokerMemberGroup, error) {
	var v struct {
		BrokerMemberGroup *struct {
			Cluster     string            `json:"cluster"`
			BrokerName  string            `json:"brokerName"`
			BrokerAddrs map[string]string `json:"brokerAddrs"`
		} `json:"brokerMemberGroup"`
	}
	if err := json.Unmarshal(body.Lenient(b), &v); err != nil {
		return nil, fmt.Errorf("decode broker member group: %w", err)
	}
	if v.BrokerMemberGroup == nil {
		return nil, fmt.Errorf("decode broker member group: no brokerMemberGroup in %q", b)
	}
	g := &BrokerMemberGroup{Cluster: v.BrokerMemberGroup.Cluster, BrokerName: v.BrokerMemberGroup.BrokerName,
		Addrs: make([]body.BrokerAddr, 0, len(v.BrokerMemberGroup.BrokerAddrs))}
	for k, addr := range v.BrokerMemberGroup.BrokerAddrs {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("decode broker member group: broker id %q: %w", k, err)
		}
		g.Addrs = append(g.Addrs, body.BrokerAddr{ID: id, Addr: addr})
	}
	slices.SortFunc(g.Addrs, body.ByBrokerID)
	return g, nil
}

// BrokerDataVersion asks, with QUERY_DATA_VERSION (322), which topic-config
// version the NameServer holds for broker b (cluster, address, name, id).
// known is false when the server has no live entry for it. The request
// carries an all-zero DataVersion rather than no body: a 4.x server fails on
// a missing body, and no broker ever sends the zero version.
//
// 322 doubles as a broker heartbeat, so asking about a live broker also
// refreshes its liveness, exactly as it does when a Java tool asks.
func (c *Client) BrokerDataVersion(ctx context.Context, b Broker) (dv body.DataVersion, known bool, err error) {
	req := &codec.Command{Code: codec.QueryDataVersion, Version: b.version(), Body: body.AppendDataVersion(nil, body.DataVersion{})}
	setBrokerIdentity(req, b)
	resp, err := c.call(ctx, req)
	if err != nil {
		return dv, false, fmt.Errorf("data version of %s at %s: %w", b.Name, b.Addr, err)
	}
	if len(resp.Body) == 0 {
		return dv, false, nil
	}
	dv, ok, err := body.DecodeDataVersion(resp.Body)
	if err != nil {
		return dv, false, fmt.Errorf("%s: data version of %s at %s: %w", c.addr, b.Name, b.Addr, err)
	}
	return dv, ok, nil
}
