// Reading a process's resident set size from /proc/PID/status.

package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ReadRSS returns VmRSS and VmHWM (peak) of process pid, in bytes; pid 0
// means this process.
func ReadRSS(pid int) (rss, hwm int64, err error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("read rss: %w", err)
	}
	return parseStatus(b)
}

func parseStatus(b []byte) (rss, hwm int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() {
		key, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst = &rss
		case "VmHWM":
			dst = &hwm
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, 0, fmt.Errorf("read rss: unexpected %s line %q", key, sc.Bytes())
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read rss: %s: %w", key, err)
		}
		*dst = kb << 10
		found++
	}
	if found < 2 {
		return 0, 0, fmt.Errorf("read rss: VmRSS or VmHWM missing")
	}
	return rss, hwm, nil
}
