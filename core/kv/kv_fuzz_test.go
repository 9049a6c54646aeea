// Fuzz target for the KV file loader: whatever is on disk, Open never
// panics, never writes, and loads exactly what a flush writes back.

package kv

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func FuzzOpen(f *testing.F) {
	// Java's file (spec 5.5), our own output, Java's pretty-printed form,
	// nulls, duplicates, escapes, and files cut short.
	for _, s := range []string{
		`{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}`,
		`{"configTable":{"ns":{},"other":{"k":""}}}`,
		`{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"},"b":{"<&>":"quote \" and \\ slash"}}}`,
		"{\n\t\"configTable\":{\n\t\t\"n\":{\"k\":\"v\"}\n\t},\"x\":1\n}",
		`{"configTable":{"ns":{"a":null,"b":"1"},"empty":null}}`,
		`{"configTable":{"n":{"k":"1","k":"2"},"n":{"j":"3"}}}`,
		`{"configTable":{"\u00e9\ud83d\ude00":{"\ud800":"\/"}}}`,
		`{"configTable":{"ns":{"k":1}}}`,
		`{"configTable":`,
		`null`,
		"  \n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "kvConfig.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path)
		// Open only reads: the file is as it was and nothing was created
		// beside it, whether the content parsed or not.
		if got, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(got, data) {
			t.Fatalf("Open changed the file (err %v): %q -> %q", rerr, data, got)
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"kvConfig.json"}) {
			t.Fatalf("Open left files behind: %q", names)
		}
		if err != nil {
			if s != nil {
				t.Fatal("a store and an error")
			}
			return
		}
		snap := s.Snapshot()
		if err := s.Flush(); err != nil {
			t.Fatalf("flush of a loaded store: %v", err)
		}
		written, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if bak, err := os.ReadFile(path + ".bak"); err != nil || !bytes.Equal(bak, data) {
				t.Fatalf("backup is %q (%v), want the loaded file %q", bak, err, data)
			}
		}
		again, err := Open(path)
		if err != nil {
			t.Fatalf("reopen of our own file %q: %v", written, err)
		}
		if got := again.Snapshot(); !reflect.DeepEqual(got, snap) {
			t.Fatalf("reopen changed the store\nloaded %q\nwrote  %q\ngot    %q\nfrom   %q", snap, written, got, data)
		}
		// Our own file is a fixed point.
		if err := again.Flush(); err != nil {
			t.Fatal(err)
		}
		if second, _ := os.ReadFile(path); !bytes.Equal(second, written) {
			t.Fatalf("second flush wrote %q, first %q", second, written)
		}
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
