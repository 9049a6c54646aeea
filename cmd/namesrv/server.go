// The binding of the command to the real server, and the controller that
// runs beside it when enableControllerInNamesrv is set.

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

func newServer(cfg *config.Config, log *slog.Logger) (nameServer, error) {
	s, err := server.New(cfg, log)
	if err != nil {
		return nil, err
	}
	if !cfg.ControllerEnabled() {
		return s, nil
	}
	// As Java's NamesrvStartup: the controller reads the same file, runs
	// on its own port and answers with the NameServer's version.
	k, err := cfg.Controller(true)
	if err != nil {
		return nil, fmt.Errorf("enableControllerInNamesrv: %w", err)
	}
	// The controller port enforces the NameServer's own policy: its
	// accounts, networks and strict-signature replay cache.
	var policy *auth.Policy
	if cfg.AuthEnabled() {
		if policy, err = s.AuthPolicy(); err != nil {
			return nil, fmt.Errorf("enableControllerInNamesrv: authorization: %w", err)
		}
	}
	node, err := newControllerNode(cfg, k, log.With("component", "controller"), s.Admin(), s.Budget(), policy)
	if err != nil {
		return nil, fmt.Errorf("enableControllerInNamesrv: %w", err)
	}
	return &withController{Server: s, ctl: node}, nil
}

// withController is a NameServer with a controller node in the process:
// the NameServer starts first and stops last, so brokers' route
// registrations keep working while the controller comes and goes.
type withController struct {
	*server.Server
	ctl *controllerNode
}

func (w *withController) Start() error {
	if err := w.Server.Start(); err != nil {
		return err
	}
	if err := w.ctl.Start(); err != nil {
		w.Server.Shutdown(context.Background())
		return fmt.Errorf("controller: %w", err)
	}
	w.ctl.log.Info(controllerBanner, "address", w.ctl.Addr())
	return nil
}

func (w *withController) Shutdown(ctx context.Context) error {
	return errors.Join(w.ctl.Shutdown(ctx), w.Server.Shutdown(ctx))
}

// ServeProfiles and AdminAddr are the NameServer's (one admin listener).
func (w *withController) ServeProfiles(h http.Handler) { w.Server.ServeProfiles(h) }
func (w *withController) AdminAddr() string            { return w.Server.AdminAddr() }
