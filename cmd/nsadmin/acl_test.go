// Tests of the ACL credentials flags against a NameServer with
// authorization on.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
)

func startSecuredNS(t *testing.T) string {
	t.Helper()
	return startNSWith(t, func(cfg *config.Config, dir string) {
		cfg.AuthorizationEnable = true
		cfg.ACLFile = filepath.Join(dir, "acl")
		if err := os.WriteFile(cfg.ACLFile, []byte("rocketmq2:12345678:admin\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCredentialsFlags(t *testing.T) {
	ns := startSecuredNS(t)
	put := []string{"updateKvConfig", "-n", ns, "-s", "ns", "-k", "k", "-v", "v"}

	fails(t, exitFail, []string{ns, "error code 16 (NO_PERMISSION)", "PUT_KV_CONFIG (100)", "not signed"}, put...)
	fails(t, exitFail, []string{"signature does not match"},
		append(put, "-accessKey", "rocketmq2", "-secretKey", "87654321")...)
	ok(t, append(put, "-accessKey", "rocketmq2", "-secretKey", "12345678")...)
	fails(t, exitUsage, []string{"-accessKey and -secretKey"}, append(put, "-accessKey", "rocketmq2")...)

	// From the environment; a flag overrides its variable.
	env := func(ak, sk string) func(string) string {
		return func(k string) string {
			switch k {
			case "ROCKETMQ_ACCESS_KEY":
				return ak
			case "ROCKETMQ_SECRET_KEY":
				return sk
			}
			return ""
		}
	}
	run := func(getenv func(string) string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runPatient(args, &stdout, &stderr, getenv)
		return code, stderr.String()
	}
	if code, stderr := run(env("rocketmq2", "12345678"), "deleteKvConfig", "-n", ns, "-s", "ns", "-k", "k"); code != exitOK {
		t.Fatalf("env credentials: exit %d: %s", code, stderr)
	}
	if code, stderr := run(env("rocketmq2", "wrong-secret"), append(put, "-secretKey", "12345678")...); code != exitOK {
		t.Fatalf("flag over env: exit %d: %s", code, stderr)
	}
	if code, stderr := run(env("rocketmq2", ""), put...); code != exitUsage || !strings.Contains(stderr, "go together") {
		t.Fatalf("half the credentials in env: exit %d: %s", code, stderr)
	}
	// Reads stay open without credentials.
	if !strings.Contains(ok(t, "getKvConfig", "-n", ns, "-s", "ns", "-k", "k", "-accessKey", "rocketmq2", "-secretKey", "12345678"), "v") {
		t.Fatal("getKvConfig after the writes lacks the value")
	}
	ok(t, "clusterList", "-n", ns)
}

func TestHelpListsCredentialsFlags(t *testing.T) {
	out := ok(t, "help", "updateKvConfig")
	for _, w := range []string{"-accessKey ak", "-secretKey sk", "ROCKETMQ_SECRET_KEY"} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q:\n%s", w, out)
		}
	}
}

// -strictSign signs in the strict scheme, which a NameServer with
// aclStrictSignature requires; the compat scheme is refused there.
func TestStrictSignFlag(t *testing.T) {
	ns := startNSWith(t, func(cfg *config.Config, dir string) {
		cfg.AuthorizationEnable = true
		cfg.ACLStrictSignature = true
		cfg.ACLFile = filepath.Join(dir, "acl")
		if err := os.WriteFile(cfg.ACLFile, []byte("rocketmq2:12345678:admin\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	put := []string{"updateKvConfig", "-n", ns, "-s", "ns", "-k", "k", "-v", "v", "-accessKey", "rocketmq2", "-secretKey", "12345678"}
	fails(t, exitFail, []string{"must sign with the strict scheme"}, put...)
	ok(t, append(put, "-strictSign")...)
	fails(t, exitUsage, []string{"-strictSign needs -accessKey"}, "updateKvConfig", "-n", ns, "-s", "ns", "-k", "k", "-v", "v", "-strictSign")
	// From the environment.
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if k == "ROCKETMQ_STRICT_SIGN" {
			return "true"
		}
		return ""
	}
	if code := runPatient([]string{"deleteKvConfig", "-n", ns, "-s", "ns", "-k", "k", "-accessKey", "rocketmq2", "-secretKey", "12345678"}, &stdout, &stderr, getenv); code != exitOK {
		t.Fatalf("ROCKETMQ_STRICT_SIGN=true: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(ok(t, "help", "updateKvConfig"), "-strictSign") {
		t.Fatal("help lacks -strictSign")
	}
}
