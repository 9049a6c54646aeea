// atomicfile_test.go checks content, backups, stale temp files and failures.

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReplaceKeepsBackupAndLeavesNoTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "kv.json")
	prev, err := Previous(path)
	if err != nil || prev != nil {
		t.Fatalf("Previous of a missing file: %q %v", prev, err)
	}
	if ok, err := Replace(path, []byte("one"), prev); !ok || err != nil {
		t.Fatalf("first replace: %v %v", ok, err)
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Fatalf("backup written without a previous file: %v", err)
	}
	prev, _ = Previous(path)
	if ok, err := Replace(path, []byte("two"), prev); !ok || err != nil {
		t.Fatalf("second replace: %v %v", ok, err)
	}
	if got := read(t, path); got != "two" {
		t.Fatalf("file holds %q", got)
	}
	if got := read(t, path+".bak"); got != "one" {
		t.Fatalf("backup holds %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), tempSuffix) {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestRemoveStaleRemovesOnlyTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kv.json")
	for name, content := range map[string]string{
		"kv.json": "real", "kv.json.bak": "backup", "kv.json.tmp123": "torn", "kv.json.tmp9": "torn", "other.tmp1": "x",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveStale(path); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != "kv.json,kv.json.bak,other.tmp1" {
		t.Fatalf("left %s", got)
	}
	if err := RemoveStale(filepath.Join(dir, "missing", "kv.json")); err != nil {
		t.Fatalf("missing directory: %v", err)
	}
}

func TestReplaceFailsCleanlyWhenTheTargetCannotBeReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kv.json")
	// A directory where the file should be: rename must fail.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok, err := Replace(path, []byte("data"), nil)
	if ok || err == nil || !strings.Contains(err.Error(), "replace") {
		t.Fatalf("got %v %v", ok, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary file not removed after the failure: %d entries", len(entries))
	}
}

// A first write into directories that do not exist yet syncs the parent of
// every directory it creates, then the file's own directory; a later write
// syncs only the latter.
func TestReplaceSyncsTheDirectoriesItCreates(t *testing.T) {
	var synced []string
	record := func(dir string) error { synced = append(synced, dir); return syncDir(dir) }
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "kv.json")
	if _, err := replace(path, []byte("1"), nil, record); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "a"), root, filepath.Join(root, "a", "b")}
	if strings.Join(synced, "\n") != strings.Join(want, "\n") {
		t.Fatalf("synced %q, want %q", synced, want)
	}
	synced = nil
	if _, err := replace(path, []byte("2"), []byte("1"), record); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != filepath.Join(root, "a", "b") {
		t.Fatalf("second write synced %q", synced)
	}
	if got := read(t, path); got != "2" {
		t.Fatalf("content %q", got)
	}
}
