//go:build e2e

// The container image, built and run: only where a Docker engine answers
// (never with -short). It builds the repository's Dockerfile, starts the
// image with a ROCKETNS_ variable, waits for /readyz, asks the NameServer for
// its cluster info and configuration over the remoting port, writes a KV
// entry to the volume, checks the image's user and HEALTHCHECK, and stops
// the container with SIGTERM expecting exit code 0. The container and the
// image are removed whatever happens.

package deploy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
)

// docker runs the docker client and returns its trimmed stdout; stderr is in
// the error.
func docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	// A killed client may leave children holding the pipes; do not wait on
	// them for long.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return strings.TrimSpace(stdout.String()), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// requireDockerEngine skips t unless `docker info` reaches an engine within
// a few seconds.
func requireDockerEngine(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker client on PATH: the image is only tested where a Docker engine exists")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Without an engine `docker info` fails; the format keeps a client-only
	// answer from passing as an engine.
	v, err := docker(ctx, "info", "--format", "{{.ServerVersion}}")
	if err != nil || v == "" {
		t.Skipf("no Docker engine answers (the image is only tested where one exists): %v", err)
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// publishedAddr is the 127.0.0.1 address docker published containerPort on.
func publishedAddr(ctx context.Context, t *testing.T, container string, containerPort int) string {
	t.Helper()
	out, err := docker(ctx, "port", container, strconv.Itoa(containerPort)+"/tcp")
	if err != nil {
		t.Fatal(err)
	}
	// One line per binding; the run published on 127.0.0.1 only.
	for _, l := range strings.Split(out, "\n") {
		host, port, err := net.SplitHostPort(strings.TrimSpace(l))
		if err == nil && host == "127.0.0.1" && port != "0" {
			return net.JoinHostPort(host, port)
		}
	}
	t.Fatalf("docker port %s %d: no 127.0.0.1 binding in %q", container, containerPort, out)
	return ""
}

func TestDockerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the container image: not with -short")
	}
	requireDockerEngine(t)

	// What the container will run with: the baked-in file, then the one
	// ROCKETNS_ variable this test sets.
	logLevelEnv := config.EnvName("logLevel")
	if logLevelEnv != "ROCKETNS_LOG_LEVEL" {
		t.Fatalf("config.EnvName(logLevel) = %s, the Dockerfile's comments say ROCKETNS_LOG_LEVEL", logLevelEnv)
	}
	environ := []string{logLevelEnv + "=debug"}
	cfg := loadConfig(t, imagePropsPath, readFile(t, imagePropsPath))
	envProps, err := config.FromEnv(environ)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Apply(envProps); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.AdminListen == "" {
		t.Fatalf("%s: adminListen is not set: no /readyz to wait for", imagePropsPath)
	}
	adminPort := portOf(t, "adminListen", cfg.AdminListen)

	// Leave a minute for the cleanups before go test's own -timeout would
	// panic past them (and leave the container behind).
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Minute))
		defer cancel()
	}
	cleanupCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 45*time.Second)
	}

	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	id := randomHex(t, 6)
	image := "rocketns-test:" + id
	name := "rocketns-test-" + id

	// Cleanups run last-registered first: the container goes, then the image.
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if _, err := docker(ctx, "image", "rm", "-f", image); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	// The version the image is stamped with, as `make image` passes it.
	version := "v0.0.0-imagetest-" + id
	build := exec.CommandContext(ctx, "docker", "build", "--build-arg", "VERSION="+version, "-t", image, root)
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=1") // RUN --mount needs BuildKit
	build.WaitDelay = 5 * time.Second
	t.Logf("docker build -t %s %s", image, root)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v (test context: %v)\n%s", err, ctx.Err(), out)
	}

	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if t.Failed() {
			logs, _ := exec.CommandContext(ctx, "docker", "logs", name).CombinedOutput()
			t.Logf("container logs:\n%s", logs)
		}
		// -v: the anonymous volume of VOLUME /var/lib/rocketns goes too.
		if _, err := docker(ctx, "rm", "-f", "-v", name); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	// Both binaries report the stamped version.
	for _, bin := range []string{"namesrv", "nsadmin"} {
		out, err := docker(ctx, "run", "--rm", "--entrypoint", "/usr/local/bin/"+bin, image, "--version")
		if err != nil || !strings.HasPrefix(out, bin+" "+version+" ") {
			t.Fatalf("%s --version in the image: %q, %v; want %s %s", bin, out, err, bin, version)
		}
	}
	if _, err := docker(ctx, "run", "-d", "--name", name,
		"-e", environ[0],
		"-p", fmt.Sprintf("127.0.0.1::%d", cfg.ListenPort),
		"-p", fmt.Sprintf("127.0.0.1::%d", adminPort),
		image); err != nil {
		t.Fatal(err)
	}
	remotingAddr := publishedAddr(ctx, t, name, cfg.ListenPort)
	adminAddr := publishedAddr(ctx, t, name, adminPort)

	// /readyz: 503 during needWaitForService, so the wait is at least that.
	wait := 60 * time.Second
	if cfg.NeedWaitForService {
		wait += time.Duration(cfg.WaitSecondsForService) * time.Second
	}
	deadline := time.Now().Add(wait)
	httpc := &http.Client{Timeout: 2 * time.Second}
	readyURL := "http://" + adminAddr + "/readyz"
	var last string
	for {
		resp, err := httpc.Get(readyURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if running, err := docker(ctx, "inspect", "--format", "{{.State.Running}}", name); err != nil || running != "true" {
			t.Fatalf("the container stopped before /readyz answered 200 (running=%q, %v); last answer: %s", running, err, last)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no 200 within %v; last answer: %s", readyURL, wait, last)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s: %v; last answer: %s", readyURL, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
	if resp, err := httpc.Get("http://" + adminAddr + "/healthz"); err != nil {
		t.Errorf("GET /healthz: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /healthz: %s", resp.Status)
		}
	}

	// The remoting port: GET_BROKER_CLUSTER_INFO, the configuration in effect
	// and a KV write, which needs the volume to be writable by the image's
	// user.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := client.Dial(rctx, remotingAddr)
	if err != nil {
		t.Fatalf("dial %s: %v", remotingAddr, err)
	}
	defer c.Close()
	ci, err := c.ClusterInfo(rctx)
	if err != nil {
		t.Fatalf("GET_BROKER_CLUSTER_INFO: %v", err)
	}
	if len(ci.Brokers) != 0 || len(ci.Clusters) != 0 {
		t.Errorf("GET_BROKER_CLUSTER_INFO of a fresh NameServer: %d brokers, %d clusters, want none", len(ci.Brokers), len(ci.Clusters))
	}
	_, pairs, err := c.GetNamesrvConfig(rctx)
	if err != nil {
		t.Fatalf("GET_NAMESRV_CONFIG: %v", err)
	}
	got := map[string]string{}
	for _, p := range pairs {
		got[p.Key] = p.Value
	}
	// The server runs with the file and the environment as this test read
	// them: logLevel from the ROCKETNS_ variable, the rest from the file.
	for _, keyName := range []string{"logLevel", "kvConfigPath", "listenPort", "bindAddress", "adminListen", "needWaitForService"} {
		k, ok := config.LookupKey(keyName)
		if !ok {
			t.Fatalf("no key %s", keyName)
		}
		if want := k.Value(cfg); got[keyName] != want {
			t.Errorf("GET_NAMESRV_CONFIG %s=%q, want %q", keyName, got[keyName], want)
		}
	}
	if cfg.LogLevel != "debug" {
		t.Errorf("%s=debug did not set logLevel (%q): the check above proves nothing", logLevelEnv, cfg.LogLevel)
	}
	const ns, key = "rocketns-image-test", "k"
	if err := c.PutKV(rctx, ns, key, id); err != nil {
		t.Errorf("PUT_KV_CONFIG (is %s writable by the image's user?): %v", filepath.Dir(cfg.KVConfigPath), err)
	} else if v, err := c.GetKV(rctx, ns, key); err != nil || v != id {
		t.Errorf("GET_KV_CONFIG = %q, %v; want %q", v, err, id)
	}
	c.Close()

	// The image's HEALTHCHECK (nsadmin over the remoting port) passes.
	healthDeadline := time.Now().Add(90 * time.Second)
	for {
		health, err := docker(ctx, "inspect", "--format", "{{if .State.Health}}{{.State.Health.Status}}{{end}}", name)
		if err != nil {
			t.Fatal(err)
		}
		if health == "healthy" {
			break
		}
		if health == "" || health == "unhealthy" || time.Now().After(healthDeadline) {
			log, _ := docker(ctx, "inspect", "--format", "{{if .State.Health}}{{json .State.Health.Log}}{{end}}", name)
			t.Errorf("container health %q, want healthy; checks: %s", health, log)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for a healthy container: %v", ctx.Err())
		case <-time.After(time.Second):
		}
	}

	if user, err := docker(ctx, "inspect", "--format", "{{.Config.User}}", name); err != nil {
		t.Error(err)
	} else if want := fmt.Sprintf("%d:%d", containerUID, containerGID); user != want {
		t.Errorf("container Config.User %q, want %q", user, want)
	}

	// SIGTERM: namesrv finishes within its 30 s shutdown timeout and exits
	// 0; allow a margin before docker stop sends SIGKILL (exit code 137).
	if _, err := docker(ctx, "stop", "-t", "40", name); err != nil {
		t.Fatal(err)
	}
	state, err := docker(ctx, "inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", name)
	if err != nil {
		t.Fatal(err)
	}
	if state != "false 0" {
		t.Errorf("after docker stop: running and exit code %q, want \"false 0\"", state)
	}
}
