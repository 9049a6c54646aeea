// Tests of the size limits (refused before anything changes, a file over
// them loaded whole) and of the incremental encoding, which must write what
// a full encoding of the table writes.

package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func openLimited(t *testing.T, path string, l Limits) *Store {
	t.Helper()
	s, err := Open(path, WithLimits(l))
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func TestDefaultLimitsRefuseAHugeValue(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s := open(t, path)
	err := s.Put("ORDER_TOPIC_CONFIG", "t", strings.Repeat("x", 6<<20))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 6 MiB value: %v", err)
	}
	if _, ok := s.Get("ORDER_TOPIC_CONFIG", "t"); ok {
		t.Fatal("refused value stored")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("refused put wrote the file: %v", err)
	}
}

func TestLimitsRefuseBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	l := Limits{MaxKeyBytes: 8, MaxValueBytes: 16, MaxNamespaceBytes: 68, MaxTotalBytes: 115}
	s := openLimited(t, path, l)
	if err := s.Put("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	f := func(op func() error, want string) {
		t.Helper()
		err := op()
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want ErrTooLarge saying %q", err, want)
		}
		if strings.Contains(err.Error(), path) || strings.Contains(err.Error(), string(filepath.Separator)+"kvConfig") {
			t.Fatalf("%v names the file", err)
		}
		if got := readFile(t, path); got != before {
			t.Fatalf("file changed: %s", got)
		}
		if snap := s.Snapshot(); len(snap) != 1 || len(snap["ns"]) != 1 || snap["ns"]["k"] != "v" {
			t.Fatalf("table changed: %v", snap)
		}
	}
	f(func() error { return s.Put("ns", "123456789", "v") }, "key of 9 bytes exceeds kvMaxKeyBytes (8)")
	f(func() error { return s.Put("ns123456789", "k", "v") }, "namespace name of 11 bytes exceeds kvMaxKeyBytes (8)")
	f(func() error { return s.PutNull("ns123456789", "k") }, "namespace name of 11 bytes")
	f(func() error { return s.Put("ns", "k", strings.Repeat("v", 17)) }, "value of 17 bytes exceeds kvMaxValueBytes (16)")
	// {"configTable":{"ns":{"k":"v"}}}: the namespace is "ns":{"k":"v"}, 14
	// bytes, and each "kN":"vvvvvvvvvv" adds 18 with its comma.
	for i := 0; i < 3; i++ {
		if err := s.Put("ns", "k"+strconv.Itoa(i), strings.Repeat("v", 10)); err != nil {
			t.Fatal(err)
		}
	}
	// 14 + 3*18 = 68: full.
	before = readFile(t, path)
	snap := s.Snapshot()
	f2 := func(op func() error, want string) {
		t.Helper()
		err := op()
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want ErrTooLarge saying %q", err, want)
		}
		if got := readFile(t, path); got != before {
			t.Fatalf("file changed: %s", got)
		}
		if got := s.Snapshot(); !equalTables(got, snap) {
			t.Fatalf("table changed: %v", got)
		}
	}
	f2(func() error { return s.Put("ns", "k3", "v") }, "namespace ns would be 77 bytes, over kvMaxNamespaceBytes (68)")
	f2(func() error { return s.Put("ns", "k0", strings.Repeat("v", 11)) }, "over kvMaxNamespaceBytes (68)")
	// Replacing with something no larger still works.
	if err := s.Put("ns", "k0", "w"); err != nil {
		t.Fatalf("shrinking a full namespace: %v", err)
	}
	if err := s.Put("ns2", "k", strings.Repeat("v", 16)); err != nil {
		t.Fatal(err)
	}
	before, snap = readFile(t, path), s.Snapshot()
	f2(func() error { return s.Put("ns3", "k", strings.Repeat("v", 16)) }, "over kvMaxTotalBytes (115)")
	f2(func() error { return s.PutNull("ns3", "k") }, "over kvMaxTotalBytes (115)")
	if err := s.Delete("ns", "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns3", "k", "v"); err != nil {
		t.Fatalf("after a delete made room: %v", err)
	}
	checkFile(t, s, path)
}

// A file written under larger limits (or by Java) loads whole: refusing to
// start, or dropping entries, would lose the operator's data. It is
// reported, and writes that do not make it larger still work, so it can be
// cleaned up.
func TestOpenOverLimitsKeepsEverything(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	big := strings.Repeat("b", 1000)
	data := `{"configTable":{"ORDER_TOPIC_CONFIG":{"big":"` + big + `","small":"x"},"ns":{"k":"v"}}}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openLimited(t, path, Limits{MaxKeyBytes: 64, MaxValueBytes: 100, MaxNamespaceBytes: 200, MaxTotalBytes: 300})
	if v, _ := s.Get("ORDER_TOPIC_CONFIG", "big"); v != big {
		t.Fatal("the large value was not loaded")
	}
	over := s.OverLimits()
	if len(over) == 0 || !strings.Contains(strings.Join(over, "\n"), "ORDER_TOPIC_CONFIG") {
		t.Fatalf("OverLimits = %q", over)
	}
	if err := s.Put("ORDER_TOPIC_CONFIG", "more", "x"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("growing an over-limit namespace: %v", err)
	}
	if err := s.Put("ORDER_TOPIC_CONFIG", "small", "y"); err != nil {
		t.Fatalf("a same-size write: %v", err)
	}
	if err := s.Delete("ORDER_TOPIC_CONFIG", "big"); err != nil {
		t.Fatalf("a delete: %v", err)
	}
	if over := s.OverLimits(); len(over) != 0 {
		t.Fatalf("still over after the delete: %q", over)
	}
	if err := s.Put("ORDER_TOPIC_CONFIG", "more", "x"); err != nil {
		t.Fatal(err)
	}
	checkFile(t, s, path)
}

// The file is built from per-entry encodings kept between writes; it must
// be exactly what encoding the whole table writes, through any sequence of
// operations, failed ones included.
func TestIncrementalEncodingMatchesFullEncoding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kvConfig.json")
	s := openLimited(t, path, Limits{MaxKeyBytes: 64, MaxValueBytes: 64, MaxNamespaceBytes: 400, MaxTotalBytes: 1000})
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "a", "b", "ab", "<&>", "\"q\"", "\\", "\n\t", "\u2028", "é", "\x00", "zz", strings.Repeat("x", 60)}
	pick := func() string { return strs[r.IntN(len(strs))] }
	for i := 0; i < 3000; i++ {
		var err error
		ns, key := pick(), pick()
		switch r.IntN(6) {
		case 0, 1, 2:
			err = s.Put(ns, key, pick()+pick())
		case 3:
			err = s.Delete(ns, key)
		case 4:
			err = s.PutNull(ns, key)
		case 5:
			if i%50 == 0 {
				// A failing write (the directory is read-only) changes nothing.
				_ = os.Chmod(dir, 0o500)
				err = s.Put(ns, key+"!", "v")
				_ = os.Chmod(dir, 0o755)
				if err == nil && os.Getuid() != 0 {
					t.Fatal("write into a read-only directory succeeded")
				}
				err = nil
			}
		}
		if err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("op %d: %v", i, err)
		}
		if i%97 == 0 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			checkFile(t, s, path)
		}
	}
	checkFile(t, s, path)
	// And a reopen reads back the same table and sizes.
	s2 := openLimited(t, path, s.limits)
	if !equalTables(s2.Snapshot(), s.Snapshot()) || s2.w.total != s.w.total {
		t.Fatalf("reopened: %v (%d bytes) vs %v (%d bytes)", s2.Snapshot(), s2.w.total, s.Snapshot(), s.w.total)
	}
}

// checkFile compares the file with a full encoding of the table, and the
// kept sizes with the file's.
func checkFile(t *testing.T, s *Store, path string) {
	t.Helper()
	want, err := fullEncode(s.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if got != string(want) {
		t.Fatalf("file:\n%s\nfull encoding:\n%s", got, want)
	}
	if s.w.total != len(got) {
		t.Fatalf("kept total %d, file %d bytes", s.w.total, len(got))
	}
}

// fullEncode is the encoding the store used before it kept per-entry
// encodings: the whole table through encoding/json, keys sorted.
func fullEncode(t map[string]map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		ConfigTable map[string]map[string]string `json:"configTable"`
	}{t}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func equalTables(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for ns, m := range a {
		o, ok := b[ns]
		if !ok || len(o) != len(m) {
			return false
		}
		for k, v := range m {
			if w, ok := o[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}
