// Tests that namesrv -h tells of the controller mode.

package main

import (
	"strings"
	"testing"
)

func TestHelpNamesControllerMode(t *testing.T) {
	r := runFake(t, nil, false, "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "namesrv controller -c FILE") {
		t.Fatalf("namesrv -h: exit %d, no word of the controller mode:\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "namesrv controller -h") {
		t.Errorf("namesrv -h does not say where the controller mode's options are:\n%s", r.stdout)
	}
}
