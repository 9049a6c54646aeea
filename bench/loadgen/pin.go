// pin.go holds CPU pinning: a child process started on a set of CPUs, and
// this process (the generator) moved onto another, through
// sched_setaffinity, so server and generator never share a core.

package loadgen

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pin is a split of the machine's CPUs between the servers and the
// generator; the zero value pins nothing.
type Pin struct {
	Server, Generator []int
}

// Enabled reports whether p pins anything.
func (p Pin) Enabled() bool { return len(p.Server) > 0 }

// String is p as ParsePin reads it.
func (p Pin) String() string {
	if !p.Enabled() {
		return ""
	}
	return cpuList(p.Server) + "/" + cpuList(p.Generator)
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// ParsePin reads "SERVER/GENERATOR", each a comma list of CPU numbers
// ("0/1", "0,1/2,3"); the two sets must be disjoint. "" pins nothing.
func ParsePin(s string) (Pin, error) {
	if s == "" {
		return Pin{}, nil
	}
	srv, gen, ok := strings.Cut(s, "/")
	if !ok {
		return Pin{}, fmt.Errorf("pin %q: want SERVER_CPUS/GENERATOR_CPUS, like 0/1", s)
	}
	var p Pin
	var err error
	if p.Server, err = parseCPUs(srv); err != nil {
		return Pin{}, fmt.Errorf("pin %q: %w", s, err)
	}
	if p.Generator, err = parseCPUs(gen); err != nil {
		return Pin{}, fmt.Errorf("pin %q: %w", s, err)
	}
	for _, a := range p.Server {
		for _, b := range p.Generator {
			if a == b {
				return Pin{}, fmt.Errorf("pin %q: CPU %d is on both sides", s, a)
			}
		}
	}
	return p, nil
}

func parseCPUs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n >= 1024 {
			return nil, fmt.Errorf("%q is not a CPU number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// StartPinned starts cmd with its affinity set to cpus (all CPUs when
// empty). The child inherits the mask of the thread that forks it, so the
// mask is set on this goroutine's locked thread for the fork and restored
// after; the child's runtime then sizes GOMAXPROCS to cpus from its start.
func StartPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, cpuSet(cpus)); err != nil {
		return fmt.Errorf("sched_setaffinity %v: %w", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore affinity: %w", rerr)
	}
	return err
}

// PinProcess moves every thread of process pid (0: this one) onto cpus;
// threads created later inherit the mask of their creator. For this
// process GOMAXPROCS is set to len(cpus), which the runtime would have
// chosen had the process started pinned.
func PinProcess(pid int, cpus []int) error {
	self := pid == 0
	if self {
		pid = os.Getpid()
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return fmt.Errorf("pin process %d: %w", pid, err)
	}
	set := cpuSet(cpus)
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that exited since the listing is not an error.
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin process %d thread %d to %v: %w", pid, tid, cpus, err)
		}
	}
	if self {
		runtime.GOMAXPROCS(len(cpus))
	}
	return nil
}

// Affinity is the CPU list process pid may run on, as /proc reports it.
func Affinity(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", fmt.Errorf("affinity: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("affinity: no Cpus_allowed_list for process %d", pid)
}
