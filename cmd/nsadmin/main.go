// Command nsadmin administers RocketMQ NameServers (rocketns or Java) with
// mqadmin's subcommand and flag names: argument parsing, help, fan-out over
// the -n address list and exit codes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // a NameServer was unreachable or refused the request
	exitUsage = 2 // bad command line
)

const defaultTimeout = 3 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(args, stdout, stderr, os.Getenv)
}

// usageError is a bad command line: exit 2 and a pointer to the help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func runEnv(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmds := commands()
	if len(args) == 0 {
		printHelp(stderr, cmds)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			cmd := lookup(cmds, args[1])
			if cmd == nil {
				fmt.Fprintf(stderr, "nsadmin: unknown command %q; run 'nsadmin help' for the list\n", args[1])
				return exitUsage
			}
			printCommandHelp(stdout, cmd)
			return exitOK
		}
		printHelp(stdout, cmds)
		return exitOK
	}
	cmd := lookup(cmds, name)
	if cmd == nil {
		fmt.Fprintf(stderr, "nsadmin: unknown command %q; run 'nsadmin help' for the list\n", name)
		return exitUsage
	}
	in, err := parse(cmd, args[1:], getenv)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(stdout, cmd)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "nsadmin %s: %v; run 'nsadmin help %s'\n", cmd.name, err, cmd.name)
		return exitUsage
	}
	if cmd.all != nil {
		return cmd.all(in, stdout, stderr)
	}
	if cmd.apply != nil {
		return runWrite(cmd, in, stdout, stderr)
	}
	return runRead(cmd, in, stdout, stderr)
}

func lookup(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// input is a parsed command line.
type input struct {
	addrs   []string
	json    bool
	timeout time.Duration
	strs    map[string]string
	ints    map[string]int64
	set     map[string]bool // flags given on the command line
	creds   client.Credentials
}

func (in *input) str(name string) string { return in.strs[name] }
func (in *input) int(name string) int64  { return in.ints[name] }
func (in *input) given(name string) bool { return in.set[name] }

func parse(cmd *command, args []string, getenv func(string) string) (*input, error) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	namesrv := fs.String("n", "", "")
	format := fs.String("o", "table", "")
	timeout := fs.Duration("timeout", defaultTimeout, "")
	accessKey := fs.String("accessKey", "", "")
	secretKey := fs.String("secretKey", "", "")
	strs := make(map[string]*string)
	ints := make(map[string]*int64)
	for _, f := range cmd.flags {
		if f.isInt {
			def, _ := strconv.ParseInt(f.def, 10, 64)
			ints[f.name] = fs.Int64(f.name, def, "")
		} else {
			strs[f.name] = fs.String(f.name, f.def, "")
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	in := &input{strs: map[string]string{}, ints: map[string]int64{}, set: map[string]bool{}, timeout: *timeout}
	fs.Visit(func(f *flag.Flag) { in.set[f.Name] = true })
	switch *format {
	case "table":
	case "json":
		in.json = true
	default:
		return nil, usagef("bad -o %q: want table or json", *format)
	}
	if *timeout <= 0 {
		return nil, usagef("bad -timeout %s: must be positive", *timeout)
	}
	list := *namesrv
	if !in.set["n"] {
		list = getenv("NAMESRV_ADDR")
	}
	addrs, err := splitAddrs(list)
	if err != nil {
		return nil, err
	}
	in.addrs = addrs
	if in.creds, err = credentials(in, *accessKey, *secretKey, getenv); err != nil {
		return nil, err
	}
	for _, f := range cmd.flags {
		if f.isInt {
			in.ints[f.name] = *ints[f.name]
		} else {
			in.strs[f.name] = strings.TrimSpace(*strs[f.name])
		}
		if f.required && !in.set[f.name] {
			return nil, usagef("missing required flag -%s (%s)", f.name, f.arg)
		}
		if f.required && !f.isInt && !f.allowEmpty && in.strs[f.name] == "" {
			return nil, usagef("flag -%s (%s) must not be empty", f.name, f.arg)
		}
		if f.isInt && (in.ints[f.name] < f.min || in.ints[f.name] > f.max) {
			return nil, usagef("bad -%s %d: want %d..%d", f.name, in.ints[f.name], f.min, f.max)
		}
	}
	return in, nil
}

// credentials reads the ACL account that signs every request: the flags,
// else ROCKETMQ_ACCESS_KEY / ROCKETMQ_SECRET_KEY (which keep the secret out
// of the process list). None means unsigned requests.
func credentials(in *input, ak, sk string, getenv func(string) string) (client.Credentials, error) {
	if !in.set["accessKey"] {
		ak = getenv("ROCKETMQ_ACCESS_KEY")
	}
	if !in.set["secretKey"] {
		sk = getenv("ROCKETMQ_SECRET_KEY")
	}
	ak, sk = strings.TrimSpace(ak), strings.TrimSpace(sk)
	if (ak == "") != (sk == "") {
		return client.Credentials{}, usagef("-accessKey and -secretKey (or ROCKETMQ_ACCESS_KEY and ROCKETMQ_SECRET_KEY) go together")
	}
	return client.Credentials{AccessKey: ak, SecretKey: sk}, nil
}

// splitAddrs reads mqadmin's -n syntax: host:port entries separated by ';'.
func splitAddrs(list string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(list, ";") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, usagef("bad -n address %q: want host:port", a)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, usagef("missing required flag -n (NameServer addresses, ';'-separated; or set NAMESRV_ADDR)")
	}
	return addrs, nil
}

// errUnreachable marks a failure to talk to a NameServer at all (dial,
// lost connection, deadline), as opposed to an answer with an error code.
type errUnreachable struct{ err error }

// Error keeps only the innermost network error ("connect: connection
// refused"): the address is already in the message around it.
func (e *errUnreachable) Error() string {
	var op *net.OpError
	switch {
	case errors.Is(e.err, context.DeadlineExceeded):
		return "unreachable: no answer before the deadline (-timeout)"
	case errors.As(e.err, &op) && op.Err != nil:
		return "unreachable: " + op.Err.Error()
	}
	return "unreachable: " + e.err.Error()
}
func (e *errUnreachable) Unwrap() error { return e.err }

// withClient dials addr and runs fn with a deadline of in.timeout for both.
// Errors that are not a server's answer come back as *errUnreachable.
func withClient(addr string, in *input, fn func(ctx context.Context, c *client.Client) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), in.timeout)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return &errUnreachable{err}
	}
	defer c.Close()
	c.SetCredentials(in.creds)
	err = fn(ctx, c)
	var re *client.ResponseError
	if err != nil && !errors.As(err, &re) && isTransport(err) {
		return &errUnreachable{err}
	}
	return err
}

// isTransport tells connection-level failures from malformed answers.
func isTransport(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, client.ErrClosed) ||
		errors.Is(err, net.ErrClosed)
}

// describe renders err on one line: a server refusal as its code, name and
// remark, anything else as it is.
func describe(err error) string {
	var re *client.ResponseError
	if errors.As(err, &re) {
		remark := strings.Join(strings.Fields(re.Remark), " ")
		if remark == "" {
			remark = "(no remark)"
		}
		return fmt.Sprintf("error code %d (%s): %s", re.Code, responseCodeName(re.Code), remark)
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func responseCodeName(code int32) string {
	switch code {
	case codec.SystemError:
		return "SYSTEM_ERROR"
	case codec.SystemBusy:
		return "SYSTEM_BUSY"
	case codec.RequestCodeNotSupported:
		return "REQUEST_CODE_NOT_SUPPORTED"
	case codec.NoPermission:
		return "NO_PERMISSION"
	case codec.TopicNotExist:
		return "TOPIC_NOT_EXIST"
	case codec.QueryNotFound:
		return "QUERY_NOT_FOUND"
	case codec.GoAway:
		return "GO_AWAY"
	}
	return "UNKNOWN"
}

// runRead asks the first NameServer that answers. An unreachable one is
// skipped; an error answer is final (the next server would most likely say
// the same, and silently asking another could hide a real problem).
func runRead(cmd *command, in *input, stdout, stderr io.Writer) int {
	var unreachable []string
	for _, addr := range in.addrs {
		var out *output
		err := withClient(addr, in, func(ctx context.Context, c *client.Client) error {
			var err error
			out, err = cmd.read(ctx, c, in)
			return err
		})
		var ue *errUnreachable
		if errors.As(err, &ue) {
			unreachable = append(unreachable, addr+": "+strings.TrimPrefix(ue.Error(), "unreachable: "))
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "nsadmin %s: %s: %s\n", cmd.name, addr, describe(err))
			return exitFail
		}
		if err := out.write(stdout, in.json); err != nil {
			fmt.Fprintf(stderr, "nsadmin %s: write output: %v\n", cmd.name, err)
			return exitFail
		}
		return exitOK
	}
	fmt.Fprintf(stderr, "nsadmin %s: no NameServer reachable: %s\n", cmd.name, strings.Join(unreachable, "; "))
	return exitFail
}

// writeResult is one NameServer's answer to a write.
type writeResult struct {
	Namesrv    string `json:"namesrv"`
	OK         bool   `json:"ok"`
	TopicCount *int   `json:"topicCount,omitempty"`
	Code       *int32 `json:"code,omitempty"`
	Error      string `json:"error,omitempty"`
}

// runWrite sends the change to every NameServer in the list, as mqadmin
// does: each NameServer keeps its own state, so a change made on only one of
// them would make clients see different routes depending on which they ask.
// A failure on one address does not stop the others.
func runWrite(cmd *command, in *input, stdout, stderr io.Writer) int {
	results := make([]writeResult, 0, len(in.addrs))
	failed := 0
	for _, addr := range in.addrs {
		r := writeResult{Namesrv: addr, OK: true}
		err := withClient(addr, in, func(ctx context.Context, c *client.Client) error {
			n, err := cmd.apply(ctx, c, in)
			if err == nil && n >= 0 {
				r.TopicCount = &n
			}
			return err
		})
		if err != nil {
			failed++
			r.OK = false
			r.Error = describe(err)
			var re *client.ResponseError
			if errors.As(err, &re) {
				code := re.Code
				r.Code = &code
			}
			fmt.Fprintf(stderr, "nsadmin %s: %s: %s\n", cmd.name, addr, r.Error)
		}
		results = append(results, r)
	}
	if err := writeResults(stdout, cmd, results, in.json); err != nil {
		fmt.Fprintf(stderr, "nsadmin %s: write output: %v\n", cmd.name, err)
		return exitFail
	}
	if failed > 0 {
		return exitFail
	}
	return exitOK
}
