// handlers_admin.go holds the handlers of the admin and topic codes: write
// permissions (205, 327), topic lists (206, 224, 304, 311-313), topic
// deletion and registration (216, 217) and broker member groups (901).
package server

import (
	"strconv"
	"strings"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

// refuseDisabled is Java's answer when enableAllTopicList or enableTopicList
// is off.
func refuseDisabled() error { return refuse(codec.SystemError, "disable") }

func handleWipeWritePerm(s *Server, c *conn, req, resp *codec.Command) error {
	resp.HasExt = true
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	n := s.routes.WipeWritePerm(name)
	s.log.Info("write permission wiped", "broker", name, "topics", n, "peer", c.peer)
	resp.SetExt("wipeTopicCount", strconv.Itoa(n))
	return nil
}

func handleAddWritePerm(s *Server, c *conn, req, resp *codec.Command) error {
	resp.HasExt = true
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	n := s.routes.AddWritePerm(name)
	s.log.Info("write permission added", "broker", name, "topics", n, "peer", c.peer)
	resp.SetExt("addTopicCount", strconv.Itoa(n))
	return nil
}

// writeTopicList answers a TopicList body from a pooled buffer.
func writeTopicList(c *conn, resp *codec.Command, topics []string, brokerAddr string) {
	buf := c.buffer()
	buf.B = body.AppendTopicList(buf.B[:0], topics, brokerAddr)
	resp.Body = buf.B
}

func handleAllTopicList(s *Server, c *conn, req, resp *codec.Command) error {
	if !s.conf().EnableAllTopicList {
		return refuseDisabled()
	}
	writeTopicList(c, resp, s.routes.TopicList(), "")
	return nil
}

// handleTopicsByCluster is GET_TOPICS_BY_CLUSTER; the header field is
// "cluster". A missing or unknown cluster is an empty list, as in Java.
func handleTopicsByCluster(s *Server, c *conn, req, resp *codec.Command) error {
	if !s.conf().EnableTopicList {
		return refuseDisabled()
	}
	cluster, _ := req.ExtValue("cluster")
	writeTopicList(c, resp, s.routes.TopicsByCluster(cluster), "")
	return nil
}

func handleSystemTopicList(s *Server, c *conn, req, resp *codec.Command) error {
	topics, addr := s.routes.SystemTopicList()
	writeTopicList(c, resp, topics, addr)
	return nil
}

func unitTopicHandler(kind route.UnitKind) handler {
	return func(s *Server, c *conn, req, resp *codec.Command) error {
		if !s.conf().EnableTopicList {
			return refuseDisabled()
		}
		writeTopicList(c, resp, s.routes.UnitTopicList(kind), "")
		return nil
	}
}

// handleDeleteTopic is DELETE_TOPIC_IN_NAMESRV: the topic's queues on one
// cluster's broker groups when clusterName is not blank, all of it otherwise.
func handleDeleteTopic(s *Server, c *conn, req, resp *codec.Command) error {
	topic, err := requireString(req, "topic")
	if err != nil {
		return err
	}
	cluster, _ := req.ExtValue("clusterName")
	if strings.TrimSpace(cluster) == "" {
		cluster = ""
	}
	s.routes.DeleteTopic(topic, cluster)
	s.log.Info("topic deleted", "topic", topic, "cluster", cluster, "peer", c.peer)
	return nil
}

// handleRegisterTopic is REGISTER_TOPIC_IN_NAMESRV: only the body's
// queueDatas are used. Queue data naming an unknown broker group stops the
// update there, as in Java; the answer is SUCCESS either way.
func handleRegisterTopic(s *Server, c *conn, req, resp *codec.Command) error {
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
	s.routes.RegisterTopic(topic, r.QueueDatas)
	s.log.Info("topic registered", "topic", topic, "queue_datas", len(r.QueueDatas), "peer", c.peer)
	return nil
}

// handleBrokerMemberGroup is GET_BROKER_MEMBER_GROUP: the request's cluster
// and brokerName echoed with the group's id -> address map, empty when the
// group is unknown.
func handleBrokerMemberGroup(s *Server, c *conn, req, resp *codec.Command) error {
	cluster, err := requireString(req, "clusterName")
	if err != nil {
		return err
	}
	name, err := requireString(req, "brokerName")
	if err != nil {
		return err
	}
	buf := c.buffer()
	buf.B = body.AppendBrokerMemberGroup(buf.B[:0], cluster, name, s.routes.BrokerMemberGroup(name))
	resp.Body = buf.B
	return nil
}
