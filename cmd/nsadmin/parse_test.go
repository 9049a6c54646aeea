// Tests of the one command line parser and help: every spelling mqadmin and
// nsadmin take, each kind of bad command line, and the command list.

package main

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// mqadmin's one-dash names of several letters (-bn), its two-dash long
// names, and nsadmin's Go-style ones (-strictSign, -timeout 5s) all parse,
// for a NameServer command and a controller command alike: the reason the
// parser is Go's flag package and not a POSIX-style one, which reads -bn
// as -b -n and -timeout 5s as -t imeout.
func TestFlagSpellings(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		cmd  string
		args []string
		want map[string]string
	}{
		{"topicRoute", []string{"-n", "h:1", "-t", "T"}, map[string]string{"n": "h:1", "t": "T"}},
		{"topicRoute", []string{"--namesrvAddr", "h:1", "--topic", "T"}, map[string]string{"n": "h:1", "t": "T"}},
		{"topicRoute", []string{"-namesrvAddr", "h:1", "-topic=T"}, map[string]string{"n": "h:1", "t": "T"}},
		{"topicRoute", []string{"--n=h:1", "--t", "T", "-timeout", "5s", "-accessKey", "ak", "-secretKey", "sk", "-strictSign"},
			map[string]string{"n": "h:1", "t": "T", "timeout": "5s", "accessKey": "ak"}},
		{"topicList", []string{"-n", "h:1", "-clusterName", "C"}, map[string]string{"clusterName": "C"}},
		{"electMaster", []string{"-a", "h:1", "-c", "C", "-bn", "broker-a", "-b", "2"}, map[string]string{"a": "h:1", "c": "C", "bn": "broker-a", "b": "2"}},
		{"electMaster", []string{"--controllerAddress=h:1;h:2", "--clusterName", "C", "--brokerName", "broker-a", "--brokerId", "2"},
			map[string]string{"a": "h:1;h:2", "bn": "broker-a", "b": "2"}},
	} {
		in, err := parse(lookup(tc.cmd), tc.args, env)
		if err != nil {
			t.Errorf("%s %q: %v", tc.cmd, tc.args, err)
			continue
		}
		for k, v := range tc.want {
			if got := in.str(k); got != v {
				t.Errorf("%s %q: -%s = %q, want %q", tc.cmd, tc.args, k, got, v)
			}
		}
	}
	in, err := parse(lookup("topicRoute"), []string{"-n", "h:1", "-t", "T", "-timeout", "5s", "-strictSign", "-accessKey", "a", "-secretKey", "s"}, env)
	if err != nil || in.timeout.String() != "5s" || !in.creds.Strict || !in.on("strictSign") {
		t.Errorf("-timeout 5s -strictSign: %+v, %v", in, err)
	}
	in, err = parse(lookup("cleanBrokerMetadata"), []string{"-a", "h:1", "-bn", "b", "-l"}, env)
	if err != nil || !in.on("l") || in.given("c") {
		t.Errorf("cleanBrokerMetadata -l: %v", err)
	}
}

// A flag given twice, under one name or both, is a bad command line:
// mqadmin keeps the first value, Go's flag package the last, so neither
// can be trusted to be what was meant (deleteTopic -c A -c B).
func TestFlagGivenTwice(t *testing.T) {
	ns := remotingtest.FreeAddrs(t, 1)[0]
	for _, args := range [][]string{
		{"deleteTopic", "-n", ns, "-t", "T", "-c", "A", "-c", "B"},
		{"deleteTopic", "-n", ns, "-t", "T", "-c", "A", "--clusterName", "B"},
		{"topicRoute", "-n", ns, "--namesrvAddr", ns, "-t", "T"},
		{"topicList", "-n", ns, "-c", "-c=false"},
		{"topicRoute", "-n", ns, "-t", "T", "-timeout", "1s", "-timeout", "2s"},
		{"electMaster", "-a", ns, "-c", "C", "-bn", "a", "--brokerName", "b", "-b", "1"},
	} {
		fails(t, exitUsage, []string{"nsadmin " + args[0] + ": flag -", " is given twice: give it once; run 'nsadmin help " + args[0] + "'"}, args...)
	}
}

// Each kind of bad command line fails the same way for every command:
// one line naming the command and the problem, a pointer to its help,
// exit 2.
func TestUsageErrors(t *testing.T) {
	ns := remotingtest.FreeAddrs(t, 1)[0]
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"flag provided but not defined: -x", []string{"clusterList", "-n", ns, "-x"}},
		{"flag provided but not defined: -x", []string{"getControllerMetaData", "-a", ns, "-x"}},
		{"flag provided but not defined: -bn", []string{"topicRoute", "-n", ns, "-t", "T", "-bn", "b"}},
		{"missing required flag -t (topic)", []string{"topicRoute", "-n", ns}},
		{"missing required flag -a (addrs)", []string{"getControllerConfig"}},
		{"missing required flag -n (addrs), or set NAMESRV_ADDR", []string{"topicRoute", "-t", "T"}},
		{"flag -a lists no address", []string{"getControllerConfig", "-a", ";"}},
		{`bad -timeout "0s"`, []string{"clusterList", "-n", ns, "-timeout", "0s"}},
		{`unexpected argument "extra"`, []string{"getControllerConfig", "-a", ns, "extra"}},
		{`invalid value "x" for flag -i`, []string{"getSyncStateSet", "-a", ns, "-b", "b", "-i", "x"}},
	} {
		fails(t, exitUsage, []string{"nsadmin " + tc.args[0] + ": " + tc.want, "; run 'nsadmin help " + tc.args[0] + "'"}, tc.args...)
	}
	// A variable that stands in for a flag is read as strictly as the flag.
	r := runWithEnv(map[string]string{"NAMESRV_ADDR": ns, "ROCKETMQ_STRICT_SIGN": "yes"}, "clusterList")
	if r.code != exitUsage || !strings.Contains(r.stderr, `bad ROCKETMQ_STRICT_SIGN "yes": want true or false`) {
		t.Errorf("ROCKETMQ_STRICT_SIGN=yes: exit %d, %s", r.code, r.stderr)
	}
}

func TestUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"help", "nope"}, {"nope", "-n", "h:1"}} {
		fails(t, exitUsage, []string{`nsadmin: unknown command "nope"; run 'nsadmin help' for the list`}, args...)
	}
	// mqadmin's names are camelCase; a wrong case is the likely slip.
	fails(t, exitUsage, []string{`unknown command "topiclist" (did you mean topicList?)`}, "topiclist", "-n", "h:1")
	fails(t, exitUsage, []string{`unknown command "ELECTMASTER" (did you mean electMaster?)`}, "help", "ELECTMASTER")
}

// The command list is one table, every command in it once with its kind
// (read, write, check, controller), in the order of the command table.
func TestHelpListsAllCommandsInOneList(t *testing.T) {
	out := ok(t, "help")
	_, rest, found := strings.Cut(out, "\nCommands:\n")
	list, _, ended := strings.Cut(rest, "\n\n")
	if !found || !ended {
		t.Fatalf("no command list:\n%s", out)
	}
	rows := strings.Split(list, "\n")
	cmds := commands()
	if len(rows) != len(cmds) {
		t.Fatalf("%d rows in the command list, want %d:\n%s", len(rows), len(cmds), list)
	}
	kinds := map[string]int{}
	for i, c := range cmds {
		if f := strings.Fields(rows[i]); len(f) < 3 || f[0] != c.name || f[1] != c.kind() {
			t.Errorf("row %d = %q, want %s, %s", i, rows[i], c.name, c.kind())
		}
		kinds[c.kind()]++
	}
	if kinds["read"] == 0 || kinds["write"] == 0 || kinds["check"] != 1 || kinds["controller"] != 7 {
		t.Errorf("kinds %v", kinds)
	}
}

func runWithEnv(env map[string]string, args ...string) cmdResult {
	var stdout, stderr strings.Builder
	code := runEnv(args, &stdout, &stderr, func(k string) string { return env[k] })
	return cmdResult{code, stdout.String(), stderr.String()}
}
