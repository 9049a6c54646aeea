// controller.go holds the controller: the standalone mode (namesrv
// controller -c controller.conf, as Java's mqcontroller) and the node both
// modes run, with its TLS material, persisted config, admin sections and
// status page.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/certs"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/ctlserver"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/server"
	"github.com/rocketns/rocketns/core/status"
)

// controllerMode is the first argument that runs a standalone controller.
const controllerMode = "controller"

// controllerBanner is Java's ControllerStartup line, which scripts wait for.
const controllerBanner = "The Controller Server boot success. serializeType=JSON"

// controllerNode is one controller node with what surrounds it in the
// process: its TLS material (polled for reloads) and, standalone, an admin
// listener of its own.
type controllerNode struct {
	srv   *ctlserver.Server
	log   *slog.Logger
	bind  string // bindAddress, named in the banner as the NameServer's is
	tls   *certs.Material
	admin *adminhttp.Server // standalone only; embedded, the NameServer's
	stop  chan struct{}
	wg    sync.WaitGroup
}

// newControllerNode builds the node cfg describes. admin, when set, is the
// NameServer's admin listener, which gets the node's metrics, readiness
// and status page (at /controller); otherwise the node gets a listener of
// its own on adminListen, with its status page at /. budget, when set, is
// the NameServer's buffered-bytes budget, shared with the broker port.
// policy is who may send what on the controller port (nil: everyone):
// embedded, the NameServer's own policy.
func newControllerNode(cfg *config.Config, k *config.Controller, log *slog.Logger, admin *adminhttp.Server, budget *remoting.Budget, policy *auth.Policy) (*controllerNode, error) {
	sc := ctlserver.Config{Controller: *k, Logger: log, Budget: budget, Auth: policy}
	logControllerAuth(cfg, log, policy)
	n := &controllerNode{log: log, bind: cfg.BindAddress, stop: make(chan struct{})}
	var err error
	if n.tls, err = certs.Load(cfg, log); err != nil {
		return nil, err
	}
	if n.tls != nil {
		sc.TLS = &remoting.TLS{Config: n.tls.Config(), Enforce: n.tls.Mode() == config.TLSEnforcing}
	}
	if k.RaftTLSEnable {
		// config checked that the files are set: the material is loaded.
		sc.RaftTLS = &raftnode.PeerTLS{Certificate: n.tls.Certificate, Roots: n.tls.TrustPool}
	}
	if k.RaftSecretFile != "" {
		if fi, err := os.Stat(k.RaftSecretFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("controllerRaftSecretFile holds the raft cluster secret but others may read it; chmod 600 it",
				"file", k.RaftSecretFile, "mode", fi.Mode().Perm().String())
		}
	}
	if n.srv, err = ctlserver.New(sc); err != nil {
		return nil, err
	}
	path := server.ControllerStatusPath
	if admin == nil {
		admin = adminhttp.New(adminhttp.Options{Addr: cfg.AdminListen, Log: log})
		n.admin = admin
		path = "/"
	}
	n.srv.RegisterAdmin(admin)
	admin.Handle(path, status.ControllerHandler(func() status.ControllerView { return controllerView(n.srv) }, path, time.Now))
	log.Info("controller configuration", "style", k.Membership.Style.String(), "self", k.Membership.SelfID,
		"serve", k.Membership.Self().ServeAddr, "raft", k.Membership.Self().RaftAddr, "peers", len(k.Membership.Peers),
		"controllerStorePath", k.StorePath, "configStorePath", k.ConfigStorePath, "embedded", k.Embedded)
	return n, nil
}

// controllerAuthPolicy is the policy a standalone controller enforces,
// from the same keys as the NameServer's: nil when none is set.
func controllerAuthPolicy(cfg *config.Config) (*auth.Policy, error) {
	if !cfg.AuthEnabled() {
		return nil, nil
	}
	p, err := cfg.AuthPolicy()
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	return p, nil
}

// logControllerAuth says at start what the controller port lets through.
func logControllerAuth(cfg *config.Config, log *slog.Logger, policy *auth.Policy) {
	if policy == nil || !policy.Enabled() {
		log.Warn("controller port open to every peer: any host that reaches it can move masters, rewrite broker addresses and change settings; set brokerAllowCIDRs and adminAllowCIDRs, or authorizationEnable")
		return
	}
	log.Info("controller port authorization on", "signatures", cfg.AuthorizationEnable,
		"admin_allow_cidrs", cfg.AdminAllowCIDRs, "broker_allow_cidrs", cfg.BrokerAllowCIDRs,
		"broker_registration", cfg.AuthorizeBrokerRegistration)
}

// controllerView is what the status page shows of s.
func controllerView(s *ctlserver.Server) status.ControllerView {
	st := s.Stats()
	v := status.ControllerView{
		ID: s.ID(),
		Raft: status.ControllerRaft{State: st.Raft.State, ReadyLeader: st.Raft.ReadyLeader, LeaderID: st.Raft.LeaderID,
			Term: st.Raft.Term, CommitIndex: st.Raft.CommitIndex, AppliedIndex: st.Raft.AppliedIndex, Voters: st.Raft.Voters,
			Mismatch: st.Raft.MembershipMismatch, LastContact: st.Raft.LastContact, LeaderAddr: st.Raft.LeaderAddr},
		Sets: st.Groups, SetsWithoutMaster: st.GroupsWithoutMaster, BrokersAlive: st.BrokersAlive,
		Elections: status.ControllerElections{Success: st.Elections.Success, StillExist: st.Elections.StillExist,
			Failed: st.Elections.Failed, Cleared: st.Elections.Cleared},
		NotificationsSent: st.NotificationsSent, NotificationsFailed: st.NotificationsFailed,
	}
	for _, p := range st.Raft.Peers {
		v.Raft.Peers = append(v.Raft.Peers, status.ControllerPeer{ID: p.ID, RaftAddr: p.RaftAddr, ServeAddr: p.ServeAddr,
			Self: p.Self, Leader: p.Leader, Tracked: p.Tracked, Reachable: p.Reachable, DownSince: p.DownSince,
			LastContact: p.LastContact, Failures: p.Failures})
	}
	v.Groups = s.GroupsUpTo(status.DefaultMaxRows) // the page shows no more
	return v
}

// Start binds the node's admin listener (standalone), then the node.
func (n *controllerNode) Start() error {
	if n.admin != nil {
		if err := n.admin.Listen(); err != nil {
			return err
		}
	}
	if err := n.srv.Start(); err != nil {
		if n.admin != nil {
			n.admin.Shutdown(context.Background())
		}
		return err
	}
	if n.admin != nil {
		n.admin.Serve("/metrics, /healthz, /readyz and the controller status page /")
	}
	if n.tls != nil && n.tls.Watches() {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			t := time.NewTicker(certs.PollInterval)
			defer t.Stop()
			for {
				select {
				case <-n.stop:
					return
				case <-t.C:
					n.tls.Poll()
				}
			}
		}()
	}
	return nil
}

// Addr is the node's broker-facing address: the bind address with the
// port bound.
func (n *controllerNode) Addr() string {
	_, port, _ := net.SplitHostPort(n.srv.Addr().String())
	return net.JoinHostPort(n.bind, port)
}

// Shutdown stops the node, then its admin listener.
func (n *controllerNode) Shutdown(ctx context.Context) error {
	close(n.stop)
	err := n.srv.Shutdown(ctx)
	n.wg.Wait()
	if n.admin != nil {
		err = errors.Join(err, n.admin.Shutdown(ctx))
	}
	return err
}

// ServeProfiles and AdminAddr make a standalone node an adminServer.
func (n *controllerNode) ServeProfiles(h http.Handler) { n.admin.ServeProfiles(h) }
func (n *controllerNode) AdminAddr() string            { return n.admin.Addr() }

// runController is the standalone controller: the config layers (file,
// ROCKETNS_ variables, flags) as for the NameServer, then the node until a
// signal. It returns the exit code: 0 after a clean shutdown or -p/-h, 2
// for a bad command line, 1 for anything else.
func runController(args, environ []string, stdout, stderr io.Writer, signals <-chan os.Signal) int {
	opts, code := parseFlags(standaloneControllerMode, args, stdout, stderr) // flags.go
	if opts == nil {
		return code
	}
	cfg, log, closeLog, ok := loadConfig("namesrv controller", config.LoadInput{
		File: opts.configFile, Environ: environ, Flags: opts.overrides,
		Base: config.DefaultController(), KeepConfigStorePath: true,
	}, stdout, stderr)
	if !ok {
		return 1
	}
	defer closeLog()
	k, ok := checkController("namesrv controller", cfg, false, stderr)
	if !ok {
		return 1
	}
	// The policy is checked before -p prints, as start-up checks it.
	policy, err := controllerAuthPolicy(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "namesrv controller: %v\n", err)
		return 1
	}
	if opts.print {
		_, _ = stdout.Write(cfg.AppendControllerText(nil))
		return 0
	}
	fitConnectionsToFDs(cfg, log, raiseFDLimit) // rlimit.go, as for the NameServer
	node, err := newControllerNode(cfg, k, log, nil, nil, policy)
	if err != nil {
		log.Error("cannot initialise the controller; fix the cause and start again", "err", err)
		return 1
	}
	if err := node.Start(); err != nil {
		log.Error("cannot start the controller; is the address in use?", "err", err,
			"address", k.Membership.Self().ServeAddr, "adminListen", cfg.AdminListen)
		return 1
	}
	log.Info(controllerBanner, "address", node.Addr())
	fmt.Fprintf(stdout, "%s, address %s\n", controllerBanner, node.Addr())

	sig := <-signals
	log.Info("shutting down", "signal", fmt.Sprint(sig), "timeout", shutdownTimeout)
	if !shutdown(node, log) {
		return 1
	}
	log.Info("the controller has stopped")
	return 0
}
