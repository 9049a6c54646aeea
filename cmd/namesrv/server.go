// The binding of the command to the real server.

package main

import (
	"log/slog"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

func newServer(cfg *config.Config, log *slog.Logger) (nameServer, error) {
	s, err := server.New(cfg, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}
