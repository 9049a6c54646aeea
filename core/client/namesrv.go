// NameServer request helpers: broker registration, heartbeats, route and
// cluster queries, and the KV store, with the header fields Java senders use.

package client

import (
	"context"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

// DefaultBrokerVersion is the request version a Broker with Version 0
// claims: 479, the 5.3.3 ordinal.
const DefaultBrokerVersion int32 = 479

// Namespace of the KV entries the NameServer reads itself.
const NamespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG"

// Broker describes the broker a registration, heartbeat or data-version
// query speaks for.
type Broker struct {
	Cluster, Name, Addr, HAAddr string
	ID                          int64
	// EnableActingMaster nil means a 4.x broker: the header then lacks the
	// field, which is how the NameServer tells old brokers apart.
	EnableActingMaster *bool
	// HeartbeatTimeoutMillis 0 leaves the field out (the server's 120 s).
	HeartbeatTimeoutMillis int64
	Version                int32 // request version; 0 means DefaultBrokerVersion
	Compressed             bool  // send the zlib registration body
	Zone                   string
}

func (b *Broker) version() int32 {
	if b.Version == 0 {
		return DefaultBrokerVersion
	}
	return b.Version
}

// check turns a non-SUCCESS response into a *ResponseError.
func check(resp *codec.Command) error {
	if resp.Code != 0 {
		return &ResponseError{Code: resp.Code, Remark: resp.Remark}
	}
	return nil
}

// call is Invoke plus the code check, with the request code in the error.
func (c *Client) call(ctx context.Context, req *codec.Command) (*codec.Command, error) {
	resp, err := c.Invoke(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := check(resp); err != nil {
		return resp, fmt.Errorf("%s: request code %d: %w", c.addr, req.Code, err)
	}
	return resp, nil
}

// RegisterBroker sends REGISTER_BROKER with the header a Java broker sends
// (field order of a 5.x broker's HashMap) and returns the master and HA
// addresses a slave is told about.
func (c *Client) RegisterBroker(ctx context.Context, b Broker, rb *body.RegisterBroker) (masterAddr, haAddr string, err error) {
	payload, err := body.EncodeRegisterBroker(rb, b.Compressed, b.version())
	if err != nil {
		return "", "", fmt.Errorf("register broker %s at %s: %w", b.Name, b.Addr, err)
	}
	// Java masks the CRC to 31 bits so it fits a positive Integer; a zero
	// would switch the check off, which is fine for an empty body too.
	crc := int64(crc32.ChecksumIEEE(payload) & 0x7FFFFFFF)
	req := &codec.Command{Code: codec.RegisterBroker, Version: b.version(), Body: payload}
	if b.HeartbeatTimeoutMillis != 0 {
		req.SetExt("heartbeatTimeoutMillis", strconv.FormatInt(b.HeartbeatTimeoutMillis, 10))
	}
	req.SetExt("brokerId", strconv.FormatInt(b.ID, 10))
	req.SetExt("bodyCrc32", strconv.FormatInt(crc, 10))
	req.SetExt("clusterName", b.Cluster)
	req.SetExt("brokerAddr", b.Addr)
	if b.EnableActingMaster != nil {
		req.SetExt("enableActingMaster", strconv.FormatBool(*b.EnableActingMaster))
	}
	req.SetExt("haServerAddr", b.HAAddr)
	req.SetExt("compressed", strconv.FormatBool(b.Compressed))
	req.SetExt("brokerName", b.Name)
	if b.Zone != "" {
		req.SetExt("__ZONE_NAME", b.Zone)
	}
	resp, err := c.call(ctx, req)
	if err != nil {
		return "", "", fmt.Errorf("register broker %s at %s: %w", b.Name, b.Addr, err)
	}
	master, _ := resp.ExtValue("masterAddr")
	ha, _ := resp.ExtValue("haServerAddr")
	return master, ha, nil
}

// UnregisterBroker sends UNREGISTER_BROKER. A 5.x-style server removes the
// broker asynchronously, after answering.
func (c *Client) UnregisterBroker(ctx context.Context, b Broker) error {
	req := &codec.Command{Code: codec.UnregisterBroker, Version: b.version()}
	setBrokerIdentity(req, b)
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("unregister broker %s at %s: %w", b.Name, b.Addr, err)
	}
	return nil
}

func setBrokerIdentity(req *codec.Command, b Broker) {
	req.SetExt("brokerId", strconv.FormatInt(b.ID, 10))
	req.SetExt("clusterName", b.Cluster)
	req.SetExt("brokerAddr", b.Addr)
	req.SetExt("brokerName", b.Name)
}

// Heartbeat sends a oneway BROKER_HEARTBEAT, as 5.x brokers do every second
// when told the NameServer is new.
func (c *Client) Heartbeat(b Broker) error {
	req := &codec.Command{Code: codec.BrokerHeartbeat, Version: b.version()}
	req.SetExt("clusterName", b.Cluster)
	req.SetExt("brokerAddr", b.Addr)
	req.SetExt("brokerName", b.Name)
	if err := c.InvokeOneway(req); err != nil {
		return fmt.Errorf("heartbeat broker %s at %s: %w", b.Name, b.Addr, err)
	}
	return nil
}

// QueryDataVersion sends QUERY_DATA_VERSION with dv and reports whether the
// server's stored version differs. It also refreshes the broker's liveness.
func (c *Client) QueryDataVersion(ctx context.Context, b Broker, dv body.DataVersion) (changed bool, err error) {
	req := &codec.Command{Code: codec.QueryDataVersion, Version: b.version(), Body: body.AppendDataVersion(nil, dv)}
	setBrokerIdentity(req, b)
	resp, err := c.call(ctx, req)
	if err != nil {
		return false, fmt.Errorf("query data version of %s at %s: %w", b.Name, b.Addr, err)
	}
	v, _ := resp.ExtValue("changed")
	changed, err = strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("query data version of %s at %s: bad changed field %q: %w", b.Name, b.Addr, v, err)
	}
	return changed, nil
}

// DataVersionHeartbeat sends a oneway QUERY_DATA_VERSION with dv: the
// liveness heartbeat of a 5.x broker in compatibleWithOldNameSrv mode (the
// default). Unlike BROKER_HEARTBEAT, which 4.x NameServers do not know, it
// refreshes the broker on every NameServer version.
func (c *Client) DataVersionHeartbeat(ctx context.Context, b Broker, dv body.DataVersion) error {
	req := &codec.Command{Code: codec.QueryDataVersion, Version: b.version(), Body: body.AppendDataVersion(nil, dv)}
	setBrokerIdentity(req, b)
	if err := c.InvokeOnewayContext(ctx, req); err != nil {
		return fmt.Errorf("data version heartbeat of %s at %s: %w", b.Name, b.Addr, err)
	}
	return nil
}

// RouteBody sends GET_ROUTEINFO_BY_TOPIC with the given request version
// (which picks the body's JSON dialect) and returns the raw answer.
func (c *Client) RouteBody(ctx context.Context, topic string, version int32) (code int32, remark string, payload []byte, err error) {
	req := &codec.Command{Code: codec.GetRouteInfoByTopic, Version: version}
	req.SetExt("topic", topic)
	resp, err := c.Invoke(ctx, req)
	if err != nil {
		return 0, "", nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	return resp.Code, resp.Remark, resp.Body, nil
}

// Route returns the decoded route of topic; a missing topic gives an error
// wrapping *ResponseError with code 17.
func (c *Client) Route(ctx context.Context, topic string) (*body.TopicRoute, error) {
	code, remark, payload, err := c.RouteBody(ctx, topic, codec.ServerVersion)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("%s: route of %s: %w", c.addr, topic, &ResponseError{Code: code, Remark: remark})
	}
	tr, err := body.DecodeTopicRoute(payload)
	if err != nil {
		return nil, fmt.Errorf("%s: route of %s: %w", c.addr, topic, err)
	}
	return tr, nil
}

// ClusterInfo returns the decoded GET_BROKER_CLUSTER_INFO answer.
func (c *Client) ClusterInfo(ctx context.Context) (*body.ClusterInfo, error) {
	resp, err := c.call(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo, Version: codec.ServerVersion})
	if err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	ci, err := body.DecodeClusterInfo(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: cluster info: %w", c.addr, err)
	}
	return ci, nil
}

// PutKV stores value under namespace/key.
func (c *Client) PutKV(ctx context.Context, namespace, key, value string) error {
	req := &codec.Command{Code: codec.PutKVConfig, Version: codec.ServerVersion}
	req.SetExt("namespace", namespace)
	req.SetExt("key", key)
	req.SetExt("value", value)
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("put kv %s/%s: %w", namespace, key, err)
	}
	return nil
}

// GetKV reads namespace/key; a missing key gives an error wrapping
// *ResponseError with code 22.
func (c *Client) GetKV(ctx context.Context, namespace, key string) (string, error) {
	req := &codec.Command{Code: codec.GetKVConfig, Version: codec.ServerVersion}
	req.SetExt("namespace", namespace)
	req.SetExt("key", key)
	resp, err := c.call(ctx, req)
	if err != nil {
		return "", fmt.Errorf("get kv %s/%s: %w", namespace, key, err)
	}
	v, _ := resp.ExtValue("value")
	return v, nil
}

// DeleteKV removes namespace/key; removing a missing key is not an error.
func (c *Client) DeleteKV(ctx context.Context, namespace, key string) error {
	req := &codec.Command{Code: codec.DeleteKVConfig, Version: codec.ServerVersion}
	req.SetExt("namespace", namespace)
	req.SetExt("key", key)
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("delete kv %s/%s: %w", namespace, key, err)
	}
	return nil
}

// KVList returns every entry of namespace; a missing namespace gives an
// error wrapping *ResponseError with code 22.
func (c *Client) KVList(ctx context.Context, namespace string) (map[string]string, error) {
	req := &codec.Command{Code: codec.GetKVListByNamespace, Version: codec.ServerVersion}
	req.SetExt("namespace", namespace)
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kv list %s: %w", namespace, err)
	}
	m, err := body.DecodeKVTable(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: kv list %s: %w", c.addr, namespace, err)
	}
	return m, nil
}
