// Unit tests of the rolling scenario's pieces that need no process: the
// -warm list, the sorting of failures and answers, the report's rows.

package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestParseWarm(t *testing.T) {
	got, err := ParseWarm("off, on,warm,COLD")
	if err != nil || fmt.Sprint(got) != "[false true true false]" {
		t.Errorf("ParseWarm = %v, %v", got, err)
	}
	for _, bad := range []string{"", "on,,off", "yes"} {
		if _, err := ParseWarm(bad); err == nil {
			t.Errorf("ParseWarm(%q) accepted", bad)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyErr(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("dial 127.0.0.1:1: %w", refused), outRefused},
		{fmt.Errorf("route of T: %w", context.DeadlineExceeded), outTimeout},
		{&net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, outTimeout},
		{fmt.Errorf("connection lost: %w", errors.New("EOF")), outClosed},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), outClosed},
	} {
		if got := classifyErr(c.err); got != c.want {
			t.Errorf("classifyErr(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestRouteOutcome(t *testing.T) {
	route := func(brokers ...string) []byte {
		tr := &body.TopicRoute{}
		for _, b := range brokers {
			tr.QueueDatas = append(tr.QueueDatas, body.QueueData{BrokerName: b, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6})
			tr.BrokerDatas = append(tr.BrokerDatas, body.BrokerData{Cluster: "c", BrokerName: b, Addrs: []body.BrokerAddr{{ID: 0, Addr: "127.0.0.1:1"}}})
		}
		return body.AppendTopicRoute(nil, tr, body.Standard)
	}
	for _, c := range []struct {
		name    string
		code    int32
		payload []byte
		want    int
	}{
		{"both brokers", codec.Success, route("a", "b"), outOK},
		{"one of two", codec.Success, route("a"), outIncomplete},
		{"not exist", codec.TopicNotExist, nil, outNotExist},
		{"busy", codec.SystemBusy, nil, outOtherCode},
		{"undecodable", codec.Success, []byte("{"), outOtherCode},
	} {
		if got := routeOutcome(c.code, c.payload, 2); got != c.want {
			t.Errorf("%s: routeOutcome = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestWriteTableRestarts(t *testing.T) {
	r := &Report{Scenario: ScenarioRolling, Server: "3 x namesrv", Restarts: []RestartRow{
		{Round: 1, Start: "cold", Server: 2, Queries: 100, OK: 60, NotExist: 37, StopIncomplete: 4, StopNotExist: 5, Refused: 3, NotExistFor: 2.5, Down: 0.08, FirstAnswer: 0.07, FirstCode: 17},
	}}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "not exist") {
		t.Fatalf("table:\n%s", out.String())
	}
	if got := strings.Fields(lines[2]); strings.Join(got, " ") != "1 cold 2 100 60 0 37 4 5 0 0 3 0 2.500 0.080 0.070 17 0 0" {
		t.Errorf("row fields %q", got)
	}
}
