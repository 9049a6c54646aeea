// log.go holds the logger: slog text or JSON on stderr, or in a log file
// rotated by size and age when logFile is set, behind the bounds of
// logsetup.go.

package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/rocketns/rocketns/core/config"
)

// newLogger builds the logger cfg asks for and returns the function that
// closes its file. With logFile set the records go to the file only (under
// systemd or Docker, leave it unset and let journald or the container
// runtime keep stderr); errors before the logger exists still go to stderr.
func newLogger(cfg *config.Config, stderr io.Writer) (*slog.Logger, func(), error) {
	level, err := cfg.Level()
	if err != nil {
		return nil, nil, err
	}
	w, closeFn := stderr, func() {}
	if path := strings.TrimSpace(cfg.LogFile); path != "" {
		lj := newLogFile(cfg, path)
		// Open it now: an unwritable path must stop start-up, not lose
		// every line after it.
		if _, err := lj.Write(nil); err != nil {
			return nil, nil, fmt.Errorf("config: %s=%q: %w", config.KeyLogFile, path, err)
		}
		w, closeFn = lj, func() { _ = lj.Close() }
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if strings.EqualFold(cfg.LogFormat, "json") {
		h = slog.NewJSONHandler(w, opts)
	}
	log, stop := boundLog(h) // logsetup.go
	return log, func() {
		stop()
		closeFn()
	}, nil
}

// newLogFile is the rotating file: a new file when the current one reaches
// logMaxSizeMB, the old ones renamed with their rotation time
// (namesrv-2025-01-02T15-04-05.000.log), gzipped with logCompress, removed
// beyond logMaxBackups or logMaxAgeDays.
func newLogFile(cfg *config.Config, path string) *lumberjack.Logger {
	return &lumberjack.Logger{
		Filename:   path,
		MaxSize:    cfg.LogMaxSizeMB,
		MaxAge:     cfg.LogMaxAgeDays,
		MaxBackups: cfg.LogMaxBackups,
		Compress:   cfg.LogCompress,
	}
}
