// Source-address allowlists.

package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ParseCIDRs reads a list of networks separated by commas, semicolons or
// blanks: CIDR prefixes (10.0.0.0/8, fd00::/8) or single addresses
// (192.168.1.7, meaning /32). Host bits in a prefix are dropped. An empty
// list gives nil, no error.
func ParseCIDRs(s string) ([]netip.Prefix, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t'
	})
	var (
		out  []netip.Prefix
		errs []error
	)
	for _, f := range fields {
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("network %q: want a CIDR like 10.0.0.0/8 or an address", f))
				continue
			}
			// Peers are unmapped (PeerAddr), so an IPv4-mapped prefix is
			// turned into the IPv4 one it means.
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("network %q: want a CIDR like 10.0.0.0/8 or an address", f))
			continue
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// PeerAddr reads the address of a peer written host:port (or a bare host),
// as net.Addr.String gives it. The zone is dropped and an IPv4-mapped IPv6
// address becomes IPv4, so that 10.0.0.0/8 matches ::ffff:10.1.2.3. The
// zero Addr means the peer is unknown: no allowlist contains it.
func PeerAddr(peer string) netip.Addr {
	if ap, err := netip.ParseAddrPort(peer); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if a, err := netip.ParseAddr(peer); err == nil {
		return a.Unmap().WithZone("")
	}
	return netip.Addr{}
}

// allowed reports whether addr is in one of the networks.
func allowed(nets []netip.Prefix, addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	for _, p := range nets {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
