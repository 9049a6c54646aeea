// Tests of run-time updates: the black list, the run-time list, all-or-nothing
// application, and atomic persistence with a backup.

package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func TestRuntimeKeysAreTypedAndNotBlackListed(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, name := range RuntimeKeys(RoleBoth) {
		k, ok := LookupKey(name)
		if !ok {
			t.Errorf("%s: not a known key", name)
			continue
		}
		if k.Type == TypeString {
			t.Errorf("%s: a string key could carry a path or line breaks", name)
		}
		if c.InBlackList(name) || k.BlackListed || inBlackList(RoleController, DefaultController().ConfigBlackList, name) {
			t.Errorf("%s: black-listed", name)
		}
	}
}

func TestRuntimeUpdate(t *testing.T) {
	t.Parallel()
	base := Default()
	f := func(text string, wantErr error, wantKey string) *Config {
		t.Helper()
		n, err := base.RuntimeUpdate(parse(t, text))
		if wantErr == nil {
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			return n
		}
		var ue *UpdateError
		if !errors.As(err, &ue) || !errors.Is(err, wantErr) || ue.Key != wantKey {
			t.Fatalf("%q: got %v (%T), want %v on %s", text, err, err, wantErr, wantKey)
		}
		if n != nil {
			t.Fatalf("%q: refused update returned a config", text)
		}
		return nil
	}
	n := f("orderMessageEnable=true\nwaitSecondsForService=7\nsupportActingMaster=TRUE\n", nil, "")
	if !n.OrderMessageEnable || n.WaitSecondsForService != 7 || !n.SupportActingMaster {
		t.Fatalf("not applied: %+v", n)
	}
	if base.OrderMessageEnable || base.WaitSecondsForService != 45 {
		t.Fatalf("base modified: %+v", base)
	}
	// The black list wins over every other check, whatever the order.
	f("orderMessageEnable=false\nrocketmqHome=/x\n", ErrBlackListed, "rocketmqHome")
	f("listenPort=1\nkvConfigPath=/x\n", ErrBlackListed, "kvConfigPath")
	f("configStorePath=/etc/cron.d/x\n", ErrBlackListed, "configStorePath")
	f("configBlackList=\n", ErrBlackListed, "configBlackList")
	// Known but not live, and unknown keys.
	f("orderMessageEnable=true\nlistenPort=1\n", ErrNotRuntime, "listenPort")
	f("serverWorkerThreads=99\n", ErrNotRuntime, "serverWorkerThreads")
	f("evil=x\\ny\n", ErrNotRuntime, "evil")
	f("logLevel=debug\n", ErrNotRuntime, "logLevel")
	// Bad values.
	f("enableTopicList=yes\n", ErrBadValue, "enableTopicList")
	f("waitSecondsForService=-1\n", ErrBadValue, "waitSecondsForService")
	// The user's own black list is honoured.
	b2 := base.Clone()
	b2.ConfigBlackList += ";orderMessageEnable"
	if _, err := b2.RuntimeUpdate(parse(t, "orderMessageEnable=true")); !errors.Is(err, ErrBlackListed) {
		t.Fatalf("user black list: %v", err)
	}
	// The remark names the key and the keys that can change.
	err := (&UpdateError{Role: RoleNameServer, Key: "listenPort", Err: ErrNotRuntime}).Error()
	if !strings.Contains(err, "listenPort can only be set in the config file") || !strings.Contains(err, "enableTopicList") {
		t.Fatalf("message %q", err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

// TestPersistUpdateGolden: a commented namesrv.properties, values from the
// environment and the command line over it, then three run-time updates.
// Only the updated keys change in the file, in place, and neither the
// environment's nor the flags' values are written.
func TestPersistUpdateGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "persist")
	orig, err := os.ReadFile(filepath.Join(dir, "namesrv.properties"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "namesrv.properties")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	cfg.ConfigStorePath = path
	if _, err := cfg.Apply(parse(t, string(orig))); err != nil {
		t.Fatal(err)
	}
	env, err := FromEnv([]string{"ROCKETNS_ADMIN_LISTEN=127.0.0.1:9877", "ROCKETNS_NSADDR_LIST=10.0.0.1:9876"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Apply(env); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("bindAddress", "10.1.1.1"); err != nil {
		t.Fatal(err)
	}

	var prev []byte
	for _, upd := range []string{
		"orderMessageEnable=true",
		"waitSecondsForService=7\nenableTopicList=false\n",
		"needWaitForService=TRUE\norderMessageEnable=true\n",
	} {
		next, err := cfg.RuntimeUpdate(parse(t, upd))
		if err != nil {
			t.Fatalf("%q: %v", upd, err)
		}
		var keys []string
		for _, p := range parse(t, upd) {
			keys = append(keys, p.Key)
		}
		prev, _ = os.ReadFile(path)
		if err := next.PersistUpdate(path, keys); err != nil {
			t.Fatalf("%q: %v", upd, err)
		}
		cfg = next
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	goldenPath := filepath.Join(dir, "namesrv.properties.golden")
	if *update {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("persisted file:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"10.1.1.1", "adminListen", "nsaddrList", "bindAddress="} {
		if strings.Contains(string(got), s) {
			t.Errorf("the file holds %q, which came from a flag or the environment", s)
		}
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != string(prev) {
		t.Errorf("backup %q, want the content before the last update", bak)
	}
	// Read back, the file gives the updated values and keeps the rest.
	back := Default()
	if _, err := back.Apply(parse(t, string(got))); err != nil {
		t.Fatal(err)
	}
	if !back.OrderMessageEnable || back.WaitSecondsForService != 7 || back.EnableTopicList || !back.NeedWaitForService ||
		back.BindAddress != "0.0.0.0" || back.KVConfigPath != "/var/lib/rocketmq/namesrv/kvConfig.json" {
		t.Fatalf("read back: %+v", back)
	}
}

func TestPersistUpdate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := Default()
	c.OrderMessageEnable = true

	// A missing file is created with just the updated keys, no backup.
	path := filepath.Join(dir, "sub", "namesrv.properties")
	if err := c.PersistUpdate(path, []string{"orderMessageEnable"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "orderMessageEnable=true\n" {
		t.Fatalf("new file %q", b)
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Fatalf("backup without a previous file: %v", err)
	}

	// The value the file already means: not rewritten.
	path2 := filepath.Join(dir, "same.properties")
	if err := os.WriteFile(path2, []byte("# x\norderMessageEnable = TRUE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.PersistUpdate(path2, []string{"orderMessageEnable"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path2); string(b) != "# x\norderMessageEnable = TRUE\n" {
		t.Fatalf("rewritten: %q", b)
	}
	if _, err := os.Stat(path2 + ".bak"); !os.IsNotExist(err) {
		t.Fatal("a file with nothing to change was replaced")
	}

	// A file that does not parse any more is left alone.
	path3 := filepath.Join(dir, "broken.properties")
	broken := "orderMessageEnable=false\nx=\\uZZZZ\n"
	if err := os.WriteFile(path3, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.PersistUpdate(path3, []string{"orderMessageEnable"}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("broken file: %v", err)
	}
	if b, _ := os.ReadFile(path3); string(b) != broken {
		t.Fatalf("broken file changed: %q", b)
	}

	// No temporary files left behind.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries", len(ents))
	}

	// Below a regular file: an error, nothing written.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.PersistUpdate(filepath.Join(blocker, "x.properties"), []string{"orderMessageEnable"}); err == nil {
		t.Fatal("wrote below a regular file")
	}
	if err := c.PersistUpdate(filepath.Join(dir, "y"), []string{"nosuchkey"}); err == nil {
		t.Fatal("persisted an unknown key")
	}
}

func TestRuntimeUpdateSources(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	l, err := Load(LoadInput{
		Environ: []string{"ROCKETNS_ORDER_MESSAGE_ENABLE=false"},
		Flags:   []properties.Property{{Key: "waitSecondsForService", Value: "3", Origin: "--set"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"orderMessageEnable", "waitSecondsForService", "enableTopicList"}
	if got := strings.Join(l.Config.OverriddenAtStart(keys), ", "); got != "orderMessageEnable (environment ROCKETNS_ORDER_MESSAGE_ENABLE), waitSecondsForService (flag --set)" {
		t.Errorf("OverriddenAtStart = %s", got)
	}
	n, err := l.Config.RuntimeUpdate(parse(t, "orderMessageEnable=true\nenableTopicList=false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := n.Source("orderMessageEnable").String(); s != "run-time update" {
		t.Errorf("source after the update: %q", s)
	}
	if s := n.Source("waitSecondsForService").String(); s != "flag --set" {
		t.Errorf("an untouched key's source: %q", s)
	}
}
