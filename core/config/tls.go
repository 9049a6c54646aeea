// TLS settings: the Java key names, the mode rocketns picks when none is set,
// tls.config.file (which overrides the other tls.* keys) and the checks.

package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rocketns/rocketns/codec/properties"
)

// The TLS keys, named as Java's TlsSystemConfig system properties.
const (
	KeyTLSServerMode           = "tls.server.mode"
	KeyTLSServerCertPath       = "tls.server.certPath"
	KeyTLSServerKeyPath        = "tls.server.keyPath"
	KeyTLSServerKeyPassword    = "tls.server.keyPassword"
	KeyTLSServerTrustCertPath  = "tls.server.trustCertPath"
	KeyTLSServerNeedClientAuth = "tls.server.need.client.auth"
	KeyTLSServerAuthClient     = "tls.server.authClient"
	KeyTLSTestModeEnable       = "tls.test.mode.enable"
	KeyTLSConfigFile           = "tls.config.file"
)

// TLSMode is how the listener treats TLS and plaintext connections.
type TLSMode uint8

const (
	TLSDisabled   TLSMode = iota // plaintext only; a TLS handshake is closed
	TLSPermissive                // both, told apart by the first byte
	TLSEnforcing                 // TLS only; plaintext is closed
)

func (m TLSMode) String() string {
	switch m {
	case TLSDisabled:
		return "disabled"
	case TLSPermissive:
		return "permissive"
	case TLSEnforcing:
		return "enforcing"
	}
	return "unknown"
}

// ClientAuth is tls.server.need.client.auth.
type ClientAuth uint8

const (
	ClientAuthNone     ClientAuth = iota // no client certificate is asked for
	ClientAuthOptional                   // asked for, the handshake goes on without one
	ClientAuthRequire                    // the handshake fails without one
)

func (a ClientAuth) String() string {
	switch a {
	case ClientAuthNone:
		return "none"
	case ClientAuthOptional:
		return "optional"
	case ClientAuthRequire:
		return "require"
	}
	return "unknown"
}

// TLSSettings is the TLS configuration in effect: the tls.* keys with
// tls.config.file applied over them, checked.
type TLSSettings struct {
	Mode           TLSMode
	CertPath       string
	KeyPath        string
	TrustCertPath  string
	NeedClientAuth ClientAuth
	// AuthClient verifies client certificates against TrustCertPath; when
	// false a requested client certificate is accepted unverified, as Java
	// does (its InsecureTrustManagerFactory).
	AuthClient bool
	// TestMode serves a self-signed certificate made at start.
	TestMode bool
}

func parseTLSMode(v string) (TLSMode, bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return 0, false, nil
	case "disabled":
		return TLSDisabled, true, nil
	case "permissive":
		return TLSPermissive, true, nil
	case "enforcing":
		return TLSEnforcing, true, nil
	}
	return 0, false, fmt.Errorf("%s=%q: want disabled, permissive or enforcing", KeyTLSServerMode, v)
}

func parseClientAuth(v string) (ClientAuth, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "none":
		return ClientAuthNone, nil
	case "optional":
		return ClientAuthOptional, nil
	case "require":
		return ClientAuthRequire, nil
	}
	return 0, fmt.Errorf("%s=%q: want none, optional or require", KeyTLSServerNeedClientAuth, v)
}

// validateTLSKeys checks the tls.* values that can be checked without
// reading files. Java falls back to permissive on an unknown mode; a typo in
// a security setting is better refused.
func (c *Config) validateTLSKeys() []error {
	var errs []error
	if _, _, err := parseTLSMode(c.TLSServerMode); err != nil {
		errs = append(errs, c.invalid(KeyTLSServerMode, "want disabled, permissive or enforcing"))
	}
	if _, err := parseClientAuth(c.TLSServerNeedClientAuth); err != nil {
		errs = append(errs, c.invalid(KeyTLSServerNeedClientAuth, "want none, optional or require"))
	}
	if c.TLSServerKeyPassword != "" {
		errs = append(errs, fmt.Errorf("%w%s", errKeyPassword, c.where(KeyTLSServerKeyPassword)))
	}
	return errs
}

// errKeyPassword: Go's standard library cannot read the encrypted PKCS#8
// keys Java's keyPassword is for.
var errKeyPassword = fmt.Errorf("config: %s is not supported: decrypt the key (openssl pkcs8 -in enc.key -out plain.key) and protect the file instead", KeyTLSServerKeyPassword)

// TLS returns the settings in effect. tls.config.file, when set, is read on
// every call (a certificate reload re-reads it, as Java does) and overrides
// every tls.* key except tls.server.mode and itself. An unreadable file is an
// error: unlike Java, rocketns has no default file that may be absent.
//
// When tls.server.mode is empty the mode is permissive if a certificate or
// test mode is configured, and disabled otherwise, so a plain configuration
// stays plaintext-only.
func (c *Config) TLS() (TLSSettings, error) {
	eff := c
	if path := strings.TrimSpace(c.TLSConfigFile); path != "" {
		var err error
		if eff, err = c.withTLSFile(path); err != nil {
			return TLSSettings{}, err
		}
	}
	errs := eff.validateTLSKeys()
	mode, explicit, _ := parseTLSMode(c.TLSServerMode)
	auth, _ := parseClientAuth(eff.TLSServerNeedClientAuth)
	t := TLSSettings{
		Mode:           mode,
		CertPath:       strings.TrimSpace(eff.TLSServerCertPath),
		KeyPath:        strings.TrimSpace(eff.TLSServerKeyPath),
		TrustCertPath:  strings.TrimSpace(eff.TLSServerTrustCertPath),
		NeedClientAuth: auth,
		AuthClient:     eff.TLSServerAuthClient,
		TestMode:       eff.TLSTestModeEnable,
	}
	if !explicit {
		t.Mode = TLSDisabled
		if t.CertPath != "" || t.TestMode {
			t.Mode = TLSPermissive
		}
	}
	if t.Mode != TLSDisabled {
		switch {
		case t.TestMode && (t.CertPath != "" || t.KeyPath != ""):
			// Java silently serves the self-signed certificate here.
			errs = append(errs, fmt.Errorf("config: %s=true and a certificate are both set: pick one", KeyTLSTestModeEnable))
		case !t.TestMode && (t.CertPath == "" || t.KeyPath == ""):
			errs = append(errs, fmt.Errorf("config: %s=%s needs %s and %s (or %s=true)",
				KeyTLSServerMode, t.Mode, KeyTLSServerCertPath, KeyTLSServerKeyPath, KeyTLSTestModeEnable))
		}
		if t.AuthClient && t.NeedClientAuth != ClientAuthNone && t.TrustCertPath == "" {
			errs = append(errs, fmt.Errorf("config: %s=true needs %s", KeyTLSServerAuthClient, KeyTLSServerTrustCertPath))
		}
	}
	if len(errs) > 0 {
		return TLSSettings{}, errors.Join(errs...)
	}
	return t, nil
}

// withTLSFile returns a copy of c with the tls.* keys of the file at path
// applied. Other keys in it (Java's tls.client.* ones) are ignored.
func (c *Config) withTLSFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", KeyTLSConfigFile, err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("config: %s %s: %w", KeyTLSConfigFile, path, err)
	}
	keep := props[:0]
	for _, p := range props {
		if p.Key == KeyTLSServerMode || p.Key == KeyTLSConfigFile || !strings.HasPrefix(p.Key, "tls.") {
			continue
		}
		if _, ok := LookupKey(p.Key); ok {
			keep = append(keep, p)
		}
	}
	n := c.Clone()
	if _, err := n.Apply(keep); err != nil {
		return nil, fmt.Errorf("config: %s %s: %w", KeyTLSConfigFile, path, err)
	}
	return n, nil
}

// validateLimits checks the limits that depend on each other (the table
// has the ranges).
func (c *Config) validateLimits() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, c.invalid(key, format, args...))
	}
	// A connection must be able to hold one whole frame of the largest size.
	if c.MaxPendingRequestBytes < c.FrameMaxLength {
		bad("maxPendingRequestBytes", "want at least frameMaxLength (%d)", c.FrameMaxLength)
	}
	if c.MaxConnectionsPerIP <= 0 || (c.MaxConnections > 0 && c.MaxConnectionsPerIP > c.MaxConnections) {
		bad("maxConnectionsPerIP", "want 1 to maxConnections (%d)", c.MaxConnections)
	}
	if c.ReservedConnections < 0 || (c.MaxConnections > 0 && c.ReservedConnections >= c.MaxConnections) {
		bad("reservedConnections", "want 0 to maxConnections - 1 (%d)", c.MaxConnections-1)
	}
	// The budget must hold a few frames of the largest size.
	if c.MaxBufferedBytes != 0 && c.MaxBufferedBytes < 2*c.FrameMaxLength {
		bad("maxBufferedBytes", "want 0 (from GOMEMLIMIT) or at least twice frameMaxLength (%d)", 2*c.FrameMaxLength)
	}
	if c.MaxTopics < c.MaxTopicsPerBroker {
		bad("maxTopics", "want at least maxTopicsPerBroker (%d)", c.MaxTopicsPerBroker)
	}
	if c.KVMaxNamespaceBytes < c.KVMaxValueBytes {
		bad("kvMaxNamespaceBytes", "want at least kvMaxValueBytes (%d)", c.KVMaxValueBytes)
	}
	if c.KVMaxTotalBytes < c.KVMaxNamespaceBytes {
		bad("kvMaxTotalBytes", "want at least kvMaxNamespaceBytes (%d)", c.KVMaxNamespaceBytes)
	}
	return errs
}

// minPendingBytes keeps a batch flush from happening for every response.
const minPendingBytes = 64 << 10
