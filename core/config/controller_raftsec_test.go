// Tests of the controller's raft security keys: the cluster secret read
// from its file and checked, mutual TLS refused without the files it
// needs, and both printed by -p.

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/tlstest"
)

const raftBase = "controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\n"

func TestControllerRaftSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  0123456789abcdef0123456789abcdef\n")
	c := DefaultController()
	applied(t, c, raftBase+"controllerRaftSecretFile="+good+"\n")
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	if string(k.RaftSecret) != "0123456789abcdef0123456789abcdef" || k.RaftSecretFile != good {
		t.Fatalf("secret %q from %q", k.RaftSecret, k.RaftSecretFile)
	}
	for path, want := range map[string]string{
		write("short", "0123456789\n"): "holds 10 bytes: want a secret of at least 16",
		write("empty", " \n"):          "holds 0 bytes",
		filepath.Join(dir, "missing"):  "no such file",
	} {
		c := DefaultController()
		applied(t, c, raftBase+"controllerRaftSecretFile="+path+"\n")
		if _, err := c.Controller(false); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), KeyControllerRaftSecretFile) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	// Unset: no secret, no error.
	c = DefaultController()
	applied(t, c, raftBase)
	if k, err := c.Controller(false); err != nil || k.RaftSecret != nil || k.RaftTLSEnable {
		t.Fatalf("defaults: %+v %v", k, err)
	}
}

func TestControllerRaftTLS(t *testing.T) {
	files := tlstest.NewCA(t, "raft").Files(t, 1)
	ok := "tls.server.certPath=" + files.Cert + "\ntls.server.keyPath=" + files.Key + "\ntls.server.trustCertPath=" + files.Trust + "\n"
	c := DefaultController()
	applied(t, c, raftBase+ok+"controllerRaftTLSEnable=true\n")
	if k, err := c.Controller(false); err != nil || !k.RaftTLSEnable {
		t.Fatalf("with the files: %+v %v", k, err)
	}
	for name, text := range map[string]string{
		"no files":      "",
		"no trust file": "tls.server.certPath=" + files.Cert + "\ntls.server.keyPath=" + files.Key + "\n",
		"test mode":     "tls.test.mode.enable=true\n",
		"disabled":      ok + "tls.server.mode=disabled\n",
	} {
		c := DefaultController()
		applied(t, c, raftBase+text+"controllerRaftTLSEnable=true\n")
		if _, err := c.Controller(false); err == nil || !strings.Contains(err.Error(), KeyControllerRaftTLSEnable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestControllerRaftSecurityPrinted(t *testing.T) {
	c := DefaultController()
	applied(t, c, raftBase)
	out := string(c.AppendControllerText(nil))
	for _, want := range []string{"controllerRaftSecretFile=\n", "controllerRaftTLSEnable=false\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("-p lacks %q", want)
		}
	}
}
