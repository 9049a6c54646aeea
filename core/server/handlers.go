// handlers.go holds the handlers of the broker, route and KV codes
// (100-106, 219, 322, 904).

package server

import (
	"errors"
	"hash/crc32"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/kv"
	"github.com/rocketns/rocketns/core/logcap"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

// orderTopicNamespace is the KV namespace whose keys are topics and whose
// values are "brokerName:queues;..." order-topic layouts.
const orderTopicNamespace = "ORDER_TOPIC_CONFIG"

const faqSuffix = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// handleRoute is GET_ROUTEINFO_BY_TOPIC, the hot path: the route body is
// encoded once per route change and shared by every answer. Settings are
// read per request, so an UPDATE_NAMESRV_CONFIG applies to the next query.
func (s *Server) handleRoute(c *remoting.Conn, req, resp *codec.Command) error {
	topic, ok := req.ExtValue("topic")
	if !ok {
		return missing("topic")
	}
	cfg := s.conf()
	if cfg.NeedWaitForService && time.Since(s.started) < secondsDuration(cfg.WaitSecondsForService) {
		return refuse(codec.SystemError, "name server not ready")
	}
	dialect := body.Legacy
	if req.Version >= 401 {
		dialect = body.Standard
	} else if v, ok := req.ExtValue("acceptStandardJsonOnly"); ok && javaBool(v) {
		dialect = body.Standard
	}
	var orderConf string
	if cfg.OrderMessageEnable {
		orderConf, _ = s.kv.Get(orderTopicNamespace, topic)
	}
	// Zone mode takes two fields besides the topic: a query with fewer
	// (any but a zone-mode client's) need not look for them.
	zone, zoned := "", false
	if len(req.Ext) >= 3 {
		zone, zoned = zoneOf(req)
	}
	if zoned {
		// Java's zone hook decodes the answer, filters it and re-encodes
		// it in the legacy form whatever was negotiated.
		r, ok := s.routes.ZoneRoute(topic, zone)
		if !ok {
			return topicNotExist(topic)
		}
		r.OrderTopicConf = orderConf
		buf := c.Buffer()
		buf.B = body.AppendTopicRoute(buf.B[:0], r, body.Legacy)
		resp.Body = buf.B
		return nil
	}
	var b []byte
	if orderConf != "" {
		b, ok = s.routes.RouteBodyOrdered(topic, dialect, orderConf)
	} else {
		b, ok = s.routes.RouteBody(topic, dialect)
	}
	if !ok {
		return topicNotExist(topic)
	}
	resp.Body = b
	return nil
}

// peerHost is the host of a connection's peer address, the source a
// registration's topics count against (maxTopicsPerSource).
func peerHost(peer string) string {
	if host, _, err := net.SplitHostPort(peer); err == nil {
		return host
	}
	return peer
}

func topicNotExist(topic string) error {
	return refuse(codec.TopicNotExist, "No topic route info in name server for the topic: "+echoed(topic)+faqSuffix)
}

// maxEcho bounds the request text a remark quotes back. Java quotes it
// whole, and its longest legal names (a topic: 127 characters) fit, so
// normal answers stay Java's; a peer that sends megabytes of control bytes,
// each of which the JSON header writes as a 6-byte escape, cannot make the
// answer six times its request.
const maxEcho = 255

// echoed is s for a remark: whole when short, else its first maxEcho bytes,
// cut on a UTF-8 boundary, and how long it was (the cut the log applies
// to every string, at a shorter length).
func echoed(s string) string { return logcap.Cut(s, maxEcho) }

// zoneOf returns the client's zone when it asks for zone filtering:
// __ZONE_MODE true and a non-blank __ZONE_NAME.
func zoneOf(req *codec.Command) (string, bool) {
	mode, ok := req.ExtValue("__ZONE_MODE")
	if !ok || !javaBool(mode) {
		return "", false
	}
	zone, _ := req.ExtValue("__ZONE_NAME")
	if strings.TrimSpace(zone) == "" {
		return "", false
	}
	return zone, true
}

func (s *Server) handleClusterInfo(c *remoting.Conn, req, resp *codec.Command) error {
	buf := c.Buffer()
	buf.B = s.routes.AppendClusterInfo(buf.B[:0])
	resp.Body = buf.B
	return nil
}

// brokerHeader is the header shared by 103, 104 and 322.
type brokerHeader struct {
	name, addr, cluster string
	id                  int64
}

func readBrokerHeader(req *codec.Command) (h brokerHeader, err error) {
	if h.name, err = requireString(req, "brokerName"); err != nil {
		return h, err
	}
	if h.addr, err = requireString(req, "brokerAddr"); err != nil {
		return h, err
	}
	if h.cluster, err = requireString(req, "clusterName"); err != nil {
		return h, err
	}
	h.id, err = requireInt64(req, "brokerId")
	return h, err
}

// A registration body under smallRegistration costs well under a
// millisecond to decode and apply: it is answered at once, so a broker's
// ordinary registration never waits behind the large ones of others.
// Larger ones wait for their turn in the heavy queue (remoting.Weigh).
const smallRegistration = 64 << 10

// compressedWeight is how much more a compressed body's byte costs than an
// uncompressed one's: its topic records inflate roughly tenfold.
const compressedWeight = 8

// weighRegistration weighs a REGISTER_BROKER by its body: 0 under
// smallRegistration.
func weighRegistration(req *codec.Command) int {
	cost := len(req.Body)
	if v, ok := req.ExtValue("compressed"); ok && javaBool(v) {
		cost *= compressedWeight
	}
	if cost < smallRegistration {
		return 0
	}
	return cost
}

// handleRegister is REGISTER_BROKER; g is who signed it (nobody when
// unsigned), the owner the route table records for the broker.
func (s *Server) handleRegister(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error {
	resp.HasExt = true // Java attaches RegisterBrokerResponseHeader: extFields is {} for a master
	h, err := readBrokerHeader(req)
	if err != nil {
		return err
	}
	ha, _ := req.ExtValue("haServerAddr")
	timeout, _, err := optInt64(req, "heartbeatTimeoutMillis")
	if err != nil {
		return err
	}
	crc, _, err := optInt64(req, "bodyCrc32")
	if err != nil {
		return err
	}
	if crc != 0 && int64(crc32.ChecksumIEEE(req.Body)&0x7FFFFFFF) != crc {
		s.log.Warn("registration refused: crc32 not match", "peer", c.Peer(), "broker", h.name, "addr", h.addr)
		return refuse(codec.SystemError, "crc32 not match")
	}
	compressed := false
	if v, ok := req.ExtValue("compressed"); ok {
		compressed = javaBool(v)
	}
	// A compressed body may inflate to what an uncompressed one may carry.
	rb, err := body.DecodeRegisterBrokerBounded(req.Body, compressed, req.Version, s.maxFrame(), s.cfg.MaxTopicsPerBroker)
	var many *body.TooManyTopicsError
	if errors.As(err, &many) {
		s.metrics.registrationRefused(refusedMaxTopicsPerBroker)
		s.log.Warn("registration refused: too many topics", "peer", c.Peer(), "broker", h.name, "addr", h.addr,
			"topics", many.Count, "limit", many.Max, "setting", "maxTopicsPerBroker")
		// The broker is alive and keeps what it holds (route.Table.KeepAlive).
		s.routes.KeepAlive(&route.Registration{Cluster: h.cluster, BrokerAddr: h.addr, BrokerName: h.name, BrokerID: h.id,
			Owner: g.AccessKey, Override: g.Owns(h.name)})
		return refuse(codec.SystemError, "register broker refused: "+err.Error()+" (maxTopicsPerBroker)")
	}
	if err != nil {
		s.log.Warn("registration refused: bad body", "peer", c.Peer(), "broker", h.name, "addr", h.addr, "err", err)
		return refuse(codec.SystemError, "decode register broker body: "+echoed(err.Error()))
	}
	zone, _ := req.ExtValue("__ZONE_NAME")
	res, err := s.routes.Register(&route.Registration{
		Cluster:                h.cluster,
		BrokerAddr:             h.addr,
		BrokerName:             h.name,
		BrokerID:               h.id,
		HAServerAddr:           ha,
		ZoneName:               zone,
		HeartbeatTimeoutMillis: timeout,
		EnableActingMaster:     optBool(req, "enableActingMaster"),
		Body:                   rb,
		Conn:                   route.ConnID(c.ID()),
		Owner:                  g.AccessKey,
		Override:               g.Owns(h.name),
		Source:                 peerHost(c.Peer()),
	})
	if errors.Is(err, route.ErrFirstSingleTopic) {
		return refuse(codec.SystemError, "register broker failed")
	}
	if errors.Is(err, route.ErrTakeover) {
		s.refuseAuthorization(c, req, resp, &auth.Denial{Code: req.Code, Reason: auth.ReasonTakeover,
			Class: auth.ClassBrokerReport, AccessKey: g.AccessKey, Peer: c.Peer(),
			Detail: echoed(h.name) + " id " + strconv.FormatInt(h.id, 10)})
		return nil
	}
	if errors.Is(err, route.ErrTopicQuota) {
		s.metrics.registrationRefused(refusedTopicQuota)
		s.log.Warn("registration refused: its host brought as many topics as one host may", "peer", c.Peer(), "broker", h.name,
			"addr", h.addr, "topics", len(rb.Topics), "limit", s.cfg.MaxTopicsPerSource, "setting", "maxTopicsPerSource", "err", err)
		return refuse(codec.SystemError, "register broker refused: the registrations from "+peerHost(c.Peer())+" may bring at most "+
			strconv.Itoa(s.cfg.MaxTopicsPerSource)+" topics (maxTopicsPerSource)")
	}
	if errors.Is(err, route.ErrTooManyTopics) {
		s.metrics.registrationRefused(refusedMaxTopics)
		s.log.Warn("registration refused: the route table is at its topic limit", "peer", c.Peer(), "broker", h.name,
			"addr", h.addr, "topics", len(rb.Topics), "limit", s.cfg.MaxTopics, "setting", "maxTopics")
		return refuse(codec.SystemError, "register broker refused: the NameServer holds at most "+strconv.Itoa(s.cfg.MaxTopics)+" topics (maxTopics)")
	}
	if err != nil {
		return err
	}
	changed := res.BrokerChanged || res.TopicsChanged > 0
	s.metrics.registration(changed)
	if changed {
		s.log.Info("broker registered", "cluster", h.cluster, "broker", h.name, "id", h.id, "addr", h.addr,
			"topics", len(rb.Topics), "topics_changed", res.TopicsChanged, "peer", c.Peer())
	}
	if res.HAServerAddr != "" {
		resp.SetExt("haServerAddr", res.HAServerAddr)
	}
	if res.MasterAddr != "" {
		resp.SetExt("masterAddr", res.MasterAddr)
	}
	s.notifyMinBrokerID(res.MinIDChange)
	if s.conf().ReturnOrderTopicConfigToBroker {
		if table, ok := s.kv.Namespace(orderTopicNamespace); ok {
			buf := c.Buffer()
			buf.B = body.AppendKVTable(buf.B[:0], table)
			resp.Body = buf.B
		}
	}
	return nil
}

// handleUnregister is UNREGISTER_BROKER; g is who signed it: a broker
// registered with other credentials stays.
func (s *Server) handleUnregister(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error {
	h, err := readBrokerHeader(req)
	if err != nil {
		return err
	}
	evs, fenced, err := s.routes.UnregisterAs(h.cluster, h.addr, h.name, h.id, g.AccessKey, g.Owns(h.name))
	if errors.Is(err, route.ErrTakeover) {
		s.refuseAuthorization(c, req, resp, &auth.Denial{Code: req.Code, Reason: auth.ReasonTakeover,
			Class: auth.ClassBrokerWrite, AccessKey: g.AccessKey, Peer: c.Peer(),
			Detail: echoed(h.name) + " id " + strconv.FormatInt(h.id, 10)})
		return nil
	}
	if fenced {
		// Still SUCCESS: the broker asked to go, and the registration it
		// meant is already gone.
		s.log.Info("stale unregistration: the address re-registered under another identity, which stays; only what the old registration left is removed",
			"cluster", h.cluster, "broker", h.name, "id", h.id, "addr", h.addr, "peer", c.Peer())
	}
	for _, ev := range evs {
		s.logEviction(ev)
	}
	return nil
}

// handleQueryDataVersion answers whether the broker's topic config changed
// since its last registration; it doubles as a liveness heartbeat.
func (s *Server) handleQueryDataVersion(c *remoting.Conn, req, resp *codec.Command) error {
	resp.HasExt = true
	h, err := readBrokerHeader(req)
	if err != nil {
		return err
	}
	var dv *body.DataVersion
	if len(req.Body) > 0 {
		v, ok, err := body.DecodeDataVersion(req.Body)
		if err != nil {
			return refuse(codec.SystemError, "decode data version: "+echoed(err.Error()))
		}
		if ok {
			dv = &v
		}
	}
	changed, stored, known := s.routes.QueryDataVersion(h.cluster, h.addr, dv)
	if changed {
		resp.SetExt("changed", "true")
	} else {
		resp.SetExt("changed", "false")
	}
	if known {
		buf := c.Buffer()
		buf.B = body.AppendDataVersion(buf.B[:0], stored)
		resp.Body = buf.B
	}
	return nil
}

func (s *Server) handleHeartbeat(c *remoting.Conn, req, resp *codec.Command) error {
	cluster, err := requireString(req, "clusterName")
	if err != nil {
		return err
	}
	addr, err := requireString(req, "brokerAddr")
	if err != nil {
		return err
	}
	s.routes.Heartbeat(cluster, addr)
	return nil
}

// KV handlers. Values are cloned before they are stored: request strings
// alias the connection's read buffer.

func kvKey(req *codec.Command) (ns, key string, err error) {
	ns, okNS := req.ExtValue("namespace")
	key, okKey := req.ExtValue("key")
	if !okNS || !okKey {
		return "", "", refuse(codec.SystemError, "namespace or key is null")
	}
	return ns, key, nil
}

func (s *Server) handlePutKV(c *remoting.Conn, req, resp *codec.Command) error {
	ns, key, err := kvKey(req)
	if err != nil {
		return err
	}
	value, ok := req.ExtValue("value")
	if !ok {
		// Java stores a null: GET answers not found, the file and the
		// namespace's list leave the key out, and the namespace exists
		// even if it did not (219 and registration replies show it empty).
		err = s.kv.PutNull(strings.Clone(ns), strings.Clone(key))
	} else {
		err = s.kv.Put(strings.Clone(ns), strings.Clone(key), strings.Clone(value))
	}
	if err != nil {
		return s.kvWriteFailed(c, "put", ns, key, err)
	}
	s.log.Info("kv config put", "namespace", ns, "key", key, "peer", c.Peer())
	return nil
}

// kvWriteFailed answers a KV write the store refused or could not persist.
// A write over the limits is the peer's to fix and is answered as the store
// says it; a persistence failure is the server's, and its error names the
// file, which the answer does not: the log says where.
func (s *Server) kvWriteFailed(c *remoting.Conn, op, ns, key string, err error) error {
	var le *kv.LimitError
	if errors.As(err, &le) {
		s.log.Info("kv config write refused: over the limits", "op", op, "namespace", ns, "key", key, "peer", c.Peer(), "err", err)
		return refuse(codec.SystemError, "kv config not stored: "+strings.TrimPrefix(le.Error(), "kv: "))
	}
	s.log.Error("kv config write failed", "op", op, "namespace", ns, "key", key, "path", s.kv.Path(), "err", err)
	return refuse(codec.SystemError, "persist kv config: the KV file could not be written; nothing was changed (the NameServer's log says why)")
}

func (s *Server) handleGetKV(c *remoting.Conn, req, resp *codec.Command) error {
	resp.HasExt = true // GetKVConfigResponseHeader: {} even when not found
	ns, key, err := kvKey(req)
	if err != nil {
		return err
	}
	v, ok := s.kv.Get(ns, key)
	if !ok {
		resp.Code = codec.QueryNotFound
		resp.Remark = "No config item, Namespace: " + echoed(ns) + " Key: " + echoed(key)
		return nil
	}
	resp.SetExt("value", v)
	return nil
}

func (s *Server) handleDeleteKV(c *remoting.Conn, req, resp *codec.Command) error {
	ns, key, err := kvKey(req)
	if err != nil {
		return err
	}
	if err := s.kv.Delete(strings.Clone(ns), strings.Clone(key)); err != nil {
		return s.kvWriteFailed(c, "delete", ns, key, err)
	}
	s.log.Info("kv config delete", "namespace", ns, "key", key, "peer", c.Peer())
	return nil
}

func (s *Server) handleKVList(c *remoting.Conn, req, resp *codec.Command) error {
	ns, ok := req.ExtValue("namespace")
	if !ok {
		return missing("namespace")
	}
	table, ok := s.kv.Namespace(ns)
	if !ok {
		return refuse(codec.QueryNotFound, "No config item, Namespace: "+echoed(ns))
	}
	buf := c.Buffer()
	buf.B = body.AppendKVTable(buf.B[:0], table)
	resp.Body = buf.B
	return nil
}
