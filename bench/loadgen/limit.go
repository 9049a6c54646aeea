// The limit server: a minimal echo (bench/echo) answering every request with
// the NameServer's route body, in this process or in a child, so a run's
// ratio to it prices everything the NameServer does per request.

package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/rocketns/rocketns/bench/echo"
)

// LimitServer is a running limit server in this process.
type LimitServer struct{ *echo.Server }

// StartLimitServer listens on addr (host:port, port 0 for any) and answers
// every request with body, with the netpoll echo. body is not copied and
// must not change while the server runs.
func StartLimitServer(addr string, body []byte) (*LimitServer, error) {
	s, err := echo.StartNetpoll(addr, body)
	if err != nil {
		return nil, fmt.Errorf("limit server: %w", err)
	}
	return &LimitServer{s}, nil
}

// LimitProcess is an echo server running in a child process, so that
// against an external NameServer the limit has the same process layout
// (generator and server in two processes), and so it can be pinned.
type LimitProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

// StartLimitProcess runs exe with args (which must make it call
// ServeLimitChild), on the CPUs cpus when not empty, hands it body on stdin
// and waits for its address.
func StartLimitProcess(exe string, args []string, body []byte, cpus []int) (*LimitProcess, error) {
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("limit process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("limit process: %w", err)
	}
	if err := StartPinned(cmd, cpus); err != nil {
		return nil, fmt.Errorf("limit process: start %s: %w", exe, err)
	}
	p := &LimitProcess{cmd: cmd, stdin: stdin}
	hdr := fmt.Sprintf("%d\n", len(body))
	_, err = io.WriteString(stdin, hdr)
	if err == nil {
		_, err = stdin.Write(body)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("limit process: send body: %w", err)
	}
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if rerr != nil || !ok {
		p.Close()
		return nil, fmt.Errorf("limit process: no address from child (got %q): %v", line, rerr)
	}
	p.addr = addr
	return p, nil
}

// Addr is the child's listen address.
func (p *LimitProcess) Addr() string { return p.addr }

// PID is the child's process id.
func (p *LimitProcess) PID() int { return p.cmd.Process.Pid }

// Close ends the child (closing its stdin is its signal) and waits for it.
func (p *LimitProcess) Close() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("limit process: %w", err)
	}
	return nil
}

// ServeLimitChild is the child side of StartLimitProcess: it reads the body
// from in, serves it with the echo of kind (echo.KindNetpoll or
// echo.KindStd) on listen, writes "listening ADDR" to out and returns when
// in reaches EOF (the parent closed it or exited).
func ServeLimitChild(kind, listen string, in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	var n int
	if _, err := fmt.Fscanf(br, "%d\n", &n); err != nil {
		return fmt.Errorf("limit child: read body length: %w", err)
	}
	if n < 0 || n > echo.MaxFrame {
		return fmt.Errorf("limit child: body length %d out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return fmt.Errorf("limit child: read body: %w", err)
	}
	s, err := echo.Start(kind, listen, body)
	if err != nil {
		return fmt.Errorf("limit child: %w", err)
	}
	if _, err := fmt.Fprintf(out, "listening %s\n", s.Addr()); err != nil {
		s.Close(context.Background())
		return fmt.Errorf("limit child: %w", err)
	}
	io.Copy(io.Discard, br)
	return s.Close(context.Background())
}
