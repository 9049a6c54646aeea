// raft's log lines reach slog with their level, name and arguments.

package raftnode

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestHCLogAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := newHCLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	f := func(log func(), want string) {
		t.Helper()
		buf.Reset()
		log()
		if got := strings.TrimSpace(buf.String()); !strings.Contains(got, want) || (want == "" && got != "") {
			t.Fatalf("logged %q, want it to contain %q", got, want)
		}
	}
	f(func() { l.Debug("hidden") }, "")
	f(func() { l.Trace("hidden") }, "")
	f(func() { l.Info("entering follower state", "follower", "n1") }, `level=INFO msg="entering follower state" component=raft follower=n1`)
	f(func() { l.Warn("heartbeat timeout") }, `level=WARN msg="heartbeat timeout" component=raft`)
	f(func() { l.Error("failed to contact", "id", "n2") }, `level=ERROR msg="failed to contact" component=raft id=n2`)
	f(func() { l.Named("net").With("peer", "n0").Info("x", "k", 1) }, `component=raft.net peer=n0 k=1`)
	f(func() { l.ResetNamed("snap").Info("y") }, `component=snap`)
	f(func() { l.StandardLogger(nil).Print("std line\n") }, `msg="std line" component=raft`)
	if l.IsDebug() || !l.IsInfo() || !l.IsWarn() || l.IsTrace() || l.GetLevel().String() != "info" {
		t.Fatalf("levels: debug %v info %v level %v", l.IsDebug(), l.IsInfo(), l.GetLevel())
	}
}
