// handlers_admin.go holds the handlers of the admin and topic codes: write
// permissions (205, 327), topic lists (206, 224, 304, 311-313), topic
// deletion and registration (216, 217) and broker member groups (901).

package server

import (
	"strconv"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

// refuseDisabled is Java's answer when enableAllTopicList or enableTopicList
// is off.
func refuseDisabled() error { return refuse(codec.SystemError, "disable") }

func (s *Server) handleWipeWritePerm(c *remoting.Conn, req, resp *codec.Command) error {
	resp.HasExt = true
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	n := s.routes.WipeWritePerm(name)
	s.log.Info("write permission wiped", "broker", name, "topics", n, "peer", c.Peer())
	resp.SetExt("wipeTopicCount", strconv.Itoa(n))
	return nil
}

func (s *Server) handleAddWritePerm(c *remoting.Conn, req, resp *codec.Command) error {
	resp.HasExt = true
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	n := s.routes.AddWritePerm(name)
	s.log.Info("write permission added", "broker", name, "topics", n, "peer", c.Peer())
	resp.SetExt("addTopicCount", strconv.Itoa(n))
	return nil
}

// writeTopicList answers a TopicList body from a pooled buffer.
func writeTopicList(c *remoting.Conn, resp *codec.Command, topics []string, brokerAddr string) {
	buf := c.Buffer()
	buf.B = body.AppendTopicList(buf.B[:0], topics, brokerAddr)
	resp.Body = buf.B
}

func (s *Server) handleAllTopicList(c *remoting.Conn, req, resp *codec.Command) error {
	if !s.conf().EnableAllTopicList {
		return refuseDisabled()
	}
	writeTopicList(c, resp, s.routes.TopicList(), "")
	return nil
}

// handleTopicsByCluster is GET_TOPICS_BY_CLUSTER; the header field is
// "cluster". A missing or unknown cluster is an empty list, as in Java.
func (s *Server) handleTopicsByCluster(c *remoting.Conn, req, resp *codec.Command) error {
	if !s.conf().EnableTopicList {
		return refuseDisabled()
	}
	cluster, _ := req.ExtValue("cluster")
	writeTopicList(c, resp, s.routes.TopicsByCluster(cluster), "")
	return nil
}

func (s *Server) handleSystemTopicList(c *remoting.Conn, req, resp *codec.Command) error {
	topics, addr := s.routes.SystemTopicList()
	writeTopicList(c, resp, topics, addr)
	return nil
}

func (s *Server) unitTopicHandler(kind route.UnitKind) remoting.Handler {
	return func(c *remoting.Conn, req, resp *codec.Command) error {
		if !s.conf().EnableTopicList {
			return refuseDisabled()
		}
		writeTopicList(c, resp, s.routes.UnitTopicList(kind), "")
		return nil
	}
}

// handleDeleteTopic is DELETE_TOPIC_IN_NAMESRV: the topic's queues on one
// cluster's broker groups when clusterName is not empty, all of it
// otherwise. A clusterName of spaces names a cluster, as in Java (which
// tests isEmpty): one that does not exist, so nothing is deleted. Taking it
// for "everywhere" would turn a typo into the deletion of the whole topic.
func (s *Server) handleDeleteTopic(c *remoting.Conn, req, resp *codec.Command) error {
	topic, err := requireString(req, "topic")
	if err != nil {
		return err
	}
	cluster, _ := req.ExtValue("clusterName")
	s.routes.DeleteTopic(topic, cluster)
	s.log.Info("topic deleted", "topic", topic, "cluster", cluster, "peer", c.Peer())
	return nil
}

// handleRegisterTopic is REGISTER_TOPIC_IN_NAMESRV: only the body's
// queueDatas are used. Queue data naming an unknown broker group stops the
// update there, as in Java; the answer is SUCCESS either way.
// handleRegisterTopic is REGISTER_TOPIC_IN_NAMESRV; a broker account bound
// to brokerNames (g) may register queue data of those brokers only.
func (s *Server) handleRegisterTopic(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error {
	topic, err := requireString(req, "topic")
	if err != nil {
		return err
	}
	if len(req.Body) == 0 {
		return nil
	}
	r, err := body.DecodeTopicRoute(req.Body)
	if err != nil {
		return refuse(codec.SystemError, "decode topic route body: "+echoed(err.Error()))
	}
	if len(r.QueueDatas) == 0 {
		return nil
	}
	for _, q := range r.QueueDatas {
		if !g.MayActFor(q.BrokerName) {
			s.refuseAuthorization(c, req, resp, &auth.Denial{Code: req.Code, Reason: auth.ReasonBinding,
				Class: auth.ClassBrokerWrite, AccessKey: g.AccessKey, Peer: c.Peer(),
				Detail: "broker " + strconv.Quote(echoed(q.BrokerName))})
			return nil
		}
	}
	s.routes.RegisterTopic(topic, r.QueueDatas)
	s.log.Info("topic registered", "topic", topic, "queue_datas", len(r.QueueDatas), "peer", c.Peer())
	return nil
}

// memberGroupRemark is what Java 5.x answers GET_BROKER_MEMBER_GROUP with
// on success: its handler starts from createResponseCommand's default
// remark and never clears it (still so in 5.3.3).
const memberGroupRemark = "not set any response code"

// handleBrokerMemberGroup is GET_BROKER_MEMBER_GROUP: the request's cluster
// and brokerName echoed with the group's id -> address map, empty when the
// group is unknown, and Java's leftover remark.
func (s *Server) handleBrokerMemberGroup(c *remoting.Conn, req, resp *codec.Command) error {
	cluster, err := requireString(req, "clusterName")
	if err != nil {
		return err
	}
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	buf := c.Buffer()
	buf.B = body.AppendBrokerMemberGroup(buf.B[:0], cluster, name, s.routes.BrokerMemberGroup(name))
	resp.Body = buf.B
	resp.Remark = memberGroupRemark
	return nil
}
