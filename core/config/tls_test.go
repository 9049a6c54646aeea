// Tests of the TLS settings (mode choice, tls.config.file, checks) and of the
// limit keys.

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSSettings(t *testing.T) {
	t.Parallel()
	f := func(text string, want TLSSettings) {
		t.Helper()
		c := Default()
		if _, err := c.Apply(parse(t, text)); err != nil {
			t.Fatalf("%q: Apply: %v", text, err)
		}
		got, err := c.TLS()
		if err != nil {
			t.Fatalf("%q: TLS: %v", text, err)
		}
		if got != want {
			t.Errorf("%q:\ngot  %+v\nwant %+v", text, got, want)
		}
	}
	// No mode and no certificate: plaintext only, unlike Java's default.
	f("", TLSSettings{Mode: TLSDisabled})
	f("tls.server.mode=Disabled", TLSSettings{Mode: TLSDisabled})
	// A certificate or test mode without a mode: permissive.
	f("tls.server.certPath=/c.pem\ntls.server.keyPath=/k.pem",
		TLSSettings{Mode: TLSPermissive, CertPath: "/c.pem", KeyPath: "/k.pem"})
	f("tls.test.mode.enable=true", TLSSettings{Mode: TLSPermissive, TestMode: true})
	f("tls.server.mode=enforcing\ntls.test.mode.enable=true\ntls.server.need.client.auth=OPTIONAL",
		TLSSettings{Mode: TLSEnforcing, TestMode: true, NeedClientAuth: ClientAuthOptional})
	f("tls.server.mode=permissive\ntls.server.certPath=/c.pem\ntls.server.keyPath=/k.pem\n"+
		"tls.server.need.client.auth=require\ntls.server.authClient=true\ntls.server.trustCertPath=/ca.pem",
		TLSSettings{Mode: TLSPermissive, CertPath: "/c.pem", KeyPath: "/k.pem", TrustCertPath: "/ca.pem",
			NeedClientAuth: ClientAuthRequire, AuthClient: true})
}

func TestTLSSettingsRefused(t *testing.T) {
	t.Parallel()
	f := func(text, want string) {
		t.Helper()
		c := Default()
		if _, err := c.Apply(parse(t, text)); err != nil {
			t.Fatalf("%q: Apply: %v", text, err)
		}
		_, err := c.TLS()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: TLS() = %v, want an error containing %q", text, err, want)
		}
	}
	f("tls.server.mode=strict", "want disabled, permissive or enforcing")
	f("tls.server.need.client.auth=always", "want none, optional or require")
	f("tls.server.keyPassword=secret", "not supported")
	f("tls.server.mode=enforcing", "needs tls.server.certPath and tls.server.keyPath")
	f("tls.server.certPath=/c.pem", "needs tls.server.certPath and tls.server.keyPath")
	f("tls.test.mode.enable=true\ntls.server.certPath=/c.pem\ntls.server.keyPath=/k.pem", "pick one")
	f("tls.test.mode.enable=true\ntls.server.need.client.auth=require\ntls.server.authClient=true", "needs tls.server.trustCertPath")
	f("tls.config.file=/nonexistent/tls.properties", "tls.config.file")
}

// tls.config.file overrides every tls.* key but the mode, as Java's does,
// and is read again on every call.
func TestTLSConfigFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tls.properties")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.server.mode=disabled\ntls.server.certPath=/file.pem\ntls.server.keyPath=/file.key\n" +
		"tls.client.certPath=/ignored.pem\nlistenPort=1\n")
	c := Default()
	c.TLSServerMode = "enforcing"
	c.TLSServerCertPath = "/own.pem"
	c.TLSConfigFile = path
	got, err := c.TLS()
	if err != nil {
		t.Fatal(err)
	}
	want := TLSSettings{Mode: TLSEnforcing, CertPath: "/file.pem", KeyPath: "/file.key"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if c.ListenPort != 9876 || c.TLSServerCertPath != "/own.pem" {
		t.Fatal("TLS() changed the configuration")
	}
	write("tls.server.certPath=/new.pem\ntls.server.keyPath=/new.key\n")
	if got, err = c.TLS(); err != nil || got.CertPath != "/new.pem" {
		t.Fatalf("file not read again: %+v %v", got, err)
	}
	write("tls.server.authClient=maybe\n")
	if _, err = c.TLS(); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad value in the file: %v, want an error naming the file", err)
	}
}

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	f := validateCase(t)
	f(func(c *Config) {}, "")
	f(func(c *Config) { c.ServerWriteTimeoutSeconds = 0 }, "")
	f(func(c *Config) { c.MaxConnections = 0 }, "maxConnections=0")
	f(func(c *Config) { c.MaxPendingResponseBytes = 1000 }, "maxPendingResponseBytes=1000")
	f(func(c *Config) { c.MaxPendingRequestBytes = c.FrameMaxLength - 1 }, "maxPendingRequestBytes")
	f(func(c *Config) { c.ServerWriteTimeoutSeconds = -1 }, "serverWriteTimeoutSeconds=-1")
	f(func(c *Config) { c.MaxConnectionsPerIP = 0 }, "maxConnectionsPerIP=0")
	f(func(c *Config) { c.MaxConnectionsPerIP = c.MaxConnections + 1 }, "maxConnectionsPerIP")
	f(func(c *Config) { c.ReservedConnections = -1 }, "reservedConnections=-1")
	f(func(c *Config) { c.ReservedConnections = c.MaxConnections }, "reservedConnections")
	f(func(c *Config) { c.MaxBufferedBytes = c.FrameMaxLength }, "maxBufferedBytes")
	f(func(c *Config) { c.MaxBufferedBytes = 2 * c.FrameMaxLength }, "")
	f(func(c *Config) { c.MaxTopicsPerBroker = 0 }, "maxTopicsPerBroker=0")
	f(func(c *Config) { c.MaxTopics = c.MaxTopicsPerBroker - 1 }, "maxTopics")
	f(func(c *Config) { c.TLSServerMode = "on" }, "tls.server.mode")
	f(func(c *Config) { c.TLSServerKeyPassword = "x" }, "tls.server.keyPassword")
}
