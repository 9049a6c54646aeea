// Keys and values that are not valid UTF-8: what is acknowledged is what a
// restart reads back.

package kv

import (
	"path/filepath"
	"testing"
)

// Store promises memory and disk always agree; a value that is not UTF-8
// (binary headers and the JSON scanner pass raw bytes through) is written
// by encoding/json as U+FFFD, so the value read back after a restart is not
// the one that was acknowledged.
func TestNonUTF8SurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns", "k\xfe", "v\xff"); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get("ns", "k\xfe")
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	after, ok := s2.Get("ns", "k\xfe")
	if !ok || after != before {
		t.Fatalf("before restart %q, after restart %q (found %v); snapshot after: %q", before, after, ok, s2.Snapshot())
	}
}

// Invalid bytes become U+FFFD for every operation alike, so a key put with
// them is found, listed and deleted with the same bytes.
func TestNonUTF8KeysAreOneKey(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "kvConfig.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put("n\xff", "k\xfe", "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Get("n\uFFFD", "k\uFFFD"); !ok || v != "v" {
		t.Fatalf("Get by the replaced key: %q %v", v, ok)
	}
	if m, ok := s.Namespace("n\xff"); !ok || m["k\uFFFD"] != "v" {
		t.Fatalf("Namespace: %q %v", m, ok)
	}
	if err := s.Delete("n\xff", "k\xfe"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("n\xff", "k\xfe"); ok {
		t.Fatal("deleted key still there")
	}
}
