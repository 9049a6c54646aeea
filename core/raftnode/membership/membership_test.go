// Tests of both key styles: every key, every error, the warnings.

package membership

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// props builds a lookup from "key=value" lines; a line "key" without '='
// leaves the key absent, which is the default anyway, so it is not needed.
func props(lines ...string) Lookup {
	m := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		m[k] = v
	}
	return FromMap(m)
}

func TestParseDLedger(t *testing.T) {
	t.Parallel()
	f := func(in Lookup, want *Membership) {
		t.Helper()
		got, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
		}
	}
	three := []Peer{
		{ID: "n0", RaftAddr: "127.0.0.1:9878", ServeAddr: "127.0.0.1:9878"},
		{ID: "n1", RaftAddr: "127.0.0.1:9868", ServeAddr: "127.0.0.1:9868"},
		{ID: "n2", RaftAddr: "127.0.0.1:9858", ServeAddr: "127.0.0.1:9858"},
	}
	f(props("controllerDLegerGroup=group1",
		"controllerDLegerPeers=n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858",
		"controllerDLegerSelfId=n1"),
		&Membership{Style: DLedger, Group: "group1", SelfID: "n1", Peers: three})
	// Spaces around items and a trailing ';' are tolerated; the group is optional.
	f(props("controllerDLegerPeers= n0-127.0.0.1:9878 ; n1-127.0.0.1:9868;n2-127.0.0.1:9858; ",
		"controllerDLegerSelfId= n2 "),
		&Membership{Style: DLedger, SelfID: "n2", Peers: three})
	// Single node, the shipped quick-start example; controllerType=DLedger is explicit.
	f(props("controllerType=DLedger", "controllerDLegerPeers=n0-127.0.0.1:9878", "controllerDLegerSelfId=n0"),
		&Membership{Style: DLedger, SelfID: "n0", Peers: three[:1]})
	// The id is the text before the first '-'; a host name may contain '-'.
	f(props("controllerDLegerPeers=a-ctl-0.ctl.svc:9878", "controllerDLegerSelfId=a"),
		&Membership{Style: DLedger, SelfID: "a", Peers: []Peer{{ID: "a", RaftAddr: "ctl-0.ctl.svc:9878", ServeAddr: "ctl-0.ctl.svc:9878"}}})
	// IPv6 in brackets.
	f(props("controllerDLegerPeers=n0-[::1]:9878", "controllerDLegerSelfId=n0"),
		&Membership{Style: DLedger, SelfID: "n0", Peers: []Peer{{ID: "n0", RaftAddr: "[::1]:9878", ServeAddr: "[::1]:9878"}}})
	// Five nodes.
	five, err := Parse(props("controllerDLegerPeers=n0-h:1;n1-h:2;n2-h:3;n3-h:4;n4-h:5", "controllerDLegerSelfId=n4"))
	if err != nil || len(five.Peers) != 5 || five.Self().ServeAddr != "h:5" || len(five.Warnings) != 0 {
		t.Fatalf("five nodes: %+v, %v", five, err)
	}
}

func TestParseJRaft(t *testing.T) {
	t.Parallel()
	f := func(in Lookup, want *Membership) {
		t.Helper()
		got, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
		}
	}
	f(props("controllerType=jRaft", "jRaftGroupId=g",
		"jRaftServerId=127.0.0.1:9881",
		"jRaftInitConf=127.0.0.1:9880,127.0.0.1:9881,127.0.0.1:9882",
		"jRaftControllerRPCAddr=127.0.0.1:9770,127.0.0.1:9771,127.0.0.1:9772"),
		&Membership{Style: JRaft, Group: "g", SelfID: "127.0.0.1:9881", Peers: []Peer{
			{ID: "127.0.0.1:9880", RaftAddr: "127.0.0.1:9880", ServeAddr: "127.0.0.1:9770"},
			{ID: "127.0.0.1:9881", RaftAddr: "127.0.0.1:9881", ServeAddr: "127.0.0.1:9771"},
			{ID: "127.0.0.1:9882", RaftAddr: "127.0.0.1:9882", ServeAddr: "127.0.0.1:9772"},
		}})
	// Every jRaft key absent: Java's defaults.
	f(props("controllerType=jRaft"),
		&Membership{Style: JRaft, Group: "jRaft-Controller", SelfID: "localhost:9880", Peers: []Peer{
			{ID: "localhost:9880", RaftAddr: "localhost:9880", ServeAddr: "localhost:9770"},
			{ID: "localhost:9881", RaftAddr: "localhost:9881", ServeAddr: "localhost:9771"},
			{ID: "localhost:9882", RaftAddr: "localhost:9882", ServeAddr: "localhost:9772"},
		}})
	// The self id matches by host and port number, case-insensitively; the
	// id stays the jRaftInitConf text.
	f(props("controllerType=jRaft", "jRaftServerId=LOCALHOST:9880", "jRaftInitConf=localhost:9880", "jRaftControllerRPCAddr=localhost:9770"),
		&Membership{Style: JRaft, Group: "jRaft-Controller", SelfID: "localhost:9880", Peers: []Peer{
			{ID: "localhost:9880", RaftAddr: "localhost:9880", ServeAddr: "localhost:9770"},
		}})
	// DLedger keys are ignored in jRaft style.
	f(props("controllerType=jRaft", "controllerDLegerPeers=broken", "jRaftServerId=h:1", "jRaftInitConf=h:1", "jRaftControllerRPCAddr=h:2"),
		&Membership{Style: JRaft, Group: "jRaft-Controller", SelfID: "h:1", Peers: []Peer{{ID: "h:1", RaftAddr: "h:1", ServeAddr: "h:2"}}})
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	f := func(in Lookup, key, want string) {
		t.Helper()
		m, err := Parse(in)
		if err == nil {
			t.Fatalf("Parse = %+v, want error %q", m, want)
		}
		if err.Error() != want {
			t.Fatalf("Parse error\n got %q\nwant %q", err.Error(), want)
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != key {
			t.Fatalf("error %v names key %v, want %s", err, ke, key)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
	}
	const peers3 = "controllerDLegerPeers=n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858"
	// Java's messages for the missing keys.
	f(props(), KeyDLedgerPeers, "Attribute value controllerDLegerPeers of ControllerConfig is null or empty")
	f(props("controllerDLegerPeers=  ", "controllerDLegerSelfId=n0"), KeyDLedgerPeers, "Attribute value controllerDLegerPeers of ControllerConfig is null or empty")
	f(props("controllerDLegerPeers=;;", "controllerDLegerSelfId=n0"), KeyDLedgerPeers, "Attribute value controllerDLegerPeers of ControllerConfig is null or empty")
	f(props(peers3), KeyDLedgerSelfID, "Attribute value controllerDLegerSelfId of ControllerConfig is null or empty")
	f(props(peers3, "controllerDLegerSelfId="), KeyDLedgerSelfID, "Attribute value controllerDLegerSelfId of ControllerConfig is null or empty")
	f(props("controllerType=jRaft", "jRaftInitConf="), KeyJRaftInitConf, "Attribute value jRaftInitConf of ControllerConfig is null or empty")
	f(props("controllerType=jRaft", "jRaftServerId="), KeyJRaftServerID, "Attribute value jRaftServerId of ControllerConfig is null or empty")
	f(props("controllerType=jRaft", "jRaftControllerRPCAddr= "), KeyJRaftRPCAddress, "Attribute value jRaftControllerRPCAddr of ControllerConfig is null or empty")
	f(props("controllerType=jRaft", "jRaftGroupId="), KeyJRaftGroupID, "Attribute value jRaftGroupId of ControllerConfig is null or empty")

	// DLedger peer syntax.
	f(props("controllerDLegerPeers=n0:127.0.0.1:9878", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0:127.0.0.1:9878" is not <id>-<host>:<port>`)
	f(props("controllerDLegerPeers=-127.0.0.1:9878", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "-127.0.0.1:9878" is not <id>-<host>:<port>`)
	f(props("controllerDLegerPeers=n0-127.0.0.1", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0-127.0.0.1": address "127.0.0.1" is not host:port`)
	f(props("controllerDLegerPeers=n0-:9878", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0-:9878": address ":9878" has no host`)
	f(props("controllerDLegerPeers=n0-h:0", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0-h:0": address "h:0": port "0" is not a number in 1-65535`)
	f(props("controllerDLegerPeers=n0-h:65536", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0-h:65536": address "h:65536": port "65536" is not a number in 1-65535`)
	f(props("controllerDLegerPeers=n0-h:x", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer "n0-h:x": address "h:x": port "x" is not a number in 1-65535`)
	// Duplicates and the self id.
	f(props("controllerDLegerPeers=n0-h:1;n0-h:2", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peer id n0 is listed twice`)
	f(props("controllerDLegerPeers=n0-h:1;n1-h:1", "controllerDLegerSelfId=n0"), KeyDLedgerPeers,
		`controllerDLegerPeers: peers n0 and n1 share the address h:1`)
	f(props(peers3, "controllerDLegerSelfId=n3"), KeyDLedgerSelfID,
		`controllerDLegerSelfId: "n3" is not one of the peers in controllerDLegerPeers`)

	// jRaft addresses, counts, self and duplicates.
	f(props("controllerType=jRaft", "jRaftServerId=h"), KeyJRaftServerID, `jRaftServerId: "h": address "h" is not host:port`)
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1,h"), KeyJRaftInitConf, `jRaftInitConf: "h": address "h" is not host:port`)
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1", "jRaftControllerRPCAddr=h:99999"), KeyJRaftRPCAddress,
		`jRaftControllerRPCAddr: "h:99999": address "h:99999": port "99999" is not a number in 1-65535`)
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1,h:2,h:3", "jRaftControllerRPCAddr=h:7,h:8"), KeyJRaftRPCAddress,
		`jRaftControllerRPCAddr: 2 addresses for the 3 peers of jRaftInitConf: the i-th address belongs to the i-th peer`)
	f(props("controllerType=jRaft", "jRaftServerId=h:4", "jRaftInitConf=h:1,h:2,h:3", "jRaftControllerRPCAddr=h:7,h:8,h:9"), KeyJRaftServerID,
		`jRaftServerId: "h:4" is not one of the peers in jRaftInitConf (h:1,h:2,h:3)`)
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1,h:2,h:1", "jRaftControllerRPCAddr=h:7,h:8,h:9"), KeyJRaftInitConf,
		`jRaftInitConf: peer id h:1 is listed twice`)
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1,h:2,h:3", "jRaftControllerRPCAddr=h:7,h:8,h:7"), KeyJRaftRPCAddress,
		`jRaftControllerRPCAddr: address h:7 is listed twice`)
}

func TestParseWarnings(t *testing.T) {
	t.Parallel()
	f := func(in Lookup, want ...string) {
		t.Helper()
		m, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !reflect.DeepEqual(m.Warnings, want) {
			t.Fatalf("warnings\n got %q\nwant %q", m.Warnings, want)
		}
	}
	f(props("controllerDLegerPeers=n0-h:1;n1-h:2", "controllerDLegerSelfId=n0"),
		"2 controller peers: an even group tolerates no more failures than 1 peers (quorum 2); use 1, 3 or 5")
	f(props("controllerType=jRaft", "jRaftServerId=h:1", "jRaftInitConf=h:1,h:2,h:3,h:4", "jRaftControllerRPCAddr=h:5,h:6,h:7,h:8"),
		"4 controller peers: an even group tolerates no more failures than 3 peers (quorum 3); use 1, 3 or 5")
	// Java compares controllerType exactly: "jraft" is DLedger there too.
	f(props("controllerType=jraft", "controllerDLegerPeers=n0-h:1", "controllerDLegerSelfId=n0"),
		`controllerType="jraft" is not "jRaft": using DLedger, as Java does`)
	f(props("controllerDLegerPeers=n0-h:1", "controllerDLegerSelfId=n0"))
}

func TestStyleString(t *testing.T) {
	t.Parallel()
	if DLedger.String() != "DLedger" || JRaft.String() != "jRaft" || Style(9).String() != "Style(9)" {
		t.Fatal(DLedger.String(), JRaft.String(), Style(9).String())
	}
}
