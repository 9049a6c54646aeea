//go:build e2e

// Warm restart of the real binary: brokers register over the wire, the
// process stops (SIGTERM, or kill -9 once its background writer has put
// the registrations on disk) and starts again on the same snapshot file,
// and its first route queries, before any broker registers again, answer
// the routes the first process served, byte for byte. The same SIGTERM
// with route snapshots off answers TOPIC_NOT_EXIST: the window warm
// restart closes. A new process whose peer is a running one answers its
// routes the same way, from the copy.

package main_test

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/routesnap"
)

// warmTopics are the topics the brokers of warmBrokers serve.
var warmTopics = []string{"WarmT1", "WarmT2", "WarmT3"}

// warmBrokers are a master and a slave of broker-a and a master of
// broker-b in another cluster, with the topics each registers.
var warmBrokers = []struct {
	b      client.Broker
	topics []string
}{
	{client.Broker{Cluster: "c1", Name: "broker-a", Addr: "127.0.0.1:10911", HAAddr: "127.0.0.1:10912", Version: 409}, []string{"WarmT1", "WarmT2"}},
	{client.Broker{Cluster: "c1", Name: "broker-a", Addr: "127.0.0.1:10921", HAAddr: "127.0.0.1:10922", ID: 1, Version: 409}, []string{"WarmT1", "WarmT2"}},
	{client.Broker{Cluster: "c2", Name: "broker-b", Addr: "127.0.0.1:10931", HAAddr: "127.0.0.1:10932", Version: 409}, []string{"WarmT1", "WarmT3"}},
}

func TestWarmRestartProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, signals and kills the real binary; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs POSIX signals")
	}
	bin := buildBinary(t)
	// The longest interval: no background write before the SIGTERM, so
	// the restart stands on the write at shutdown.
	t.Run("sigterm", func(t *testing.T) { testWarmRestart(t, bin, true, false, 60000) })
	// The shortest: the kill comes once the background writer has written
	// every registration.
	t.Run("kill", func(t *testing.T) { testWarmRestart(t, bin, true, true, 1000) })
	t.Run("sigterm with snapshots off", func(t *testing.T) { testWarmRestart(t, bin, false, false, 1000) })
}

func testWarmRestart(t *testing.T, bin string, enable, kill bool, intervalMs int) {
	dir := t.TempDir()
	snapPath := filepath.Join(dir, "routes.snapshot")
	args := []string{"--bindAddress", "127.0.0.1", "--listenPort", "0",
		"--kvConfigPath", filepath.Join(dir, "kvConfig.json"),
		"--set", "configStorePath=" + filepath.Join(dir, "namesrv.properties"),
		"--set", "routeSnapshotEnable=" + strconv.FormatBool(enable),
		"--set", "routeSnapshotPath=" + snapPath,
		"--set", "routeSnapshotIntervalMs=" + strconv.Itoa(intervalMs)}
	first := startChild(t, bin, filepath.Join(dir, "namesrv-1.log"), args...)

	reg := registerWarmBrokers(t, first)
	want := routeAnswers(t, first.addr)
	for i, a := range want {
		if a.code != codec.Success {
			t.Fatalf("%s before the restart: %d %s", warmTopics[i], a.code, a.remark)
		}
	}

	if kill {
		// The snapshot is written by rename: once the file holds every
		// registration, it is whole.
		if !waitUntil(time.Now().Add(roundTimeout), func() bool {
			snap, _, err := routesnap.Load(snapPath, time.Now().UnixMilli(), route.DefaultBrokerTimeout)
			return err == nil && len(snap.Brokers) == len(warmBrokers)
		}) {
			t.Fatalf("no snapshot with the %d brokers within %v\n%s", len(warmBrokers), roundTimeout, first.log())
		}
		first.kill(t)
	} else {
		first.signal(t, syscall.SIGTERM)
		if code := first.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("exit %d after SIGTERM\n%s", code, first.log())
		}
	}
	_ = reg.Close()

	// Nothing registers with the second process: its first queries are
	// answered from what the first left on disk.
	spawned := time.Now()
	second := startChild(t, bin, filepath.Join(dir, "namesrv-2.log"), args...)
	got := routeAnswers(t, second.addr)
	// Reported, not asserted: a loaded machine sets the pace.
	t.Logf("the restarted process answered its first %d route queries %v after it was spawned", len(got), time.Since(spawned).Round(time.Millisecond))
	for i, a := range got {
		switch {
		case !enable && a.code != codec.TopicNotExist:
			t.Fatalf("%s after a cold restart: %d %s, want TOPIC_NOT_EXIST", warmTopics[i], a.code, a.remark)
		case enable && (a.code != codec.Success || !bytes.Equal(a.body, want[i].body)):
			t.Fatalf("%s after the restart: %d %s\n%s\nwant\n%s\n%s", warmTopics[i], a.code, a.remark, a.body, want[i].body, second.log())
		}
	}
	if enable && !strings.Contains(second.log(), "starting warm") {
		t.Fatalf("the restart does not say it started warm:\n%s", second.log())
	}
	second.signal(t, syscall.SIGTERM)
}

// registerWarmBrokers registers warmBrokers with p over one connection
// and returns it: it must stay open until the process stops, since a
// connection closed earlier unregisters its brokers, as in Java.
func registerWarmBrokers(t *testing.T, p *child) *client.Client {
	t.Helper()
	reg := dial(t, p.addr)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	for _, wb := range warmBrokers {
		rb := &body.RegisterBroker{FilterServerList: []string{},
			DataVersion: body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: 1}}
		for _, topic := range wb.topics {
			rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: topic, ReadQueueNums: 4, WriteQueueNums: 4,
				Perm: 6, TopicFilterType: "SINGLE_TAG"})
		}
		if _, _, err := reg.RegisterBroker(ctx, wb.b, rb); err != nil {
			t.Fatalf("register %s %s: %v\n%s", wb.b.Name, wb.b.Addr, err, p.log())
		}
	}
	return reg
}

// A new process with an empty directory and the first as its peer
// answers the first's routes, byte for byte, before any broker registers
// with it.
func TestPeerCopyProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs POSIX signals")
	}
	bin := buildBinary(t)
	args := func(dir string, more ...string) []string {
		return append([]string{"--bindAddress", "127.0.0.1", "--listenPort", "0",
			"--kvConfigPath", filepath.Join(dir, "kvConfig.json"),
			"--set", "configStorePath=" + filepath.Join(dir, "namesrv.properties")}, more...)
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startChild(t, bin, filepath.Join(dirA, "namesrv.log"), args(dirA)...)
	// The connection stays open (dial closes it at the test's end).
	registerWarmBrokers(t, a)
	want := routeAnswers(t, a.addr)

	b := startChild(t, bin, filepath.Join(dirB, "namesrv.log"), args(dirB, "--set", "routeSnapshotPeers="+a.addr)...)
	for i, got := range routeAnswers(t, b.addr) {
		if got.code != codec.Success || !bytes.Equal(got.body, want[i].body) {
			t.Fatalf("%s from the copy: %d %s\n%s\nwant\n%s\n%s", warmTopics[i], got.code, got.remark, got.body, want[i].body, b.log())
		}
	}
	if !strings.Contains(b.log(), "starting warm: route table copied from a peer") {
		t.Fatalf("the new process does not say it copied a peer:\n%s", b.log())
	}
	b.signal(t, syscall.SIGTERM)
	a.signal(t, syscall.SIGTERM)
}

type routeAnswer struct {
	code   int32
	remark string
	body   []byte
}

// routeAnswers asks addr for the route of each of warmTopics on a fresh
// connection.
func routeAnswers(t *testing.T, addr string) []routeAnswer {
	t.Helper()
	cl := dial(t, addr)
	defer cl.Close()
	out := make([]routeAnswer, len(warmTopics))
	for i, topic := range warmTopics {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		code, remark, payload, err := cl.RouteBody(ctx, topic, codec.ServerVersion)
		cancel()
		if err != nil {
			t.Fatalf("route of %s from %s: %v", topic, addr, err)
		}
		out[i] = routeAnswer{code, remark, payload}
	}
	return out
}
