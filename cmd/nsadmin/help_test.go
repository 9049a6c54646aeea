// Tests that every way of asking for the command list shows the controller
// commands in it.

package main

import (
	"strings"
	"testing"
)

func TestHelpListsControllerCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{{nil, exitUsage}, {[]string{"help"}, exitOK}, {[]string{"-h"}, exitOK}, {[]string{"--help"}, exitOK}} {
		r := runArgs(t, tc.args...)
		out := r.stdout
		if tc.code != exitOK {
			out = r.stderr
		}
		if r.code != tc.code {
			t.Errorf("nsadmin %q: exit %d, want %d", tc.args, r.code, tc.code)
		}
		// The commands are listed before the flags every command shares.
		list, _, ok := strings.Cut(out, "\nCommon flags:")
		if !ok {
			t.Fatalf("nsadmin %q: no common flags section:\n%s", tc.args, out)
		}
		for _, c := range commands() {
			if c.ctl == nil {
				continue
			}
			if !strings.Contains(list, "\n  "+c.name+" ") {
				t.Errorf("nsadmin %q: the command list lacks %s:\n%s", tc.args, c.name, list)
			}
		}
		if !strings.Contains(out, "-a 'host:port") {
			t.Errorf("nsadmin %q: the usage does not show how a controller command names its node (-a)", tc.args)
		}
	}
}
