// file.go holds Write and Load: the snapshot file on disk.

package routesnap

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/rocketns/rocketns/core/atomicfile"
	"github.com/rocketns/rocketns/core/route"
)

// Write replaces path with s atomically (a crash leaves the previous file
// or the new one, never a torn one) and returns the bytes written. No
// .bak is kept: the previous snapshot is older and worth nothing once a
// newer one exists.
func Write(path string, s *route.Snapshot) (int, error) {
	b := Encode(s)
	if _, err := atomicfile.Replace(path, b, nil); err != nil {
		return 0, err
	}
	return len(b), nil
}

// RemoveStale deletes the temporary files a kill during a Write left
// beside path; call it once before the first Write.
func RemoveStale(path string) error { return atomicfile.RemoveStale(path) }

// Load reads path and returns its snapshot when it was taken within
// maxAge (ms) of now (unix ms), either way. A missing file is
// os.ErrNotExist; a file too old is ErrStale; ErrCorrupt, ErrTruncated
// and ErrVersion say what else is wrong with it. The header is returned
// whenever it could be read.
func Load(path string, now, maxAge int64) (*route.Snapshot, Header, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Header{}, err
	}
	h, err := ReadHeader(b)
	if err != nil {
		return nil, h, err
	}
	// Before decoding: a stale file costs no more than its header.
	if age := now - h.TakenAt; age > maxAge || -age > maxAge {
		return nil, h, fmt.Errorf("%w: taken %d ms ago, older than %d ms", ErrStale, age, maxAge)
	}
	s, h, err := Decode(b)
	if err != nil {
		return nil, h, err
	}
	return s, h, nil
}

// IsNotExist reports whether err says there was no file to load.
func IsNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

func sortedKeys(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
