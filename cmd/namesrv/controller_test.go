// Tests of the controller mode's command line: -p, the layers, the errors
// and exit codes, and one start and stop in process.

package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
)

func runCtl(t *testing.T, environ []string, signals <-chan os.Signal, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runController(args, environ, &stdout, &stderr, signals)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

const javaControllerConf = `controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858
controllerDLegerSelfId = n0
controllerStorePath = /home/admin/DledgerController
enableElectUncleanMaster = false
notifyBrokerRoleChanged = true
`

func TestControllerPrint(t *testing.T) {
	withHome(t)
	path := writeConfig(t, javaControllerConf)
	r := runCtl(t, []string{"ROCKETNS_ELECT_MASTER_MAX_RETRY_COUNT=5"}, nil, "-c", path, "--set", "enableElectUncleanMaster=true", "-p")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	for _, line := range []string{"load config properties file OK, " + path + "\n",
		"controllerDLegerSelfId=n0\n", "electMasterMaxRetryCount=5\n", "enableElectUncleanMaster=true\n",
		"configStorePath=/home/rmq/controller/controller.properties\n", "listenPort=19876\n"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("-p lacks %q", line)
		}
	}
	for _, key := range []string{"kvConfigPath=", "enableControllerInNamesrv="} {
		if strings.Contains(r.stdout, "\n"+key) {
			t.Errorf("-p lists the NameServer's %s", key)
		}
	}
	// namesrv -p lists the controller's keys too.
	if r := runFake(t, nil, false, "-p"); !strings.Contains(r.stdout, "\nnotifyBrokerRoleChanged=true\n") {
		t.Error("namesrv -p lacks the controller keys")
	}
}

func TestControllerCommandLineErrors(t *testing.T) {
	withHome(t)
	f := func(args []string, environ []string, code int, want string) {
		t.Helper()
		r := runCtl(t, environ, nil, args...)
		if r.code != code || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", args, r.code, r.stderr, code, want)
		}
	}
	f([]string{"--nosuchflag"}, nil, 2, "nosuchflag")
	f([]string{"--set", "electMasterMaxRetryCount=x"}, nil, 2, `electMasterMaxRetryCount="x": not an integer`)
	f([]string{"extra"}, nil, 2, "unexpected arguments")
	f([]string{"-c", "/nonexistent/controller.conf"}, nil, 1, "no such file")
	// Java's own message for a missing peer list.
	f(nil, nil, 1, "Attribute value controllerDLegerPeers of ControllerConfig is null or empty")
	f([]string{"-c", writeConfig(t, javaControllerConf+"electMasterMaxRetryCount=0\n")}, nil, 1, "electMasterMaxRetryCount=0")
	f(nil, []string{"ROCKETNS_CONTROLLER_DLEDGER_PEERS=x"}, 1, "ROCKETNS_CONTROLLER_DLEDGER_PEERS: no such setting")
	if r := runCtl(t, nil, nil, "-h"); r.code != 0 || !strings.Contains(r.stdout, "usage: namesrv controller") {
		t.Errorf("-h: %d %q", r.code, r.stdout)
	}
}

// One standalone node in process: the banner, 1005 on its port with
// version 0, and a clean exit on SIGTERM.
func TestControllerRunsAndStops(t *testing.T) {
	withHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	path := writeConfig(t, "controllerDLegerPeers=n0-"+addr+"\ncontrollerDLegerSelfId=n0\ncontrollerStorePath="+dir+
		"\nbindAddress=127.0.0.1\nconfigStorePath="+dir+"/controller.properties\n")
	signals := make(chan os.Signal, 1)
	done := make(chan result, 1)
	var stdout, stderr syncBuffer
	go func() {
		code := runController([]string{"-c", path}, nil, &stdout, &stderr, signals)
		done <- result{code: code}
	}()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stdout.String(), "The Controller Server boot success. serializeType=JSON, address "+addr) {
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %q\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Until the node leads: bounds a hang only.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for {
		resp, err := c.Invoke(ctx, &codec.Command{Code: codec.ControllerGetMetadataInfo})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 0 {
			t.Fatalf("version %d, want 0 (standalone)", resp.Version)
		}
		if leader, _ := resp.ExtValue("controllerLeaderAddress"); leader == addr {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	signals <- syscall.SIGTERM
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("still running after SIGTERM")
	}
}
