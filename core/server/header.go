// header.go reads typed request header fields out of extFields, with the
// refusals a missing or malformed one gets.

package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
)

// refuse is the error that answers with code and remark.
func refuse(code int32, remark string) error { return remoting.Refuse(code, remark) }

// Java does not enforce required header fields (spec 1.5): a missing one is
// null and the handler carries on with it, answering as if it were the
// string "null", storing it, or failing with a NullPointerException
// (SYSTEM_ERROR). We answer SYSTEM_ERROR with a remark that says what is
// missing (README, "Missing header fields").
func missing(field string) error {
	return refuse(codec.SystemError, "the request header lacks the field "+field)
}

func requireString(req *codec.Command, key string) (string, error) {
	v, ok := req.ExtValue(key)
	if !ok {
		return "", missing(key)
	}
	return v, nil
}

// optInt64 parses an optional numeric field; absent is (0, false, nil).
func optInt64(req *codec.Command, key string) (int64, bool, error) {
	v, ok := req.ExtValue(key)
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, false, refuse(codec.SystemError, "the request header field "+key+" is not a number: "+strconv.Quote(echoed(v)))
	}
	return n, true, nil
}

func requireInt64(req *codec.Command, key string) (int64, error) {
	n, ok, err := optInt64(req, key)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, missing(key)
	}
	return n, nil
}

// javaBool is Boolean.parseBoolean: only a case-insensitive "true" is true.
func javaBool(v string) bool { return strings.EqualFold(v, "true") }

// optBool returns nil when the field is absent: for enableActingMaster the
// absence itself means "a 4.x broker".
func optBool(req *codec.Command, key string) *bool {
	v, ok := req.ExtValue(key)
	if !ok {
		return nil
	}
	b := javaBool(v)
	return &b
}

func secondsDuration(n int) time.Duration { return time.Duration(n) * time.Second }
