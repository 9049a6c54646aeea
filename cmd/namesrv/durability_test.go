//go:build e2e

// Durability test: the real binary, killed with SIGKILL at random moments
// while it acknowledges KV writes and config updates, must come back with
// every acknowledged change on disk and on the wire.

package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/kv"
)

// Bounds. Deadlines are generous on purpose: the test must pass on a
// loaded two-core machine, and no assertion depends on how fast anything
// is, only on what was acknowledged.
const (
	killRounds      = 5
	kvWriters       = 4   // concurrent writers, so kills land mid-request
	maxAcksPerRound = 400 // a round's kill comes after a random share of this
	roundTimeout    = 60 * time.Second
	startTimeout    = 60 * time.Second
	callTimeout     = 20 * time.Second
	kvNamespace     = "DURABILITY"
)

func TestDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	bin := buildBinary(t)
	t.Run("kv", func(t *testing.T) { testKVSurvivesKill(t, bin) })
	t.Run("config", func(t *testing.T) { testConfigSurvivesKill(t, bin) })
}

// child is one run of the NameServer binary.
type child struct {
	*proc
	addr string
}

// startChild runs bin with args and waits for the boot banner, which names
// the address (the port is 0: the kernel picks a free one each time).
func startChild(t *testing.T, bin, logPath string, args ...string) *child {
	t.Helper()
	p := startProc(t, bin, logPath, "The Name Server boot success. serializeType=JSON, address ", args...)
	return &child{proc: p, addr: p.after}
}

func (c *child) log() string { return tail(c.logPath) }

// kill sends SIGKILL and waits until the process is gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	c.signal(t, syscall.SIGKILL)
}

func dial(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cl, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(deadline time.Time, cond func() bool) bool {
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// kvLedger records writes: acked ones must survive; those in flight at the
// kill may or may not have, but if one did, its value must be whole.
type kvLedger struct {
	mu       sync.Mutex
	acked    map[string]string
	inFlight map[string]string
	n        atomic.Int64 // acks in the current round
}

func testKVSurvivesKill(t *testing.T, bin string) {
	dir := t.TempDir()
	kvPath := filepath.Join(dir, "kvConfig.json")
	args := []string{"--bindAddress", "127.0.0.1", "--listenPort", "0", "--kvConfigPath", kvPath,
		"--set", "configStorePath=" + filepath.Join(dir, "namesrv.properties"), "--logLevel", "warn"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	led := &kvLedger{acked: map[string]string{}, inFlight: map[string]string{}}

	for round := 0; round < killRounds; round++ {
		c := startChild(t, bin, filepath.Join(dir, fmt.Sprintf("namesrv-%d.log", round)), args...)
		if round > 0 {
			checkKVOnWire(t, c, led)
		}
		target := 1 + rng.IntN(maxAcksPerRound)
		led.n.Store(0)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < kvWriters; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				writeKV(c.addr, fmt.Sprintf("r%d-w%d", round, w), led, stop)
			}()
		}
		if !waitUntil(time.Now().Add(roundTimeout), func() bool { return led.n.Load() >= int64(target) }) {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: only %d of %d writes acknowledged within %v\n%s", round, led.n.Load(), target, roundTimeout, c.log())
		}
		// A little more, so the kill does not always come right after an ack.
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
		c.kill(t)
		close(stop)
		wg.Wait()
		t.Logf("round %d: killed after %d acks this round, %d in all", round, led.n.Load(), len(led.acked))
		checkKVFile(t, kvPath, led)
	}
	c := startChild(t, bin, filepath.Join(dir, "namesrv-final.log"), args...)
	checkKVOnWire(t, c, led)
}

// writeKV puts unique keys until stop is closed or the connection fails
// (the server was killed).
func writeKV(addr, prefix string, led *kvLedger, stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	cl, err := client.Dial(ctx, addr)
	cancel()
	if err != nil {
		return
	}
	defer cl.Close()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("%s-%d", prefix, i)
		value := fmt.Sprintf("value of %s: %x", key, rand.Uint64())
		led.mu.Lock()
		led.inFlight[key] = value
		led.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		err := cl.PutKV(ctx, kvNamespace, key, value)
		cancel()
		if err != nil {
			return // killed; the write stays in flight
		}
		led.mu.Lock()
		delete(led.inFlight, key)
		led.acked[key] = value
		led.mu.Unlock()
		led.n.Add(1)
	}
}

// checkKVFile checks the file the killed server left: it parses, the store
// opens on it, every acknowledged write is there with its value, and the
// writes in flight are there whole or not at all.
func checkKVFile(t *testing.T, path string, led *kvLedger) {
	t.Helper()
	s, err := kv.Open(path)
	if err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("kv file does not open after kill -9: %v\n%.2000s", err, data)
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	for k, want := range led.acked {
		if got, ok := s.Get(kvNamespace, k); !ok || got != want {
			t.Fatalf("acknowledged write %s lost after kill -9: got %q, %v; want %q", k, got, ok, want)
		}
	}
	for k, want := range led.inFlight {
		if got, ok := s.Get(kvNamespace, k); ok {
			if got != want {
				t.Fatalf("write %s in flight at the kill has value %q, want %q", k, got, want)
			}
			// It reached the disk: from now on it must stay.
			led.acked[k] = want
		}
		delete(led.inFlight, k)
	}
	if n := s.Len(); n != len(led.acked) {
		t.Fatalf("kv file holds %d keys, %d were written", n, len(led.acked))
	}
}

// checkKVOnWire reads every acknowledged write back from a restarted server.
func checkKVOnWire(t *testing.T, c *child, led *kvLedger) {
	t.Helper()
	cl := dial(t, c.addr)
	led.mu.Lock()
	defer led.mu.Unlock()
	for k, want := range led.acked {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		got, err := cl.GetKV(ctx, kvNamespace, k)
		cancel()
		if err != nil || got != want {
			t.Fatalf("GET %s after restart: %q, %v; want %q\n%s", k, got, err, want, c.log())
		}
	}
	_ = cl.Close()
}

// configUpdate is the i-th update the config test sends: both keys change
// every time, so the file tells exactly which update it holds.
func configUpdate(i int) []properties.Property {
	return []properties.Property{
		{Key: "orderMessageEnable", Value: strconv.FormatBool(i%2 == 1)},
		{Key: "waitSecondsForService", Value: strconv.Itoa(i)},
	}
}

func testConfigSurvivesKill(t *testing.T, bin string) {
	dir := t.TempDir()
	confPath := filepath.Join(dir, "namesrv.properties")
	initial := fmt.Sprintf("bindAddress=127.0.0.1\nlistenPort=0\nkvConfigPath=%s\nlogLevel=warn\nwaitSecondsForService=0\n",
		filepath.Join(dir, "kvConfig.json"))
	if err := os.WriteFile(confPath, []byte(initial), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	acked := 0 // the last acknowledged update; 0 is the initial file

	for round := 0; round < killRounds; round++ {
		c := startChild(t, bin, filepath.Join(dir, fmt.Sprintf("namesrv-%d.log", round)), "-c", confPath)
		checkConfigOnWire(t, c, acked)
		target := acked + 1 + rng.IntN(60)
		var sent atomic.Int64
		sent.Store(int64(acked))
		var lastAck atomic.Int64
		lastAck.Store(int64(acked))
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			cl, err := client.Dial(ctx, c.addr)
			cancel()
			if err != nil {
				return
			}
			defer cl.Close()
			for i := acked + 1; ; i++ {
				sent.Store(int64(i))
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				err := cl.UpdateNamesrvConfig(ctx, configUpdate(i))
				cancel()
				if err != nil {
					var re *client.ResponseError
					if errors.As(err, &re) {
						// A refusal is a bug, not a kill.
						lastAck.Store(-int64(re.Code))
					}
					return
				}
				lastAck.Store(int64(i))
			}
		}()
		ok := waitUntil(time.Now().Add(roundTimeout), func() bool { return lastAck.Load() >= int64(target) || lastAck.Load() < 0 })
		if n := lastAck.Load(); n < 0 {
			t.Fatalf("round %d: update refused with code %d\n%s", round, -n, c.log())
		}
		if !ok {
			t.Fatalf("round %d: only update %d of %d acknowledged within %v\n%s", round, lastAck.Load(), target, roundTimeout, c.log())
		}
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
		c.kill(t)
		<-done
		acked = int(lastAck.Load())
		// One update may have been persisted without its ack arriving.
		acked = checkConfigFile(t, confPath, acked, int(sent.Load()))
		t.Logf("round %d: killed at update %d", round, acked)
	}
	c := startChild(t, bin, filepath.Join(dir, "namesrv-final.log"), "-c", confPath)
	checkConfigOnWire(t, c, acked)
}

// checkConfigFile checks the properties file a killed server left and
// returns the update it holds: the last acknowledged one, or the one that
// was in flight.
func checkConfigFile(t *testing.T, path string, acked, inFlight int) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	props, err := properties.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("config file does not parse after kill -9: %v\n%s", err, data)
	}
	cfg := config.Default()
	if _, err := cfg.Apply(props); err != nil {
		t.Fatalf("config file does not apply after kill -9: %v\n%s", err, data)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config file does not validate after kill -9: %v\n%s", err, data)
	}
	got := cfg.WaitSecondsForService
	if got != acked && got != inFlight {
		t.Fatalf("config file holds update %d; last acknowledged %d, in flight %d\n%s", got, acked, inFlight, data)
	}
	if want := got%2 == 1; cfg.OrderMessageEnable != want {
		t.Fatalf("config file holds waitSecondsForService=%d but orderMessageEnable=%v: a torn update\n%s", got, cfg.OrderMessageEnable, data)
	}
	return got
}

// checkConfigOnWire checks that the restarted server serves update n.
func checkConfigOnWire(t *testing.T, c *child, n int) {
	t.Helper()
	cl := dial(t, c.addr)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, pairs, err := cl.GetNamesrvConfig(ctx)
	if err != nil {
		t.Fatalf("GET_NAMESRV_CONFIG after restart: %v\n%s", err, c.log())
	}
	got := map[string]string{}
	for _, p := range pairs {
		got[p.Key] = p.Value
	}
	wantOrder := strconv.FormatBool(n%2 == 1)
	if n == 0 {
		wantOrder = "false"
	}
	if got["waitSecondsForService"] != strconv.Itoa(n) || got["orderMessageEnable"] != wantOrder {
		t.Fatalf("restarted server serves waitSecondsForService=%q orderMessageEnable=%q, want %d and %s",
			got["waitSecondsForService"], got["orderMessageEnable"], n, wantOrder)
	}
	_ = cl.Close()
}
