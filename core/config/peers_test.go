// Tests of the peer copy's keys: which peers, and the signing account.

package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSnapshotPeers(t *testing.T) {
	t.Parallel()
	f := func(enable, copy bool, peers, nsaddr string, want ...string) {
		t.Helper()
		c := Default()
		c.RouteSnapshotEnable, c.RouteSnapshotPeerCopy, c.RouteSnapshotPeers, c.NsaddrList = enable, copy, peers, nsaddr
		if got := c.SnapshotPeers(); !slices.Equal(got, want) {
			t.Fatalf("peers=%q nsaddrList=%q: %q, want %q", peers, nsaddr, got, want)
		}
	}
	f(true, true, "", "")
	f(true, true, "", "a:1;b:2", "a:1", "b:2")
	f(true, true, " c:3 ; ", "a:1;b:2", "c:3")
	f(true, false, "c:3", "a:1")
	f(false, true, "c:3", "a:1")
}

func TestValidatePeers(t *testing.T) {
	t.Parallel()
	acl := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(acl, []byte("reader-key:reader-secret:readonly\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(peers, aclFile, ak, wantErr string) {
		t.Helper()
		c := Default()
		c.RouteSnapshotPeers, c.ACLFile, c.RouteSnapshotPeerAccessKey = peers, aclFile, ak
		err := c.Validate()
		if wantErr == "" {
			if err != nil {
				t.Fatalf("peers=%q ak=%q: %v", peers, ak, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("peers=%q ak=%q: got %v, want an error containing %q", peers, ak, err, wantErr)
		}
	}
	f("10.0.0.1:9876;ns-1.ns:9876", "", "", "")
	f("10.0.0.1", "", "", `routeSnapshotPeers entry "10.0.0.1"`)
	f("", acl, "reader-key", "")
	f("", "", "reader-key", "routeSnapshotPeerAccessKey=\"reader-key\": needs aclFile")
	f("", acl, "other-key", "no such account in aclFile")
	f("", filepath.Join(t.TempDir(), "none"), "reader-key", "routeSnapshotPeerAccessKey: aclFile")
}
