// Tests of the one command line parser of both modes: Java's and
// rocketns's spellings, a flag given twice, bad command lines, and the help
// listing every flag.

package main

import (
	"strings"
	"testing"
)

// run runs one mode's command line with a fake server that must not start.
func runMode(t *testing.T, m mode, args ...string) result {
	t.Helper()
	if m.prog == nameServerMode.prog {
		return runFake(t, nil, false, args...)
	}
	return runCtl(t, nil, nil, args...)
}

// A bad command line is one line naming the problem and one pointing to
// the mode's help, with exit 2, in both modes.
func TestBadCommandLineBothModes(t *testing.T) {
	withHome(t)
	for _, m := range []mode{nameServerMode, standaloneControllerMode} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--nosuchflag"}, "flag provided but not defined: -nosuchflag"},
			{[]string{"-c"}, "flag needs an argument: -c"},
			{[]string{"-p", "extra"}, `unexpected arguments: ["extra"]`},
			{[]string{"-c", "a", "-c", "b"}, "flag -c/--configFile is given twice: give it once"},
			{[]string{"-c", "a", "--configFile=b"}, "flag -c/--configFile is given twice: give it once"},
			{[]string{"-p", "-printConfigItem"}, "flag -p/--printConfigItem is given twice"},
			{[]string{"-p=maybe"}, `invalid boolean value "maybe" for -p`},
			{[]string{"--set", "noequals"}, "want key=value"},
			{[]string{"--set", "listenPort=abc", "-p"}, `config: listenPort="abc": not an integer`},
		} {
			r := runMode(t, m, tc.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], m.prog+": ") || !strings.Contains(lines[0], tc.want) ||
				lines[1] != "Run '"+m.prog+" -h' for the options." {
				t.Errorf("%s %q: exit %d, stderr:\n%s\nwant 2 and %q", m.prog, tc.args, r.code, r.stderr, tc.want)
			}
		}
	}
}

// Java's start-script forms and rocketns's long forms give the same
// configuration in both modes; an override may be repeated, the last one
// winning as a later layer does.
func TestFlagSpellingsBothModes(t *testing.T) {
	withHome(t)
	ns := writeConfig(t, "listenPort=1\n")
	ctl := writeConfig(t, javaControllerConf)
	for _, tc := range []struct {
		m     mode
		forms [][]string
		want  string
	}{
		{nameServerMode, [][]string{
			{"-c", ns, "-p", "--listenPort", "3"},
			{"--configFile=" + ns, "--printConfigItem", "-listenPort=3"},
			{"-configFile", ns, "-n", "127.0.0.1:9876", "--listenPort", "2", "--set", "listenPort=3", "-p"},
			{"-p", "-c", ns, "--listenPort", "2", "--listenPort", "3", "--namesrvAddr=127.0.0.1:9876"},
		}, "\nlistenPort=3\n"},
		{standaloneControllerMode, [][]string{
			{"-c", ctl, "-p", "--bindAddress", "127.0.0.2"},
			{"--configFile", ctl, "-printConfigItem", "--set", "bindAddress=127.0.0.2", "-n", "127.0.0.1:9876"},
			{"-c=" + ctl, "-p", "--bindAddress", "127.0.0.3", "--bindAddress=127.0.0.2"},
		}, "\nbindAddress=127.0.0.2\n"},
	} {
		for _, args := range tc.forms {
			r := runMode(t, tc.m, args...)
			if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("%s %q: exit %d, stderr %s; stdout lacks %q", tc.m.prog, args, r.code, r.stderr, tc.want)
			}
		}
	}
	// The override's source is named in the controller mode as well.
	r := runMode(t, standaloneControllerMode, "-c", ctl, "--set", "nosuchkey=1", "-p")
	if r.code != 0 || !strings.Contains(r.stderr, `unknown key \"nosuchkey\" (flag --set)`) {
		t.Errorf("controller --set of an unknown key: exit %d, %s", r.code, r.stderr)
	}
}

// -h of each mode lists every flag the mode takes, both names of each.
func TestHelpListsEveryFlag(t *testing.T) {
	for _, m := range []mode{nameServerMode, standaloneControllerMode} {
		r := runMode(t, m, "-h")
		if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: "+m.prog+" ") {
			t.Fatalf("%s -h: exit %d, stderr %q\n%s", m.prog, r.code, r.stderr, r.stdout)
		}
		want := []string{"-c, --configFile file", "-p, --printConfigItem", "-h, --help", "--version", "-n, --namesrvAddr addrs", "--set key=value"}
		for _, k := range m.keys {
			want = append(want, "--"+k+" value")
		}
		pprof := []string{"--pprof-addr host:port", "--pprof-block-rate ns", "--pprof-mutex-fraction n"}
		if m.pprof {
			want = append(want, pprof...)
		} else if strings.Contains(r.stdout, "--pprof") {
			t.Errorf("%s -h lists the --pprof flags it does not take", m.prog)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, "\n  "+w+" ") {
				t.Errorf("%s -h lacks %q:\n%s", m.prog, w, r.stdout)
			}
		}
		if r := runMode(t, m, "--help"); r.stdout == "" || r.code != 0 {
			t.Errorf("%s --help: exit %d", m.prog, r.code)
		}
	}
	if r := runMode(t, standaloneControllerMode, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "namesrv ") {
		t.Errorf("namesrv controller --version: exit %d %q", r.code, r.stdout)
	}
}
