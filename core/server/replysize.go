// replysize.go holds the bound on a reply's size: one that would be larger
// than frameMaxLength is answered with SYSTEM_ERROR instead.

package server

import (
	"fmt"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
)

// fitReply is h answering, instead of a reply larger than frameMaxLength,
// a SYSTEM_ERROR that says so. Peers refuse such frames the way this server
// does (a 5.3.3 broker closes the connection on one over 16 MiB and is
// dropped with it), so sending it would only break the connection; the
// codec's own check only catches what its length fields cannot describe.
// What the handler changed stays changed: a registration whose reply is
// refused was applied all the same. Route queries make the same check in
// their handler, saving the hot path a call.
func (s *Server) fitReply(h remoting.Handler) remoting.Handler {
	return func(c *remoting.Conn, req, resp *codec.Command) error {
		if err := h(c, req, resp); err != nil {
			return err
		}
		return s.fits(c, req, resp)
	}
}

// fits is nil when resp fits frameMaxLength, else the refusal.
func (s *Server) fits(c *remoting.Conn, req, resp *codec.Command) error {
	if len(resp.Body)+replyHeaderBound(resp) <= s.maxFrame() {
		return nil // every normal reply, at the cost of a few additions
	}
	return s.fitsExactly(c, req, resp)
}

func (s *Server) fitsExactly(c *remoting.Conn, req, resp *codec.Command) error {
	limit := s.maxFrame()
	size := 8 + len(codec.AppendHeader(nil, resp)) + len(resp.Body)
	if size <= limit {
		return nil
	}
	// The refusal replaces code, remark and body; the header fields
	// (GET_KV_CONFIG's value) must go too.
	clear(resp.Ext)
	resp.Ext = resp.Ext[:0]
	resp.HasExt = false
	s.log.Warn("response over frameMaxLength: answered with an error instead", "code", req.Code,
		"request", codec.RequestCodeName(req.Code), "peer", c.Peer(), "bytes", size, "frame_max_length", limit)
	return refuse(codec.SystemError, fmt.Sprintf(
		"the response to %s would be %d bytes, over frameMaxLength (%d) of this NameServer and of its peers",
		codec.RequestCodeName(req.Code), size, limit))
}

// replyHeaderBound is at least the bytes the frame of resp takes besides
// its body: the two length words, the fixed fields, and every string byte
// counted as the longest escape it can become.
func replyHeaderBound(resp *codec.Command) int {
	n := len(resp.Remark)
	for i := range resp.Ext {
		n += 8 + len(resp.Ext[i].Key) + len(resp.Ext[i].Value)
	}
	return 8 + 256 + 6*n
}
