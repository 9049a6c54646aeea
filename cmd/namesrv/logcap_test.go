// Tests of the bounds on the log: strings capped, repeated lines
// summarised.

package main

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/logcap"
)

func TestLoggerCapsStringsAndRepeats(t *testing.T) {
	var out syncBuffer
	log, closeLog, err := newLogger(config.Default(), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	log.Info("kv config put", "namespace", "ns", "key", strings.Repeat("k", 15<<20))
	if n := len(out.String()); n > 4096 {
		t.Fatalf("one record of a 15 MiB key is a %d-byte line", n)
	}
	for i := 0; i < 1000; i++ {
		log.Warn("closing connection: bad frame", "peer", "127.0.0.1:1")
	}
	if n := strings.Count(out.String(), "bad frame"); n > logcap.DefaultBurst {
		t.Fatalf("%d lines of one cause within a second", n)
	}
}
