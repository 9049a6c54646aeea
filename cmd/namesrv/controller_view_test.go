// Tests that the controller's status page gets the leader's address and
// the peers from the node.

package main

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
)

func TestControllerViewNamesLeaderAndPeers(t *testing.T) {
	withHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	path := writeConfig(t, "controllerDLegerPeers=n0-"+addr+"\ncontrollerDLegerSelfId=n0\ncontrollerStorePath="+dir+
		"\nbindAddress=127.0.0.1\nconfigStorePath="+dir+"/controller.properties\nadminListen=127.0.0.1:0\n")
	cfg, _, closeLog, ok := loadConfig("test", config.LoadInput{File: path, Base: config.DefaultController(), KeepConfigStorePath: true},
		new(syncBuffer), new(syncBuffer))
	if !ok {
		t.Fatal("config")
	}
	defer closeLog()
	k, err := cfg.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := newControllerNode(cfg, k, slog.New(slog.DiscardHandler), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := controllerView(n.srv)
		if v.Raft.LeaderID == "n0" && v.Raft.LeaderAddr == addr && len(v.Raft.Peers) == 1 {
			p := v.Raft.Peers[0]
			if p.ID != "n0" || p.ServeAddr != addr || !p.Self || !p.Leader || !p.Tracked || !p.Reachable {
				t.Fatalf("peer %+v", p)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("view %+v", v.Raft)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
