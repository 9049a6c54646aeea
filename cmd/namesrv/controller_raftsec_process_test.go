//go:build e2e

// The controller's raft security as an operator sets it: three standalone
// nodes with controllerRaftSecretFile and controllerRaftTLSEnable elect a
// leader, say nothing of unauthenticated raft, and refuse a raft
// connection that cannot prove the secret; a group without them warns.

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/raftnode/rafttest"
	"github.com/rocketns/rocketns/core/tlstest"
)

const unauthenticatedWarning = "raft connections are not authenticated"

// logOf is a node's whole log so far.
func logOf(p *proc) string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

func TestControllerRaftSecured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "raft.secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := tlstest.NewCA(t, "controller").Files(t, 1)
	extra := ctlTimings + "controllerRaftSecretFile=" + secret + "\ncontrollerRaftTLSEnable=true\n" +
		"tls.server.certPath=" + files.Cert + "\ntls.server.keyPath=" + files.Key + "\ntls.server.trustCertPath=" + files.Trust + "\n"
	addrs, nodes, _ := startGroup(t, bin, extra)
	leaderOf(t, addrs)
	for i, a := range addrs {
		if _, err := (rafttest.Dialer{ID: "n0"}).Dial(a, 5*time.Second); err == nil {
			t.Errorf("n%d took a raft connection without TLS or the secret", i)
		}
		if log := logOf(nodes[i]); strings.Contains(log, unauthenticatedWarning) {
			t.Errorf("n%d warns of unauthenticated raft with both set:\n%s", i, log)
		}
	}

	// Without either, each node says so at start.
	plain, plainNodes, _ := startGroup(t, bin, ctlTimings)
	leaderOf(t, plain)
	for i := range plainNodes {
		if log := logOf(plainNodes[i]); !strings.Contains(log, unauthenticatedWarning) {
			t.Errorf("n%d does not warn of unauthenticated raft:\n%s", i, log)
		}
	}
}
