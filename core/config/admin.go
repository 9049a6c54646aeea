// The admin HTTP listener's keys and their checks: a bad address stops
// start-up instead of leaving an operator without metrics or probes.

package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Keys of the admin HTTP listener (rocketns's own).
const (
	KeyAdminListen = "adminListen"
	KeyNsaddrList  = "nsaddrList"
)

// validateAdmin checks that adminListen is a host:port and that every
// nsaddrList entry is one: clients resolving through the address server
// would otherwise get an answer they cannot dial.
func (c *Config) validateAdmin() []error {
	var errs []error
	if a := strings.TrimSpace(c.AdminListen); a != "" {
		if err := checkHostPort(a, true); err != nil {
			errs = append(errs, fmt.Errorf("config: %s=%q: %w", KeyAdminListen, c.AdminListen, err))
		}
	}
	for _, a := range NsaddrEntries(c.NsaddrList) {
		if err := checkHostPort(a, false); err != nil {
			errs = append(errs, fmt.Errorf("config: %s entry %q: %w", KeyNsaddrList, a, err))
		}
	}
	return errs
}

// NsaddrEntries splits an nsaddrList value into its addresses, dropping
// blanks around and between the semicolons.
func NsaddrEntries(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// checkHostPort accepts host:port with a port in 1..65535 (0 too when
// listening, for tests and "any free port"). A listen host may be empty
// (all interfaces); an advertised one may not.
func checkHostPort(a string, listen bool) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if host == "" && !listen {
		return fmt.Errorf("want host:port, the host is empty")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !listen) {
		return fmt.Errorf("port %q: want 1..65535", port)
	}
	return nil
}
