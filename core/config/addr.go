// Checks of address-valued settings, made when the configuration is read
// and without any name lookup, so that a typo stops start-up with its
// source instead of failing later as "address in use" after a DNS query.

package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// CheckBindIP checks an address to listen on without a port (bindAddress):
// an IP literal, IPv4 or IPv6 (a zone allowed), or "" for every interface.
// Host names are refused rather than resolved: Java's bindAddress is an IP,
// and a listener that binds to whatever a name resolves to at start-up
// moves with the resolver.
func CheckBindIP(host string) error {
	if host == "" {
		return nil
	}
	if _, err := netip.ParseAddr(host); err != nil {
		if isHostName(host) {
			return fmt.Errorf("want an IP address (0.0.0.0 for every interface, 127.0.0.1 for loopback); host names such as %q are not resolved", host)
		}
		return fmt.Errorf("want an IP address such as 0.0.0.0, 10.0.0.5 or ::1")
	}
	return nil
}

// CheckListenAddr checks a host:port to listen on (adminListen,
// --pprof-addr): the host as CheckBindIP wants it, the port 0..65535 (0 is
// any free port).
func CheckListenAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want host:port (127.0.0.1:9877, :9877): %w", stripAddr(err))
	}
	if err := checkPort(port, true); err != nil {
		return err
	}
	return CheckBindIP(host)
}

// CheckDialAddr checks a host:port that others connect to (an nsaddrList
// entry): an IP literal or a syntactically valid host name (clients resolve
// it, so a name is fine here; it is not looked up), port 1..65535.
func CheckDialAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want host:port: %w", stripAddr(err))
	}
	if host == "" {
		return fmt.Errorf("want host:port, the host is empty")
	}
	if err := checkPort(port, false); err != nil {
		return err
	}
	if _, err := netip.ParseAddr(host); err != nil && !isHostName(host) {
		return fmt.Errorf("host %q is neither an IP address nor a host name", host)
	}
	return nil
}

func checkPort(port string, listen bool) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !listen) {
		if listen {
			return fmt.Errorf("port %q: want 0..65535", port)
		}
		return fmt.Errorf("port %q: want 1..65535", port)
	}
	return nil
}

// isHostName reports whether s is a DNS name by RFC 1123's syntax: labels
// of letters, digits and inner hyphens, at most 63 bytes each and 253 in
// all, not all digits at the end (that would be a mistyped IP address).
func isHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// stripAddr keeps only the reason of a net.AddrError: the address is
// already in the message around it.
func stripAddr(err error) error {
	if ae, ok := err.(*net.AddrError); ok {
		return fmt.Errorf("%s", ae.Err)
	}
	return err
}
