// The route snapshot's peer copy: the peers a cold server copies its
// route table from, and the account that signs the copy.

package config

import (
	"fmt"
	"strings"

	"github.com/rocketns/rocketns/core/auth"
)

// SnapshotPeers are the NameServers a server with no usable route
// snapshot copies its table from, in order: routeSnapshotPeers, else the
// entries of nsaddrList. None when routeSnapshotEnable or
// routeSnapshotPeerCopy is off.
func (c *Config) SnapshotPeers() []string {
	if !c.RouteSnapshotEnable || !c.RouteSnapshotPeerCopy {
		return nil
	}
	if peers := splitList(c.RouteSnapshotPeers); len(peers) > 0 {
		return peers
	}
	return NsaddrEntries(c.NsaddrList)
}

// SnapshotPeerAccount is the aclFile account routeSnapshotPeerAccessKey
// names; ok is false when the key is empty (the copy goes unsigned).
func (c *Config) SnapshotPeerAccount() (a auth.Account, ok bool, err error) {
	ak := strings.TrimSpace(c.RouteSnapshotPeerAccessKey)
	if ak == "" {
		return auth.Account{}, false, nil
	}
	if strings.TrimSpace(c.ACLFile) == "" {
		return auth.Account{}, false, c.invalid(KeyRouteSnapshotPeerAccessKey, "needs aclFile, where its secret is")
	}
	accts, err := auth.LoadAccounts(c.ACLFile)
	if err != nil {
		return auth.Account{}, false, fmt.Errorf("config: %s: aclFile%s: %w", KeyRouteSnapshotPeerAccessKey, c.where("aclFile"), err)
	}
	for _, a := range accts {
		if a.AccessKey == ak {
			return a, true, nil
		}
	}
	return auth.Account{}, false, c.invalid(KeyRouteSnapshotPeerAccessKey, "no such account in aclFile %s", c.ACLFile)
}

// validatePeers checks every peer is an address to dial and that the
// signing account exists: a mistake there would only show as a cold
// start, later, when a restart needs the copy.
func (c *Config) validatePeers() []error {
	var errs []error
	for _, a := range splitList(c.RouteSnapshotPeers) {
		if err := CheckDialAddr(a); err != nil {
			errs = append(errs, fmt.Errorf("config: %s entry %q%s: %w", KeyRouteSnapshotPeers, a, c.where(KeyRouteSnapshotPeers), err))
		}
	}
	if _, _, err := c.SnapshotPeerAccount(); err != nil {
		errs = append(errs, err)
	}
	return errs
}
