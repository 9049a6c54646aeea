// Checks of the authorization settings, so a mistake in them stops start-up
// instead of leaving the server open or refusing everything.

package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rocketns/rocketns/core/auth"
)

// validateSecurity checks adminAllowCIDRs and, when authorizationEnable is
// on, that aclFile names a readable file with at least one valid account.
func (c *Config) validateSecurity() []error {
	var errs []error
	if _, err := auth.ParseCIDRs(c.AdminAllowCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("config: adminAllowCIDRs: %w", err))
	}
	if !c.AuthorizationEnable {
		return errs
	}
	if strings.TrimSpace(c.ACLFile) == "" {
		return append(errs, errors.New("config: authorizationEnable=true needs aclFile (accessKey:secretKey:role lines)"))
	}
	accts, err := auth.LoadAccounts(c.ACLFile)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("config: aclFile: %w", err))
	case len(accts) == 0:
		errs = append(errs, fmt.Errorf("config: aclFile %s holds no account; authorizationEnable=true would refuse every protected request", c.ACLFile))
	}
	return errs
}
