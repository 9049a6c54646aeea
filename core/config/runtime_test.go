// Tests of run-time updates: the black list, the run-time list, all-or-nothing
// application, and atomic persistence with a backup.

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func TestRuntimeKeysAreLiveKnownAndNotBlackListed(t *testing.T) {
	c := Default()
	for _, name := range RuntimeKeys() {
		k, ok := LookupKey(name)
		if !ok {
			t.Errorf("%s: not a known key", name)
			continue
		}
		if !k.Live {
			t.Errorf("%s: not read at request time", name)
		}
		if k.Type == TypeString {
			t.Errorf("%s: a string key could carry a path or line breaks", name)
		}
		if c.InBlackList(name) {
			t.Errorf("%s: black-listed", name)
		}
	}
}

func TestRuntimeUpdate(t *testing.T) {
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
	err := (&UpdateError{Key: "listenPort", Err: ErrNotRuntime}).Error()
	if !strings.Contains(err, "listenPort can only be set in the config file") || !strings.Contains(err, "enableTopicList") {
		t.Fatalf("message %q", err)
	}
}

func TestWriteFileKeepsBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "namesrv.properties")
	c := Default()
	c.OrderMessageEnable = true
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Fatalf("backup without a previous file: %v", err)
	}
	first, _ := os.ReadFile(path)
	if string(first) != string(c.AppendText(nil)) {
		t.Fatalf("content %q", first)
	}
	c.OrderMessageEnable = false
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	bak, _ := os.ReadFile(path + ".bak")
	if string(bak) != string(first) {
		t.Fatalf("backup %q, want the previous content", bak)
	}
	// The file reads back to the same settings.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	back := Default()
	if _, err := back.Apply(props); err != nil {
		t.Fatal(err)
	}
	if string(back.AppendText(nil)) != string(c.AppendText(nil)) {
		t.Fatalf("round trip differs")
	}
	// No temporary files left behind.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 2 {
		t.Fatalf("directory holds %d entries", len(ents))
	}
}

func TestWriteFileFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Default().WriteFile(filepath.Join(blocker, "x.properties")); err == nil {
		t.Fatal("wrote below a regular file")
	}
}
