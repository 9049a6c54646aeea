// Reading a process's resident set size from /proc/PID/status and its CPU
// time from /proc/PID/stat and the threads' schedstat.

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

// CPUTime is the CPU time process pid's threads have run, summed from
// /proc/PID/task/*/schedstat (nanoseconds), and its user and system parts
// from /proc/PID/stat (clock ticks, so coarser).
type CPUTime struct {
	RunNs               int64
	UserTicks, SysTicks int64
}

// ReadCPUTime reads process pid's CPU time so far.
func ReadCPUTime(pid int) (CPUTime, error) {
	var t CPUTime
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return t, fmt.Errorf("cpu time: %w", err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if err != nil {
			continue // the thread exited since the listing
		}
		f := bytes.Fields(b)
		if len(f) < 1 {
			continue
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return t, fmt.Errorf("cpu time: schedstat %q: %w", b, err)
		}
		t.RunNs += ns
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return t, fmt.Errorf("cpu time: %w", err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is the 3rd field, utime the 14th, stime the 15th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return t, fmt.Errorf("cpu time: stat %q", b)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return t, fmt.Errorf("cpu time: stat %q", b)
	}
	if t.UserTicks, err = strconv.ParseInt(string(f[11]), 10, 64); err != nil {
		return t, fmt.Errorf("cpu time: utime: %w", err)
	}
	if t.SysTicks, err = strconv.ParseInt(string(f[12]), 10, 64); err != nil {
		return t, fmt.Errorf("cpu time: stime: %w", err)
	}
	return t, nil
}
