// The admin HTTP listener's keys and their checks: a bad address stops
// start-up instead of leaving an operator without metrics or probes.

package config

import (
	"fmt"
	"strings"
)

// Keys of the admin HTTP listener (rocketns's own).
const (
	KeyAdminListen = "adminListen"
	KeyNsaddrList  = "nsaddrList"
)

// validateAdmin checks that adminListen is an address to listen on and
// that every nsaddrList entry is one clients can dial: clients resolving
// through the address server would otherwise get an answer they cannot use.
func (c *Config) validateAdmin() []error {
	var errs []error
	if a := strings.TrimSpace(c.AdminListen); a != "" {
		if err := CheckListenAddr(a); err != nil {
			errs = append(errs, c.invalid(KeyAdminListen, "%v", err))
		}
	}
	for _, a := range NsaddrEntries(c.NsaddrList) {
		if err := CheckDialAddr(a); err != nil {
			errs = append(errs, fmt.Errorf("config: %s entry %q%s: %w", KeyNsaddrList, a, c.where(KeyNsaddrList), err))
		}
	}
	return errs
}

// NsaddrEntries splits an nsaddrList value into its addresses, dropping
// blanks around and between the semicolons.
func NsaddrEntries(list string) []string { return splitList(list) }
