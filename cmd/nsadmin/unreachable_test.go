// Tests that a controller command that cannot reach a node, a NameServer
// or a broker says which address it tried and what it is.

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/server/servertest"
)

func TestUnreachableNamesAddressAndRole(t *testing.T) {
	ns := servertest.Start(t, nil).Addr()
	deadBroker, deadNs, deadNs2, deadCtl := port2(t), port2(t), port2(t), port2(t)
	// A broker whose port is closed, registered over a connection that
	// stays open (the NameServer drops a broker whose connection closes).
	c, err := client.Dial(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, _, err := c.RegisterBroker(context.Background(),
		client.Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: deadBroker, HAAddr: deadBroker},
		&body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Timestamp: 1, Counter: 1}}); err != nil {
		t.Fatal(err)
	}
	f := func(want []string, args ...string) {
		t.Helper()
		r := runArgs(t, args...)
		if r.code != exitFail {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitFail)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", args, r.stderr, w)
			}
		}
	}
	const cause = "Caused by: org.apache.rocketmq.remoting.exception.RemotingConnectException: "
	f([]string{cause + "connect to " + deadBroker + " failed (broker broker-a, brokerId 0: connect: connection refused)"},
		"getBrokerEpoch", "-n", ns, "-b", "broker-a")
	f([]string{cause + "connect to " + deadNs + " failed (NameServer: connect: connection refused)"},
		"getBrokerEpoch", "-n", deadNs, "-b", "broker-a")
	// Every NameServer tried is named.
	f([]string{"connect to " + deadNs + " failed (NameServer: ", "; connect to " + deadNs2 + " failed (NameServer: "},
		"getBrokerEpoch", "-n", deadNs+";"+deadNs2, "-c", "DefaultCluster")
	f([]string{cause + "connect to " + deadCtl + " failed (controller: connect: connection refused)"},
		"getControllerMetaData", "-a", deadCtl)
	f([]string{"connect to " + deadCtl + " failed (controller: "}, "getSyncStateSet", "-a", deadCtl, "-b", "broker-a")
	f([]string{"connect to " + deadNs + " failed (NameServer: "}, "getSyncStateSet", "-a", deadCtl, "-c", "DefaultCluster", "-n", deadNs)
}
