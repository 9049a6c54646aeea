// Tests of the authorization settings' checks.

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func TestValidateSecurity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "acl")
	if err := os.WriteFile(good, []byte("rocketmq2:12345678:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# nobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("rocketmq2:12345678:root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(props string, wantSub string) {
		t.Helper()
		c := Default()
		pp, err := properties.Parse(strings.NewReader(props))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Apply(pp); err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		switch {
		case wantSub == "" && err != nil:
			t.Fatalf("%q: %v", props, err)
		case wantSub != "" && (err == nil || !strings.Contains(err.Error(), wantSub)):
			t.Fatalf("%q: %v, want an error mentioning %q", props, err, wantSub)
		}
	}
	f("", "")
	f("adminAllowCIDRs=10.0.0.0/8, 127.0.0.1\n", "")
	f("adminAllowCIDRs=10.0.0.0/33\n", "adminAllowCIDRs")
	f("brokerAllowCIDRs=10.0.0.0/8, ::/0\n", "")
	f("brokerAllowCIDRs=broker-host\n", "brokerAllowCIDRs")
	f("aclStrictWindowSeconds=0\n", "aclStrictWindowSeconds=0")
	f("aclStrictWindowSeconds=86401\n", "want 1..86400")
	f("aclStrictSignature=true\n", "needs authorizationEnable=true")
	f("authorizationEnable=true\naclFile="+good+"\naclStrictSignature=true\naclStrictWindowSeconds=30\n", "")
	f("authorizationEnable=true\n", "needs aclFile")
	f("authorizationEnable=true\naclFile="+good+"\n", "")
	f("authorizationEnable=true\naclFile="+empty+"\n", "holds no account")
	f("authorizationEnable=true\naclFile="+bad+"\n", "unknown role")
	f("authorizationEnable=true\naclFile="+good+".missing\n", "aclFile")
	// The file is only read when signatures are on.
	f("aclFile="+bad+"\nauthorizeBrokerRegistration=true\n", "")
}

// None of the authorization keys may be changed by UPDATE_NAMESRV_CONFIG: a
// peer must not be able to switch checks off or point them at its own file.
func TestSecurityKeysAreNotRuntime(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"authorizationEnable", "aclFile", "authorizeBrokerRegistration", "adminAllowCIDRs",
		"brokerAllowCIDRs", "aclStrictSignature", "aclStrictWindowSeconds"} {
		key, ok := LookupKey(k)
		if !ok || key.Runtime {
			t.Errorf("%s: known=%v runtime=%v", k, ok, key.Runtime)
		}
		if _, err := Default().RuntimeUpdate([]properties.Property{{Key: k, Value: "false"}}); err == nil {
			t.Errorf("RuntimeUpdate accepted %s", k)
		}
	}
}
