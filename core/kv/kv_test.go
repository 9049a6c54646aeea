// Tests of the KV store: operations, persistence, Java's file, failures.

package kv

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPutGetDelete(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s := open(t, path)
	if s.Len() != 0 {
		t.Fatalf("Len = %d", s.Len())
	}
	if _, ok := s.Get("ns", "k"); ok {
		t.Fatal("Get on empty store found something")
	}
	if _, ok := s.Namespace("ns"); ok {
		t.Fatal("Namespace on empty store found something")
	}
	if err := s.Put("ns", "k", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns", "k", "v2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns", "k2", "x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("other", "k", ""); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Get("ns", "k"); !ok || v != "v2" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	if v, ok := s.Get("other", "k"); !ok || v != "" {
		t.Fatalf("Get of empty value = %q, %v", v, ok)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d", s.Len())
	}
	if err := s.Delete("ns", "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("ns", "k"); ok {
		t.Fatal("deleted key still there")
	}
	if err := s.Delete("ns", "k2"); err != nil {
		t.Fatal(err)
	}
	// Java keeps a namespace whose keys are all gone.
	m, ok := s.Namespace("ns")
	if !ok || len(m) != 0 {
		t.Fatalf("Namespace after deleting all keys = %v, %v", m, ok)
	}
	if got := readFile(t, path); got != `{"configTable":{"ns":{},"other":{"k":""}}}` {
		t.Fatalf("file = %s", got)
	}
}

func TestCopiesAreIndependent(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "kv.json"))
	if err := s.Put("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Namespace("ns")
	m["k"] = "changed"
	snap := s.Snapshot()
	snap["ns"]["k"] = "changed"
	snap["new"] = map[string]string{}
	if v, _ := s.Get("ns", "k"); v != "v" {
		t.Fatalf("store changed through a copy: %q", v)
	}
	if _, ok := s.Namespace("new"); ok {
		t.Fatal("store changed through a snapshot")
	}
}

func TestPersistAndReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "deep", "dir", "kvConfig.json")
	s := open(t, path)
	if err := s.Put("ORDER_TOPIC_CONFIG", "TopicOrder", "broker-a:4;broker-b:4"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("b", "<&>", `quote " and \ slash`); err != nil {
		t.Fatal(err)
	}
	want := `{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"},"b":{"<&>":"quote \" and \\ slash"}}}`
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n got %s\nwant %s", got, want)
	}
	// The previous content is kept as .bak, like Java.
	if got := readFile(t, path+".bak"); got != `{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}` {
		t.Fatalf(".bak = %s", got)
	}
	r := open(t, path)
	if !reflect.DeepEqual(r.Snapshot(), s.Snapshot()) {
		t.Fatalf("reopened %v, want %v", r.Snapshot(), s.Snapshot())
	}
	// No temporary files are left behind.
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "kvConfig.json,kvConfig.json.bak" {
		t.Fatalf("directory holds %v", names)
	}
}

func TestOpenJavaFile(t *testing.T) {
	t.Parallel()
	f := func(content string, want map[string]map[string]string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "kvConfig.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s := open(t, path)
		if got := s.Snapshot(); !reflect.DeepEqual(got, want) {
			t.Fatalf("Open(%s) = %v, want %v", content, got, want)
		}
	}
	f(`{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}`,
		map[string]map[string]string{"ORDER_TOPIC_CONFIG": {"TopicOrder": "broker-a:4;broker-b:4"}})
	f(`{"configTable":{}}`, map[string]map[string]string{})
	f("", map[string]map[string]string{})
	f("  \n", map[string]map[string]string{})
	f(`{"configTable":{"ns":{"a":null,"b":"1"},"empty":null}}`,
		map[string]map[string]string{"ns": {"b": "1"}, "empty": {}})
	// Java's pretty-printed form, and unknown fields, are fine too.
	f("{\n\t\"configTable\":{\n\t\t\"n\":{\"k\":\"v\"}\n\t},\"x\":1\n}", map[string]map[string]string{"n": {"k": "v"}})
}

func TestOpenCorruptFile(t *testing.T) {
	t.Parallel()
	f := func(content string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "kvConfig.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path)
		if err == nil {
			t.Fatalf("Open(%q) succeeded: %v", content, s.Snapshot())
		}
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name %s", err, path)
		}
		if got := readFile(t, path); got != content {
			t.Fatalf("file changed to %q", got)
		}
		if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
			t.Fatalf(".bak created: %v", err)
		}
	}
	f(`{"configTable":`)
	f(`{"configTable":{"ns":{"k":1}}}`)
	f(`{"configTable":[]}`)
	f("\x00\x01garbage")
}

func TestOpenUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A directory where the file should be cannot be read as one.
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open(dir) = %v", err)
	}
}

func TestWriteFailureRollsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "kvConfig.json")
	s := open(t, path)
	// A plain file where the parent directory should be makes every write
	// fail, whoever runs the test.
	if err := os.WriteFile(filepath.Join(dir, "sub"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := s.Put("ns", "k", "v")
	if err == nil {
		t.Fatal("Put succeeded in an unwritable place")
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name %s", err, path)
	}
	if _, ok := s.Get("ns", "k"); ok {
		t.Fatal("a Put that was not persisted is visible")
	}
	if err := s.Delete("ns", "k"); err == nil {
		t.Fatal("Delete succeeded in an unwritable place")
	}
	if err := s.Flush(); err == nil {
		t.Fatal("Flush succeeded in an unwritable place")
	}
}

func TestWriteFailureKeepsOldValue(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("permissions do not stop root")
	}
	dir := filepath.Join(t.TempDir(), "kv")
	path := filepath.Join(dir, "kvConfig.json")
	s := open(t, path)
	if err := s.Put("ns", "k", "old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	if err := s.Put("ns", "k", "new"); err == nil {
		t.Fatal("Put succeeded in a read-only directory")
	}
	if v, _ := s.Get("ns", "k"); v != "old" {
		t.Fatalf("Get = %q after a failed Put", v)
	}
	if got := readFile(t, path); got != `{"configTable":{"ns":{"k":"old"}}}` {
		t.Fatalf("file = %s", got)
	}
}

func TestDeleteAlwaysPersists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s := open(t, path)
	if err := s.Delete("none", "none"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != `{"configTable":{}}` {
		t.Fatalf("file = %s", got)
	}
}

func TestFlush(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	if err := os.WriteFile(path, []byte(`{"configTable":{"a":{"b":"c"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != `{"configTable":{"a":{"b":"c"}}}` {
		t.Fatalf("file = %s", got)
	}
}

func TestConcurrentPuts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s := open(t, path)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				ns := fmt.Sprintf("ns%d", w%3)
				if err := s.Put(ns, fmt.Sprintf("k%d-%d", w, i), "v"); err != nil {
					t.Error(err)
					return
				}
				// Readers run alongside writers.
				s.Get(ns, "k0-0")
				s.Namespace(ns)
				s.Len()
			}
		}()
	}
	wg.Wait()
	if s.Len() != writers*each {
		t.Fatalf("Len = %d, want %d", s.Len(), writers*each)
	}
	r := open(t, path)
	if !reflect.DeepEqual(r.Snapshot(), s.Snapshot()) {
		t.Fatal("file and memory differ after concurrent puts")
	}
	if r.Len() != writers*each {
		t.Fatalf("reopened Len = %d", r.Len())
	}
}

func TestOpenRemovesTempFilesACrashLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kvConfig.json")
	if err := os.WriteFile(path, []byte(`{"configTable":{"ns":{"k":"v"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := path + ".tmp4242"
	if err := os.WriteFile(stale, []byte(`{"configTable":`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("ns", "k"); v != "v" {
		t.Fatalf("got %q", v)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temporary file still there: %v", err)
	}
}

// A put without a value is Java's put of null: the key reads as not found,
// and the namespace exists from then on, empty if it was new, and is
// persisted so.
func TestPutNullCreatesTheNamespace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s := open(t, path)
	if err := s.Put("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutNull("ns", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutNull("fresh", "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("ns", "k"); ok {
		t.Fatal("a null put left the key readable")
	}
	for _, ns := range []string{"ns", "fresh"} {
		if m, ok := s.Namespace(ns); !ok || len(m) != 0 {
			t.Fatalf("namespace %s after a null put: %v, %v", ns, m, ok)
		}
	}
	if got := readFile(t, path); got != `{"configTable":{"fresh":{},"ns":{}}}` {
		t.Fatalf("file = %s", got)
	}
}
