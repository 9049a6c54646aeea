// replysize.go holds the one rule on a reply's size: a reply that cannot
// be sent as it is (larger than the listener's frame limit, or a header
// the frame's length field cannot describe) is answered with a
// SYSTEM_ERROR that says so.

package remoting

import (
	"fmt"

	"github.com/rocketns/rocketns/codec"
)

// fitReply is nil when resp fits the listener's frame limit, else the
// refusal that answers in its place, with resp's extFields dropped (they
// may be what is too large: GET_KV_CONFIG's value). Peers refuse frames
// over their own limit the way this listener does (a 5.3.3 broker closes
// the connection on one over 16 MiB and is dropped with it), so sending
// it would only break the connection. What the handler changed stays
// changed: a registration whose reply is refused was applied all the
// same.
//
// Every normal reply is decided by a bound that costs a few additions,
// on the route query's path too; only a reply near the limit is encoded
// to be measured.
func (s *Server) fitReply(c *Conn, code int32, resp *codec.Command) *Error {
	if len(resp.Body)+replyHeaderBound(resp) <= s.maxFrame {
		return nil
	}
	return s.fitReplyExactly(c, code, resp)
}

func (s *Server) fitReplyExactly(c *Conn, code int32, resp *codec.Command) *Error {
	size := 8 + len(codec.AppendHeader(nil, resp)) + len(resp.Body)
	if size <= s.maxFrame {
		return nil
	}
	clear(resp.Ext)
	resp.Ext = resp.Ext[:0]
	resp.HasExt = false
	s.log.Warn("response over frameMaxLength: answered with an error instead", "code", code,
		"request", codec.RequestCodeName(code), "peer", c.peer, "bytes", size, "frame_max_length", s.maxFrame)
	return &Error{Code: codec.SystemError, Remark: fmt.Sprintf(
		"the response to %s would be %d bytes, over frameMaxLength (%d) of this server and of its peers",
		codec.RequestCodeName(code), size, s.maxFrame)}
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

// encodeReply appends resp's frame prefix for the connection to send. A
// reply whose header the frame cannot describe (over the 24-bit header
// length: an error the encoder reports rather than corrupting the stream;
// only a frame limit above 16 MiB lets one get here) becomes a
// SYSTEM_ERROR without body or extFields, so the peer still gets an answer
// it can read; the encoder's error is returned for the log.
func encodeReply(dst []byte, resp *codec.Command) ([]byte, error) {
	out, err := codec.EncodeFramePrefix(dst, resp, len(resp.Body))
	if err == nil {
		return out, nil
	}
	resp.Code = codec.SystemError
	resp.Remark = "the response cannot be sent: " + err.Error()
	clear(resp.Ext)
	resp.Ext = resp.Ext[:0]
	resp.HasExt = false
	resp.Body = nil
	out, err2 := codec.EncodeFramePrefix(dst, resp, 0)
	if err2 != nil {
		return out, err2
	}
	return out, err
}
