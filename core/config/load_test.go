// Tests of Load: precedence, sources in every message, all errors at once,
// the hints for misspelt keys, strictConfig and the address checks.

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "namesrv.properties")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func flagProp(flag, key, value string) properties.Property {
	return properties.Property{Key: key, Value: value, Origin: flag}
}

func TestLoadPrecedenceAndSources(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	path := writeFile(t, "# x\nlistenPort=1111\nlogLevel=debug\norderMessageEnable=true\n")
	l, err := Load(LoadInput{
		File:    path,
		Environ: []string{"ROCKETNS_LISTEN_PORT=2222", "ROCKETNS_LOG_LEVEL=warn"},
		Flags:   []properties.Property{flagProp("--listenPort", "listenPort", "3333")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if c.ListenPort != 3333 || c.LogLevel != "warn" || !c.OrderMessageEnable || c.ConfigStorePath != path {
		t.Fatalf("got listenPort=%d logLevel=%s orderMessageEnable=%v configStorePath=%s", c.ListenPort, c.LogLevel, c.OrderMessageEnable, c.ConfigStorePath)
	}
	f := func(key, want string) {
		t.Helper()
		if got := c.Source(key).String(); got != want {
			t.Errorf("Source(%s) = %q, want %q", key, got, want)
		}
	}
	f("listenPort", "flag --listenPort")
	f("logLevel", "environment ROCKETNS_LOG_LEVEL")
	f("orderMessageEnable", path+":4")
	f("bindAddress", "")
	// Clones keep the sources.
	if c.Clone().Source("orderMessageEnable") != c.Source("orderMessageEnable") {
		t.Error("Clone dropped the sources")
	}
}

// Every problem of every source in one error, each naming its source.
func TestLoadReportsEveryErrorWithItsSource(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	path := writeFile(t, "# comment\n\nlistenPort=99999\nbindAddress=not-an-ip\norderMessageEnable=maybe\nlogLevel=debug\n")
	_, err := Load(LoadInput{
		File:    path,
		Environ: []string{"ROCKETNS_ADMIN_LISTEN=nshost:9877", "ROCKETNS_NSADDR_LIST=10.0.0.1:9876;bad host:1", "ROCKETNS_LISTEN_PROT=1"},
		Flags: []properties.Property{
			flagProp("--set", "maxConnections", "0"),
			flagProp("--set", "waitSecondsForService", "soon"),
		},
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`config: listenPort=99999 (` + path + `:3): want 0..65535`,
		`config: bindAddress="not-an-ip" (` + path + `:4): want an IP address`,
		`config: orderMessageEnable="maybe" (` + path + `:5): not a boolean`,
		`config: adminListen="nshost:9877" (environment ROCKETNS_ADMIN_LISTEN): want an IP address`,
		`host names such as "nshost" are not resolved`,
		`config: nsaddrList entry "bad host:1" (environment ROCKETNS_NSADDR_LIST)`,
		`ROCKETNS_LISTEN_PROT: no such setting`,
		`did you mean ROCKETNS_LISTEN_PORT (listenPort) for ROCKETNS_LISTEN_PROT?`,
		`config: maxConnections=0 (flag --set): want a positive number`,
		`config: waitSecondsForService="soon" (flag --set): not an integer`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 8 {
		t.Errorf("%d lines, want one per problem (8):\n%s", n, msg)
	}
}

func TestLoadUnknownKeys(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	text := "serverWorkerThreads=16\norderMessageEnabel=true\nlistenport=1\nclientWorkerThreads=4\nfoo=bar\nfoo=baz\n"
	path := writeFile(t, text)
	l, err := Load(LoadInput{File: path, Flags: []properties.Property{flagProp("--set", "waitSecondsForServce", "1")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`config: unknown key "orderMessageEnabel" (` + path + `:2); did you mean orderMessageEnable?; kept as is`,
		`config: unknown key "listenport" (` + path + `:3); did you mean listenPort?; kept as is`,
		`config: unknown key "foo" (` + path + `:6); kept as is`,
		`config: unknown key "waitSecondsForServce" (flag --set); did you mean waitSecondsForService?; kept as is`,
	}
	if strings.Join(l.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(l.Warnings, "\n"), strings.Join(want, "\n"))
	}
	ignored := []string{"serverWorkerThreads (" + path + ":1)", "clientWorkerThreads (" + path + ":4)"}
	if strings.Join(l.Ignored, ";") != strings.Join(ignored, ";") {
		t.Errorf("ignored %q, want %q", l.Ignored, ignored)
	}
	if l.Config.Extra["foo"] != "baz" || l.Config.Extra["serverWorkerThreads"] != "16" {
		t.Errorf("unknown keys not kept: %v", l.Config.Extra)
	}

	// strictConfig=true, from any source, refuses the unknown keys (all of
	// them) but not the Java ones.
	for _, in := range []LoadInput{
		{File: writeFile(t, text+"strictConfig=true\n")},
		{File: path, Environ: []string{"ROCKETNS_STRICT_CONFIG=true"}},
		{File: path, Flags: []properties.Property{flagProp("--set", "strictConfig", "true")}},
	} {
		_, err := Load(in)
		if err == nil {
			t.Fatalf("%+v: strict load passed", in)
		}
		msg := err.Error()
		for _, w := range []string{`unknown key "orderMessageEnabel"`, "did you mean orderMessageEnable?", "strictConfig=true refuses unknown keys", `unknown key "foo"`} {
			if !strings.Contains(msg, w) {
				t.Errorf("%+v: error lacks %q:\n%s", in, w, msg)
			}
		}
		if strings.Contains(msg, "serverWorkerThreads") {
			t.Errorf("a Java key refused:\n%s", msg)
		}
	}
	// And lets a file of known and Java keys through.
	if _, err := Load(LoadInput{File: writeFile(t, "strictConfig=true\nserverWorkerThreads=8\nlistenPort=1\n")}); err != nil {
		t.Fatal(err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	f := func(in LoadInput, want ...string) {
		t.Helper()
		_, err := Load(in)
		if err == nil {
			t.Fatalf("%+v: no error", in)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q lacks %q", in, err, w)
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.properties")
	f(LoadInput{File: missing}, "config file", "missing.properties")
	// A syntax error names the line; the keys before it and the flags are
	// still checked.
	broken := writeFile(t, "listenPort=70000\nx=\\u12\n")
	f(LoadInput{File: broken, Flags: []properties.Property{flagProp("--logLevel", "logLevel", "loud")}},
		broken+": properties: line 2", "listenPort=70000 ("+broken+":1)", `logLevel="loud" (flag --logLevel)`)
}

func TestSuggestKey(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		if got := SuggestKey(in); got != want {
			t.Errorf("SuggestKey(%q) = %q, want %q", in, got, want)
		}
	}
	f("orderMessageEnabel", "orderMessageEnable")
	f("ordermessageenable", "orderMessageEnable")
	f("listenPrt", "listenPort")
	f("bindAdress", "bindAddress")
	f("serverWorkerThread", "serverWorkerThreads")
	f("tls.server.certpath", "tls.server.certPath")
	f("adminListenAddr", "")
	f("foo", "")
	f("x", "")
	f("listenPort", "") // known: nothing to suggest
}

func TestAddressChecks(t *testing.T) {
	t.Parallel()
	f := func(name string, check func(string) error, in string, ok bool) {
		t.Helper()
		err := check(in)
		if (err == nil) != ok {
			t.Errorf("%s(%q) = %v, want ok=%v", name, in, err, ok)
		}
	}
	for _, in := range []string{"", "0.0.0.0", "127.0.0.1", "10.1.2.3", "::", "::1", "fe80::1%eth0"} {
		f("CheckBindIP", CheckBindIP, in, true)
	}
	for _, in := range []string{"not-an-ip", "localhost", "nshost.example.com", "10.0.0.256", "10.0.0", "1.2.3.4:9876", " 10.0.0.1", "[::1]"} {
		f("CheckBindIP", CheckBindIP, in, false)
	}
	for _, in := range []string{"127.0.0.1:9877", ":9877", "0.0.0.0:0", "[::1]:16062", "[::]:9877"} {
		f("CheckListenAddr", CheckListenAddr, in, true)
	}
	for _, in := range []string{"127.0.0.1", "localhost:9877", "host:9877", "127.0.0.1:http", "127.0.0.1:70000", "127.0.0.1:-1", "::1:9877"} {
		f("CheckListenAddr", CheckListenAddr, in, false)
	}
	for _, in := range []string{"10.0.0.1:9876", "ns1.example.com:9876", "ns-1:9876", "[::1]:9876", "rocketns-0.rocketns.default.svc.cluster.local.:9876"} {
		f("CheckDialAddr", CheckDialAddr, in, true)
	}
	for _, in := range []string{"10.0.0.1", ":9876", "10.0.0.1:0", "bad host:9876", "-ns:9876", "ns_1:9876", "1.2.3:9876", "a..b:9876"} {
		f("CheckDialAddr", CheckDialAddr, in, false)
	}
}
