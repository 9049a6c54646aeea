// table.go holds the dispatch table: handlers by request code, the answer
// to codes without one, and the error a handler returns to refuse.

package remoting

import (
	"fmt"

	"github.com/rocketns/rocketns/codec"
)

// Handler answers one request by filling resp, whose Flag, Opaque,
// Version, Language and SerializeType are already set and whose Code is 0
// (SUCCESS). A returned error becomes the reply's code and remark (an
// *Error keeps its code, any other error is SYSTEM_ERROR with the error's
// text) and drops resp's body. A oneway request is handled the same way
// and its reply discarded.
//
// req and everything it points to are valid only until the handler
// returns (see the package documentation). A handler runs on the
// connection's goroutine: connections are served concurrently, the
// requests of one connection one after the other.
type Handler func(c *Conn, req, resp *codec.Command) error

// Route is one request code of a dispatch table.
type Route struct {
	Code    int32
	Handler Handler
	// TimeEvery selects the requests of this code whose handling Observe
	// times. 0 or 1 times every one. n > 1 times a connection's first
	// request of the code and then one in n, each sample weighted by the
	// requests it stands for, for a code so frequent that reading the
	// clock twice per request would cost a noticeable share of it.
	TimeEvery uint32
	// Weigh, when set, picks the heavy requests of the code: one it
	// weighs above 0 waits for its turn in the listener's heavy queue
	// (heavy.go) before its handler runs, after the replies computed so
	// far have been sent. Every other request is answered at once on its
	// connection's task, so a route query never waits behind a decode or
	// a large encoding. nil: none is heavy.
	Weigh Weigh
}

// Error is a refusal: the code and remark the peer gets.
type Error struct {
	Code   int32
	Remark string
}

func (e *Error) Error() string { return e.Remark }

// Refuse returns the error that answers a request with code and remark.
func Refuse(code int32, remark string) error { return &Error{Code: code, Remark: remark} }

// NotSupported answers a code the table has no route for as both Java
// servers (the NameServer and the controller) do: 3
// REQUEST_CODE_NOT_SUPPORTED, remark " request type <code> not supported"
// with its leading space, no extFields. It is the default of
// Options.Unknown.
func NotSupported(_ *Conn, req, resp *codec.Command) error {
	resp.Code = codec.RequestCodeNotSupported
	resp.Remark = fmt.Sprintf(" request type %d not supported", req.Code)
	return nil
}

// denseCodes bounds the codes looked up by index; the rest go through a
// map. Every NameServer code is below it, and so are the controller's.
const denseCodes = 2048

// route is a Route as the table keeps it.
type route struct {
	handler   Handler
	weigh     Weigh
	timeEvery uint32
	// sample is the route's slot in a connection's sampling state, -1
	// when every request is timed.
	sample int
}

// table finds the route of a request code.
type table struct {
	dense   [denseCodes]*route
	sparse  map[int32]*route
	sampled int // routes with a sample slot
}

func newTable(routes []Route) (*table, error) {
	t := &table{}
	for _, r := range routes {
		if r.Handler == nil {
			return nil, fmt.Errorf("route for code %d has no handler", r.Code)
		}
		if t.lookup(r.Code) != nil {
			return nil, fmt.Errorf("code %d routed twice", r.Code)
		}
		e := &route{handler: r.Handler, weigh: r.Weigh, timeEvery: r.TimeEvery, sample: -1}
		if r.TimeEvery > 1 {
			e.sample = t.sampled
			t.sampled++
		}
		if r.Code >= 0 && r.Code < denseCodes {
			t.dense[r.Code] = e
			continue
		}
		if t.sparse == nil {
			t.sparse = make(map[int32]*route)
		}
		t.sparse[r.Code] = e
	}
	return t, nil
}

func (t *table) lookup(code int32) *route {
	if code >= 0 && code < denseCodes {
		return t.dense[code]
	}
	return t.sparse[code]
}
