// Tests that -p refuses, with start-up's own messages, a controller
// configuration that start-up would refuse.

package main

import (
	"strings"
	"testing"
)

func TestPrintChecksTheController(t *testing.T) {
	withHome(t)
	noPeers := "controllerDLegerSelfId=n0\n"
	strangerSelf := "controllerDLegerPeers=n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858\ncontrollerDLegerSelfId=n7\n"
	badTimings := javaControllerConf + "controllerRaftHeartbeatTimeoutMs=3\n"
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"no peers", noPeers, "Attribute value controllerDLegerPeers of ControllerConfig is null or empty"},
		{"self not a peer", strangerSelf, `controllerDLegerSelfId: "n7" is not one of the peers in controllerDLegerPeers`},
		{"raft timings", badTimings, "controllerRaftHeartbeatTimeoutMs=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(r result, prog string) {
				t.Helper()
				if r.code != 1 || !strings.Contains(r.stderr, prog+": config: "+tc.want) {
					t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tc.want)
				}
				if strings.Contains(r.stdout, "controllerDLegerSelfId=") {
					t.Errorf("printed the settings of a configuration that cannot start:\n%s", r.stdout)
				}
			}
			// Standalone: namesrv controller -p.
			check(runCtl(t, nil, nil, "-c", writeConfig(t, tc.conf), "-p"), "namesrv controller")
			// Embedded: namesrv -p with enableControllerInNamesrv.
			check(runFake(t, nil, false, "-c", writeConfig(t, tc.conf+"enableControllerInNamesrv=true\n"), "-p"), "namesrv")
		})
	}
	// Without enableControllerInNamesrv the controller keys are not
	// checked, as start-up does not read them.
	if r := runFake(t, nil, false, "-c", writeConfig(t, noPeers), "-p"); r.code != 0 {
		t.Errorf("namesrv -p without the embedded controller: exit %d, stderr %q", r.code, r.stderr)
	}
}
