// Tests of the log file: the records go there, the file rotates by size,
// old files are compressed and pruned by count and by age.

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// files lists dir's names, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestLogFileGetsTheRecords(t *testing.T) {
	withHome(t)
	path := filepath.Join(t.TempDir(), "logs", "rocketmqlogs", "namesrv.log")
	fake := &fakeServer{}
	r := runFake(t, fake, true, "--logFile", path)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	// The banner still goes to stdout for scripts; the log only to the file.
	if !strings.Contains(r.stdout, "The Name Server boot success") || r.stderr != "" {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The Name Server boot success", "signal=terminated", "the name server has stopped"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("log file lacks %q:\n%s", want, b)
		}
	}
}

func TestLogFileErrors(t *testing.T) {
	withHome(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runFake(t, nil, false, "--logFile", filepath.Join(blocker, "namesrv.log"), "-p")
	if r.code != 1 || !strings.Contains(r.stderr, "logFile=") {
		t.Fatalf("unwritable log file: exit %d stderr %s", r.code, r.stderr)
	}
	r = runFake(t, nil, false, "--set", "logFile=~/logs/rocketmqlogs/namesrv.log", "-p")
	if r.code != 1 || !strings.Contains(r.stderr, "'~' is not expanded") {
		t.Fatalf("~ in logFile: exit %d stderr %s", r.code, r.stderr)
	}
	r = runFake(t, nil, false, "--set", "logMaxSizeMB=0", "-p")
	if r.code != 1 || !strings.Contains(r.stderr, "logMaxSizeMB=0 (flag --set)") {
		t.Fatalf("logMaxSizeMB=0: exit %d stderr %s", r.code, r.stderr)
	}
}

// fill writes a little over n MiB of records through a logger on cfg.
func fill(t *testing.T, cfg *config.Config, n int) {
	t.Helper()
	log, closeLog, err := newLogger(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	line := strings.Repeat("x", 1000)
	for i := 0; i < n*1100; i++ {
		// One message per line: the logger lets only so many lines of one
		// message through per second.
		log.Info("filler "+strconv.Itoa(i), "pad", line)
	}
}

func TestLogRotationBySizeWithCompression(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.LogFile = filepath.Join(dir, "namesrv.log")
	cfg.LogMaxSizeMB, cfg.LogMaxBackups, cfg.LogCompress = 1, 2, true
	fill(t, cfg, 4) // four rotations; two backups kept
	// The library compresses and prunes rotated files on a goroutine of its own.
	remotingtest.WaitFor(t, "two compressed backups and the current file", func() bool {
		names := files(t, dir)
		gz := 0
		for _, n := range names {
			switch {
			case strings.HasPrefix(n, "namesrv-") && strings.HasSuffix(n, ".log.gz"):
				gz++
			case n != "namesrv.log":
				return false // an uncompressed backup still there
			}
		}
		return gz == 2 && len(names) == 3
	})
	st, err := os.Stat(cfg.LogFile)
	if err != nil || st.Size() > 1<<20 {
		t.Fatalf("current file: %v, %v", st, err)
	}
}

func TestLogRotationPrunesByAge(t *testing.T) {
	dir := t.TempDir()
	// Rotated files carry their rotation time in the name, which is what
	// the age is read from.
	old := filepath.Join(dir, "namesrv-2001-02-03T04-05-06.000.log.gz")
	recent := filepath.Join(dir, "namesrv-"+time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15-04-05.000")+".log.gz")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.LogFile = filepath.Join(dir, "namesrv.log")
	cfg.LogMaxSizeMB, cfg.LogMaxBackups, cfg.LogMaxAgeDays, cfg.LogCompress = 1, 0, 7, false
	fill(t, cfg, 1) // one rotation, which prunes
	remotingtest.WaitFor(t, "the file older than logMaxAgeDays to go", func() bool {
		_, err := os.Stat(old)
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(recent); err != nil {
		t.Fatalf("a recent backup was removed: %v", err)
	}
	if names := files(t, dir); len(names) != 3 {
		t.Fatalf("files %q, want the current one, the rotated one and the recent backup", names)
	}
}
