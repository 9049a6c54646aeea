//go:build e2e

// The real binary's answers to signals: SIGQUIT dumps goroutines and goes
// on serving (kill -3 is how operators get a Java thread dump), SIGHUP shuts
// down cleanly like SIGTERM.

package main_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals the real binary; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs POSIX signals")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	c := startChild(t, bin, filepath.Join(dir, "log"), "--listenPort", "0", "--bindAddress", "127.0.0.1",
		"--kvConfigPath", filepath.Join(dir, "kv.json"))

	if err := c.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(startTimeout)
	for !strings.Contains(c.log(), "goroutine dump end") {
		select {
		case <-c.exited:
			t.Fatalf("namesrv exited on SIGQUIT: %v\n%s", c.cmd.ProcessState, c.log())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine dump within %v:\n%s", startTimeout, c.log())
		}
	}
	cl := dial(t, c.addr)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := cl.Invoke(ctx, &codec.Command{Code: codec.GetBrokerClusterInfo})
	if err != nil || resp.Code != codec.Success {
		t.Fatalf("after SIGQUIT: %v %+v", err, resp)
	}
	cl.Close()

	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(startTimeout):
		t.Fatal("namesrv still running after SIGHUP")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(c.log(), "signal=hangup") {
		t.Fatalf("after SIGHUP: exit %d\n%s", code, c.log())
	}
}
