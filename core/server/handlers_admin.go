// handlers_admin.go holds the handlers of the admin and topic codes: write
// permissions (205, 327), topic lists (206, 224, 304, 311-313), topic
// deletion and registration (216, 217) and broker member groups (901).

package server

import (
	"fmt"
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

// writeTopicList answers a TopicList body the route table encoded once for
// its current state and shares between answers, as route bodies are, or
// refuses a list whose frame would pass the frame limit: the peer (a Java
// client with the same frameMaxLength) would refuse the frame and close the
// connection, an answer it cannot read.
func (s *Server) writeTopicList(resp *codec.Command, l *route.EncodedList) error {
	if n := len(l.Body); n > s.maxFrame()-topicListHeadroom {
		return refuse(codec.SystemError, fmt.Sprintf("the topic list (%d topics, %d bytes) does not fit a %d-byte frame (frameMaxLength): "+
			"ask for it in pages (rocketns client, nsadmin topicList) or by cluster", l.Topics, n, s.maxFrame()))
	}
	resp.Body = l.Body
	return nil
}

// topicListHeadroom is what a topic list's frame holds beside its body:
// the length words and the reply header.
const topicListHeadroom = 64 << 10

// The paging extension of GET_ALL_TOPIC_LIST_FROM_NAMESERVER. A request
// with pageSizeKey is answered with at most that many topics (and at most
// maxTopicPage), sorted, after the name in pageAfterKey; the answer carries
// nextAfterKey when more follow. A request without it (every Java client)
// gets the whole list as Java answers it, or a refusal when that does not
// fit a frame. A Java NameServer ignores both keys and answers the whole
// list, without nextAfterKey: a client asking for pages reads it as the
// last page.
const (
	pageSizeKey  = "rocketnsPageSize"
	pageAfterKey = "rocketnsPageAfter"
	nextAfterKey = "rocketnsNextPageAfter"
	maxTopicPage = 50000
)

func (s *Server) handleAllTopicList(c *remoting.Conn, req, resp *codec.Command) error {
	if !s.conf().EnableAllTopicList {
		return refuseDisabled()
	}
	size, paged, err := optInt64(req, pageSizeKey)
	if err != nil {
		return err
	}
	if !paged {
		return s.writeTopicList(resp, s.routes.TopicListBody())
	}
	if size <= 0 {
		return refuse(codec.SystemError, pageSizeKey+" must be positive")
	}
	after, _ := req.ExtValue(pageAfterKey)
	page, more := s.routes.TopicPage(after, int(min(size, maxTopicPage)))
	// A page of long names may still not fit a frame: halve it until it
	// does (the client asks again from where it ends).
	buf := c.Buffer()
	for {
		buf.B = body.AppendTopicList(buf.B[:0], page, "")
		if len(buf.B) <= s.maxFrame()-topicListHeadroom || len(page) <= 1 {
			break
		}
		page, more = page[:len(page)/2], true
	}
	if len(buf.B) > s.maxFrame()-topicListHeadroom {
		buf.B = buf.B[:0]
		return refuse(codec.SystemError, "a topic name does not fit a frame (frameMaxLength)")
	}
	if more && len(page) > 0 {
		resp.SetExt(nextAfterKey, page[len(page)-1])
	}
	resp.Body = buf.B
	return nil
}

// handleTopicsByCluster is GET_TOPICS_BY_CLUSTER; the header field is
// "cluster". A missing or unknown cluster is an empty list, as in Java.
func (s *Server) handleTopicsByCluster(c *remoting.Conn, req, resp *codec.Command) error {
	if !s.conf().EnableTopicList {
		return refuseDisabled()
	}
	cluster, _ := req.ExtValue("cluster")
	return s.writeTopicList(resp, s.routes.TopicsByClusterBody(cluster))
}

func (s *Server) handleSystemTopicList(c *remoting.Conn, req, resp *codec.Command) error {
	return s.writeTopicList(resp, s.routes.SystemTopicListBody())
}

func (s *Server) unitTopicHandler(kind route.UnitKind) remoting.Handler {
	return func(c *remoting.Conn, req, resp *codec.Command) error {
		if !s.conf().EnableTopicList {
			return refuseDisabled()
		}
		return s.writeTopicList(resp, s.routes.UnitTopicListBody(kind))
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
