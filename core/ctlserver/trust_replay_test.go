// trust_replay_test.go checks that the allowlists and accounts keep real
// Java 5.3.3 brokers and mqadmin working: the recorded exchanges replayed
// against a guarded node, the brokers' connections from the broker
// network and mqadmin's from the admin one, answered as Java answered
// them; and mqadmin's recorded signatures verifying under its default
// account.

package ctlserver

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller/controllertest"
)

// recordedBrokerConns are the recordings' broker connections (the two
// brokers of ctl-startup-two-brokers); the others are mqadmin's and the
// hand-built ones of ctl-errors, an operator's.
var recordedBrokerConns = map[int]bool{1: true, 3: true}

func TestReplayVectorsBehindTheAllowlists(t *testing.T) {
	p, err := auth.New(allowlisted(t))
	if err != nil {
		t.Fatal(err)
	}
	replayRecorded(t, p, func(conn int) string {
		if recordedBrokerConns[conn] {
			return brokerHost
		}
		return adminHost
	})
}

// Every code a recorded broker sends is a broker code or an open read,
// never an operator's; mqadmin's signed requests verify with its default
// tools.yml account wherever they come from.
func TestRecordedRequestsUnderThePolicy(t *testing.T) {
	steps, err := controllertest.Script()
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.New(auth.Options{Signatures: true, BrokerAllowFrom: mustCIDRs(t, brokerHost+"/32"),
		Accounts: []auth.Account{{AccessKey: "rocketmq2", SecretKey: "12345678", Role: auth.RoleAdmin}}})
	if err != nil {
		t.Fatal(err)
	}
	signed := 0
	for _, st := range steps {
		raw, err := st.Req.Raw()
		if err != nil {
			t.Fatal(err)
		}
		req := decodeFrame(t, raw)
		class := requestClass(req)
		if recordedBrokerConns[st.Req.Conn] {
			if class != auth.ClassBrokerReport && class != auth.ClassOpen {
				t.Errorf("%s: a broker's %d is of class %s", st.Req.File, req.Code, class)
			}
			if err := p.Check(class, req, brokerHost+":30911"); err != nil {
				t.Errorf("%s: a broker's %d refused: %v", st.Req.File, req.Code, err)
			}
			continue
		}
		if _, ok := req.ExtValue(auth.FieldSignature); ok {
			signed++
			if err := p.Check(class, req, strangerHost+":1"); err != nil {
				t.Errorf("%s: mqadmin's signed %d refused: %v", st.Req.File, req.Code, err)
			}
		}
	}
	if signed == 0 {
		t.Fatal("no signed mqadmin request in the recordings")
	}
}

// decodeFrame decodes a whole frame, length prefix included.
func decodeFrame(t *testing.T, raw []byte) *codec.Command {
	t.Helper()
	c := new(codec.Command)
	if err := codec.Decode(raw[4:], c); err != nil {
		t.Fatal(err)
	}
	return c
}
