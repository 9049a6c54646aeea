// Checks of the authorization settings, so a mistake in them stops start-up
// instead of leaving the server open or refusing everything.

package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rocketns/rocketns/core/auth"
)

// validateSecurity checks adminAllowCIDRs and, when authorizationEnable is
// on, that aclFile names a readable file with at least one valid account.
func (c *Config) validateSecurity() []error {
	var errs []error
	if _, err := auth.ParseCIDRs(c.AdminAllowCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("config: adminAllowCIDRs%s: %w", c.where("adminAllowCIDRs"), err))
	}
	if _, err := auth.ParseCIDRs(c.BrokerAllowCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("config: brokerAllowCIDRs%s: %w", c.where("brokerAllowCIDRs"), err))
	}
	if c.ACLStrictSignature && !c.AuthorizationEnable {
		errs = append(errs, fmt.Errorf("config: aclStrictSignature=true%s needs authorizationEnable=true", c.where("aclStrictSignature")))
	}
	if !c.AuthorizationEnable {
		return errs
	}
	if strings.TrimSpace(c.ACLFile) == "" {
		return append(errs, fmt.Errorf("config: authorizationEnable=true%s needs aclFile (accessKey:secretKey:role lines)", c.where("authorizationEnable")))
	}
	accts, err := auth.LoadAccounts(c.ACLFile)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("config: aclFile%s: %w", c.where("aclFile"), err))
	case len(accts) == 0:
		errs = append(errs, fmt.Errorf("config: aclFile %s%s holds no account; authorizationEnable=true would refuse every protected request", c.ACLFile, c.where("aclFile")))
	}
	return errs
}

// AuthEnabled reports whether the configuration asks for any authorization
// check: signatures or a source-address allowlist.
func (c *Config) AuthEnabled() bool {
	return c.AuthorizationEnable || strings.TrimSpace(c.AdminAllowCIDRs) != "" || strings.TrimSpace(c.BrokerAllowCIDRs) != ""
}

// AuthPolicy builds the authorization policy the settings describe, its
// accounts read from aclFile: the one policy the NameServer's port and a
// controller's port both enforce. With nothing enabled it refuses nothing.
func (c *Config) AuthPolicy() (*auth.Policy, error) {
	nets, err := auth.ParseCIDRs(c.AdminAllowCIDRs)
	if err != nil {
		return nil, err
	}
	brokers, err := auth.ParseCIDRs(c.BrokerAllowCIDRs)
	if err != nil {
		return nil, err
	}
	o := auth.Options{
		Signatures:         c.AuthorizationEnable,
		BrokerRegistration: c.AuthorizeBrokerRegistration,
		AllowFrom:          nets,
		BrokerAllowFrom:    brokers, // nil: the admin networks
		Strict:             c.ACLStrictSignature,
		StrictWindow:       time.Duration(c.ACLStrictWindowSeconds) * time.Second,
	}
	if c.AuthorizationEnable {
		if c.ACLFile == "" {
			return nil, errors.New("authorizationEnable=true needs aclFile")
		}
		if o.Accounts, err = auth.LoadAccounts(c.ACLFile); err != nil {
			return nil, err
		}
	}
	return auth.New(o)
}
