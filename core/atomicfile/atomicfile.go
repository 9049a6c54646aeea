// atomicfile.go holds the replacement (write, sync, rename, keep the
// previous content) and the clean-up of what a kill left.

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tempSuffix marks the temporary files Replace creates beside the target.
const tempSuffix = ".tmp"

// Replace makes path hold data: a temporary file beside it is written and
// fsynced, prev (when non-nil) is saved as <path>.bak, the temporary file is
// renamed over path and the directory is fsynced so the rename survives a
// power cut. replaced reports that path now holds data; it is true with a
// non-nil error when only the directory sync failed.
func Replace(path string, data, prev []byte) (replaced bool, err error) {
	return replace(path, data, prev, syncDir)
}

// replace is Replace with the directory sync passed in, so a test can see
// which directories a write made durable.
func replace(path string, data, prev []byte, syncDir func(dir string) error) (replaced bool, err error) {
	dir := filepath.Dir(path)
	if err := mkdirDurable(dir, syncDir); err != nil {
		return false, fmt.Errorf("create directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+tempSuffix+"*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil && !replaced {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if prev != nil {
		if err = os.WriteFile(path+".bak", prev, 0o644); err != nil {
			return false, fmt.Errorf("write backup of %s: %w", path, err)
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	if err = syncDir(dir); err != nil {
		return true, fmt.Errorf("%s written but not made durable: %w", path, err)
	}
	return true, nil
}

// Previous returns path's current content, to pass to Replace as prev; nil
// when the file does not exist yet.
func Previous(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read previous %s: %w", path, err)
	}
	return b, nil
}

// RemoveStale deletes the temporary files that a crash between their
// creation and the rename left beside path. Call it before the first
// Replace of a process; nothing it removes was ever the real file.
func RemoveStale(path string) error {
	dir, base := filepath.Dir(path), filepath.Base(path)+tempSuffix
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), base) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// mkdirDurable creates dir and its missing parents and fsyncs the parent of
// each one it created: the file's own directory sync makes the rename
// durable, but a directory made for the first write is only an entry in its
// parent, lost on a power cut unless that parent is synced too.
func mkdirDurable(dir string, syncDir func(dir string) error) error {
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		_, err := os.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes a rename durable. Some platforms cannot sync a directory;
// that is not worth failing a write for.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
