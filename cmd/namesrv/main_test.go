// Tests of the command: flags, config file handling, start and shutdown with
// a fake server.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/config"
)

// fakeServer records what the command did with it.
type fakeServer struct {
	cfg      *config.Config
	startErr error
	started  bool
	shutdown bool
	deadline bool
}

func (f *fakeServer) Start() error { f.started = true; return f.startErr }
func (f *fakeServer) Addr() string { return "127.0.0.1:" + "9876" }
func (f *fakeServer) Shutdown(ctx context.Context) error {
	f.shutdown = true
	_, f.deadline = ctx.Deadline()
	return nil
}

type result struct {
	code           int
	stdout, stderr string
}

// runFake runs the command with a fake server and, when signal is set, that
// signal already queued so the command stops right after starting.
func runFake(t *testing.T, fake *fakeServer, signal bool, args ...string) result {
	t.Helper()
	return runFakeEnv(t, fake, signal, nil, args...)
}

// runFakeEnv is runFake with environ as the process environment.
func runFakeEnv(t *testing.T, fake *fakeServer, signal bool, environ []string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	sigs := make(chan os.Signal, 1)
	if signal {
		sigs <- syscall.SIGTERM
	}
	factory := func(cfg *config.Config, _ *slog.Logger) (nameServer, error) {
		if fake == nil {
			t.Fatal("the server must not be created")
		}
		fake.cfg = cfg
		return fake, nil
	}
	code := runWith(args, environ, &stdout, &stderr, sigs, factory)
	return result{code, stdout.String(), stderr.String()}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "namesrv.properties")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func withHome(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", "/home/rmq")
	t.Setenv("ROCKETMQ_HOME", "")
}

func TestPrintDefaults(t *testing.T) {
	withHome(t)
	r := runFake(t, nil, false, "-p")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	if want := string(config.Default().AppendTextWithController(nil)); r.stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r.stderr != "" {
		t.Fatalf("stderr: %s", r.stderr)
	}
}

func TestConfigFileAndOverrides(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "# comment\nlistenPort=9877\nbindAddress=127.0.0.1\norderMessageEnable=true\nlogLevel=debug\n")
	r := runFake(t, nil, false, "-c", path, "--bindAddress", "10.0.0.2", "--set", "waitSecondsForService=7",
		"--set=productEnvName=a=b", "-n", "1.2.3.4:9876", "-p")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	for _, line := range []string{
		"load config properties file OK, " + path + "\n",
		"\nlistenPort=9877\n",
		"\nbindAddress=10.0.0.2\n", // the flag wins over the file
		"\norderMessageEnable=true\n",
		"\nwaitSecondsForService=7\n",
		"\nproductEnvName=a=b\n",
		"\nconfigStorePath=" + path + "\n", // -c makes the file the store path, like Java
		"\nlogLevel=debug\n",
	} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}
	if strings.HasPrefix(r.stdout, "load config") == false {
		t.Errorf("the load message must come first:\n%s", r.stdout)
	}
}

// ROCKETNS_ variables override the file and flags override them; other
// variables are none of the server's business.
func TestEnvironment(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "listenPort=1111\nlogLevel=debug\nkvConfigPath=/file/kv.json\n")
	env := []string{"PATH=/usr/bin", "ROCKETNS_LISTEN_PORT=2222", "ROCKETNS_KV_CONFIG_PATH=/env/kv.json",
		"ROCKETNS_ORDER_MESSAGE_ENABLE=true", "ROCKETNS_TLS_SERVER_MODE=disabled", "ROCKETNSX=1",
		// What Kubernetes sets in every pod for a Service named rocketns-0-ip.
		"ROCKETNS_0_IP_SERVICE_HOST=10.96.0.10", "ROCKETNS_0_IP_SERVICE_PORT=9876", "ROCKETNS_0_IP_PORT=tcp://10.96.0.10:9876",
		"ROCKETNS_0_IP_PORT_9876_TCP_ADDR=10.96.0.10"}
	r := runFakeEnv(t, nil, false, env, "-c", path, "-p")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	for _, line := range []string{"\nlistenPort=2222\n", "\nkvConfigPath=/env/kv.json\n", "\nlogLevel=debug\n",
		"\norderMessageEnable=true\n", "\ntls.server.mode=disabled\n"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}

	fake := &fakeServer{}
	r = runFakeEnv(t, fake, true, env, "-c", path, "--listenPort", "0")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	if fake.cfg.ListenPort != 0 || fake.cfg.KVConfigPath != "/env/kv.json" || !fake.cfg.OrderMessageEnable {
		t.Fatalf("server got listenPort=%d kvConfigPath=%s orderMessageEnable=%v, want the flag's port and the environment's path",
			fake.cfg.ListenPort, fake.cfg.KVConfigPath, fake.cfg.OrderMessageEnable)
	}
}

// A ROCKETNS_ variable that names no setting, or holds a bad value, stops
// start-up naming the variable; nothing is served.
func TestEnvironmentErrors(t *testing.T) {
	withHome(t)
	f := func(env []string, want ...string) {
		t.Helper()
		r := runFakeEnv(t, nil, false, env)
		if r.code != 1 {
			t.Fatalf("%v: exit %d, want 1; stderr %s", env, r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", env, w, r.stderr)
			}
		}
	}
	f([]string{"ROCKETNS_LISTEN_PROT=1", "ROCKETNS_LOGLEVEL=debug"}, "ROCKETNS_LISTEN_PROT, ROCKETNS_LOGLEVEL: no such setting", "ROCKETNS_LISTEN_PORT")
	f([]string{"ROCKETNS_LISTEN_PORT=nine"}, "listenPort", "environment ROCKETNS_LISTEN_PORT")
	f([]string{"ROCKETNS_ORDER_MESSAGE_ENABLE=yes"}, "environment ROCKETNS_ORDER_MESSAGE_ENABLE")
	f([]string{"ROCKETNS_LISTEN_PORT=70000"}, "listenPort=70000")
}

func TestLongFlagNames(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "listenPort=1\n")
	r := runFake(t, nil, false, "--configFile", path, "--listenPort=2", "--printConfigItem")
	if r.code != 0 || !strings.Contains(r.stdout, "\nlistenPort=2\n") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestBadValues(t *testing.T) {
	withHome(t)
	f := func(args []string, code int, wantErr string) {
		t.Helper()
		r := runFake(t, nil, false, args...)
		if r.code != code {
			t.Fatalf("%q: exit %d, want %d; stderr %s", args, r.code, code, r.stderr)
		}
		if !strings.Contains(r.stderr, wantErr) {
			t.Fatalf("%q: stderr %q lacks %q", args, r.stderr, wantErr)
		}
	}
	f([]string{"--listenPort", "abc", "-p"}, 2, `config: listenPort="abc": not an integer`)
	f([]string{"--set", "enableTopicList=maybe", "-p"}, 2, `config: enableTopicList="maybe": not a boolean`)
	f([]string{"--set", "noequals", "-p"}, 2, `want key=value`)
	f([]string{"--nosuchflag", "-p"}, 2, "nosuchflag")
	f([]string{"-p", "extra"}, 2, "unexpected arguments")
	f([]string{"--logLevel", "loud", "-p"}, 1, `logLevel="loud"`)
	f([]string{"--listenPort", "70000", "-p"}, 1, "listenPort=70000")

	bad := writeConfig(t, "a=1\nlistenPort=abc\n")
	f([]string{"-c", bad, "-p"}, 1, `config: listenPort="abc" (`+bad+`:2): not an integer`)
	f([]string{"-c", bad, "-p"}, 1, bad)
	malformed := writeConfig(t, "a=\\u12\n")
	f([]string{"-c", malformed, "-p"}, 1, "line 1")
	f([]string{"-c", filepath.Join(t.TempDir(), "missing.properties"), "-p"}, 1, "missing.properties")
}

func TestUnknownKeysWarnOncePerKey(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "serverWorkerThreads=16\nfoo=bar\nlistenPort=9876\norderMessageEnabel=true\nfoo=baz\n")
	r := runFake(t, nil, false, "-c", path, "--set", "baz=1", "-p")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 log lines, got:\n%s", r.stderr)
	}
	// Unknown keys are warnings, one per key with its last source and the
	// nearest known key; the Java keys rocketns does not use are one
	// line of their own at info level.
	for i, want := range []string{
		`unknown key \"orderMessageEnabel\" (` + path + `:4); did you mean orderMessageEnable?`,
		`unknown key \"foo\" (` + path + `:5)`,
		`unknown key \"baz\" (flag --set)`,
	} {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %s, want a warning about %s", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[3], "level=INFO") || !strings.Contains(lines[3], "Java settings rocketns does not use, kept as is: serverWorkerThreads ("+path+":1)") {
		t.Errorf("line 3 = %s, want the Java keys", lines[3])
	}
	// Kept keys are printed like Java's GET_NAMESRV_CONFIG does.
	for _, line := range []string{"\nfoo=baz\n", "\nbaz=1\n", "\nserverWorkerThreads=16\n"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("stdout lacks %q", line)
		}
	}
}

// strictConfig=true stops start-up on the unknown keys, all of them.
func TestStrictConfig(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "serverWorkerThreads=16\norderMessageEnabel=true\nfoo=bar\n")
	for _, r := range []result{
		runFake(t, nil, false, "-c", path, "--set", "strictConfig=true", "-p"),
		runFakeEnv(t, nil, false, []string{"ROCKETNS_STRICT_CONFIG=true"}, "-c", path, "-p"),
	} {
		if r.code != 1 || !strings.Contains(r.stderr, `unknown key "orderMessageEnabel" (`+path+`:2); did you mean orderMessageEnable?`) ||
			!strings.Contains(r.stderr, `unknown key "foo"`) || strings.Contains(r.stderr, "serverWorkerThreads") {
			t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
		}
	}
}

// All the problems at once, each with its source, one line each, and the
// address checked without starting anything.
func TestAllErrorsAtOnce(t *testing.T) {
	withHome(t)
	path := writeConfig(t, "# c\nlistenPort=99999\nbindAddress=not-an-ip\nlistenPrt=9876\n")
	r := runFakeEnv(t, nil, false, []string{"ROCKETNS_ADMIN_LISTEN=0.0.0.0:99999"}, "-c", path, "--set", "maxConnections=0")
	if r.code != 1 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	want := []string{
		// The ranges (config's table) first, then the other checks.
		"namesrv: config: listenPort=99999 (" + path + ":2): want 0..65535",
		"namesrv: config: maxConnections=0 (flag --set): want a positive number",
		`namesrv: config: bindAddress="not-an-ip" (` + path + `:3): want an IP address`,
		`namesrv: config: adminListen="0.0.0.0:99999" (environment ROCKETNS_ADMIN_LISTEN): port "99999"`,
		// The warnings too: the misspelt key is why listenPort is wrong.
		`namesrv: warning: config: unknown key "listenPrt" (` + path + `:4); did you mean listenPort?`,
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want %q...", i, lines[i], w)
		}
	}
}

// A bad command line: the error and one line pointing to -h, not the
// whole usage.
func TestBadFlagOneLine(t *testing.T) {
	withHome(t)
	for _, args := range [][]string{{"--nosuchflag"}, {"--listenPort"}, {"-p", "extra"}, {"--listenPort", "abc"}, {"--pprof-addr", "nohost"}} {
		r := runFake(t, nil, false, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], "namesrv: ") || lines[1] != "Run 'namesrv -h' for the options." {
			t.Errorf("%q: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	r := runFake(t, nil, false, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "namesrv "+buildinfo.Version()+" (go") || r.stderr != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestJSONLogs(t *testing.T) {
	withHome(t)
	r := runFake(t, nil, false, "--logFormat", "json", "--set", "foo=bar", "-p")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stderr)), &rec); err != nil {
		t.Fatalf("stderr is not one JSON record: %v\n%s", err, r.stderr)
	}
	if rec["level"] != "WARN" {
		t.Fatalf("record %v", rec)
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		r := runFake(t, nil, false, arg)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: namesrv") || !strings.Contains(r.stdout, "-listenPort") {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", arg, r.code, r.stdout, r.stderr)
		}
	}
}

func TestServeAndShutdown(t *testing.T) {
	withHome(t)
	fake := &fakeServer{}
	r := runFake(t, fake, true, "--listenPort", "0", "--kvConfigPath", "/data/kv.json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	if !fake.started || !fake.shutdown || !fake.deadline {
		t.Fatalf("started=%v shutdown=%v deadline=%v", fake.started, fake.shutdown, fake.deadline)
	}
	if fake.cfg.ListenPort != 0 || fake.cfg.KVConfigPath != "/data/kv.json" {
		t.Fatalf("server got %+v", fake.cfg)
	}
	banner := "The Name Server boot success. serializeType=JSON, address 127.0.0.1:9876"
	if r.stdout != banner+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, banner) || !strings.Contains(r.stderr, "signal=terminated") {
		t.Fatalf("stderr %s", r.stderr)
	}
}

func TestStartFailure(t *testing.T) {
	withHome(t)
	fake := &fakeServer{startErr: errors.New("address already in use")}
	r := runFake(t, fake, true)
	if r.code != 1 || fake.shutdown || !strings.Contains(r.stderr, "address already in use") {
		t.Fatalf("exit %d shutdown=%v stderr %s", r.code, fake.shutdown, r.stderr)
	}
}

func TestNewFailure(t *testing.T) {
	withHome(t)
	var stdout, stderr bytes.Buffer
	factory := func(*config.Config, *slog.Logger) (nameServer, error) {
		return nil, errors.New("load kv config: kv: parse /x/kvConfig.json: bad")
	}
	code := runWith(nil, nil, &stdout, &stderr, make(chan os.Signal), factory)
	if code != 1 || !strings.Contains(stderr.String(), "kvConfig.json") {
		t.Fatalf("exit %d stderr %s", code, stderr.String())
	}
}

func TestPprofListenerOnlyWhenAsked(t *testing.T) {
	withHome(t)
	fake := &fakeServer{}
	r := runFake(t, fake, true, "--pprof-addr", "127.0.0.1:0")
	if r.code != 0 || !strings.Contains(r.stderr, "pprof listening") {
		t.Fatalf("exit %d stderr %s", r.code, r.stderr)
	}
	r = runFake(t, &fakeServer{}, true)
	if r.code != 0 || strings.Contains(r.stderr, "pprof") {
		t.Fatalf("pprof started without --pprof-addr: exit %d stderr %s", r.code, r.stderr)
	}
	r = runFake(t, nil, true, "--pprof-addr", "127.0.0.1:notaport")
	if r.code != 2 || !strings.Contains(r.stderr, "--pprof-addr") {
		t.Fatalf("bad pprof address: exit %d stderr %s", r.code, r.stderr)
	}
	// The address is taken: the server that started is shut down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fake = &fakeServer{}
	r = runFake(t, fake, true, "--pprof-addr", ln.Addr().String())
	if r.code != 1 || !fake.shutdown || !strings.Contains(r.stderr, "pprof") {
		t.Fatalf("pprof address in use: exit %d shutdown=%v stderr %s", r.code, fake.shutdown, r.stderr)
	}
}
