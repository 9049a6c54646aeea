// main.go holds the one command line parser and dispatch: a command's
// flags and the ones every command takes, the environment that stands in
// for them, the exit codes, and the fan-out over the -n address list.

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/client"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // a server was unreachable or refused the request
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
	if len(args) == 0 {
		printHelp(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, buildinfo.String("nsadmin"))
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(args) == 1 || name != "help" {
			printHelp(stdout)
			return exitOK
		}
		name = args[1]
	}
	cmd := lookup(name)
	if cmd == nil {
		hint := ""
		for _, c := range commands() {
			if strings.EqualFold(c.name, name) {
				hint = " (did you mean " + c.name + "?)"
			}
		}
		fmt.Fprintf(stderr, "nsadmin: unknown command %q%s; run 'nsadmin help' for the list\n", name, hint)
		return exitUsage
	}
	if args[0] == "help" {
		printCommandHelp(stdout, cmd)
		return exitOK
	}
	in, err := parse(cmd, args[1:], getenv)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(stdout, cmd)
		return exitOK
	}
	if err != nil {
		return usageFailed(stderr, cmd, err)
	}
	in.out = stdout
	switch {
	case cmd.all != nil:
		return cmd.all(in, stdout, stderr)
	case cmd.apply != nil:
		return runWrite(cmd, in, stdout, stderr)
	case cmd.ctl != nil:
		return runControllerCommand(cmd, in, stdout, stderr) // controller.go
	}
	return runRead(cmd, in, stdout, stderr)
}

// usageFailed reports a bad command line, the same way for every command.
func usageFailed(stderr io.Writer, cmd *command, err error) int {
	fmt.Fprintf(stderr, "nsadmin %s: %v; run 'nsadmin help %s'\n", cmd.name, err, cmd.name)
	return exitUsage
}

// input is a parsed command line. strs, ints and bools hold every flag's
// value (given, else from its variable, else its default), set the flags
// given on the command line.
type input struct {
	addrs   []string // -n of a NameServer command
	json    bool
	timeout time.Duration
	strs    map[string]string
	ints    map[string]int64
	bools   map[string]bool
	set     map[string]bool
	creds   client.Credentials
	tls     *tls.Config // nil: plaintext
	getenv  func(string) string
	out     io.Writer // a controller command's table output
}

func (in *input) str(key string) string { return in.strs[key] }
func (in *input) int(key string) int64  { return in.ints[key] }
func (in *input) on(key string) bool    { return in.bools[key] }
func (in *input) given(key string) bool { return in.set[key] }

// flagValue reads one flag's value into in under the flag's key, from
// either of its names; a second value is a usage error (mqadmin keeps the
// first, Go's flag package the last: neither can be what was meant).
type flagValue struct {
	f   *flagSpec
	in  *input
	dup *error
}

func (v *flagValue) String() string   { return "" }
func (v *flagValue) IsBoolFlag() bool { return v.f.kind == switchFlag }

func (v *flagValue) Set(s string) error {
	k := v.f.key()
	if v.in.set[k] {
		*v.dup = usagef("flag %s is given twice: give it once", v.f.names())
		return *v.dup
	}
	v.in.set[k] = true
	return v.in.store(v.f, s)
}

// store sets f's value from s, a flag's or a variable's text.
func (in *input) store(f *flagSpec, s string) error {
	k := f.key()
	switch f.kind {
	case intFlag:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64)
		if err != nil {
			return errors.New("want an integer")
		}
		in.ints[k] = n
	case switchFlag:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return errors.New("want true or false")
		}
		in.bools[k] = b
	default:
		in.strs[k] = strings.TrimSpace(s)
	}
	return nil
}

// names is how help and errors name f: -t/--topic.
func (f *flagSpec) names() string {
	switch {
	case f.short == "":
		return "--" + f.long
	case f.long == "":
		return "-" + f.short
	}
	return "-" + f.short + "/--" + f.long
}

// parse reads a command's command line: its flags under both their names,
// the ones every command takes, and the variables that stand in for them.
func parse(cmd *command, args []string, getenv func(string) string) (*input, error) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	in := &input{strs: map[string]string{}, ints: map[string]int64{}, bools: map[string]bool{},
		set: map[string]bool{}, getenv: getenv}
	var dup error
	specs := cmd.allFlags()
	for i := range specs {
		f := &specs[i]
		_ = in.store(f, f.def)
		v := &flagValue{f: f, in: in, dup: &dup}
		for _, name := range []string{f.short, f.long} {
			if name != "" {
				fs.Var(v, name, "")
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		if dup != nil {
			return nil, dup
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	for i := range specs {
		if err := in.check(&specs[i]); err != nil {
			return nil, err
		}
	}
	switch in.str("o") {
	case "table":
	case "json":
		in.json = true
	default:
		return nil, usagef("bad -o %q: want table or json", in.str("o"))
	}
	var err error
	if in.timeout, err = time.ParseDuration(in.str("timeout")); err != nil || in.timeout <= 0 {
		return nil, usagef("bad -timeout %q: want a positive duration such as 3s", in.str("timeout"))
	}
	if cmd.ctl == nil {
		if in.addrs, err = in.namesrvAddrs(); err != nil {
			return nil, err
		}
	}
	if in.creds, err = credentials(in); err != nil {
		return nil, err
	}
	if in.tls, err = tlsConfig(in); err != nil {
		return nil, err
	}
	return in, nil
}

// check applies f's variable when f was not given, then f's rules: given
// when required, not blank unless "" is a value, in range.
func (in *input) check(f *flagSpec) error {
	k, fromEnv := f.key(), false
	if f.env != "" && !in.set[k] {
		if v := strings.TrimSpace(in.getenv(f.env)); v != "" {
			if err := in.store(f, v); err != nil {
				return usagef("bad %s %q: %v", f.env, v, err)
			}
			fromEnv = true
		}
	}
	switch {
	case f.required && !in.set[k] && !fromEnv:
		if f.env != "" {
			return usagef("missing required flag -%s (%s), or set %s", k, f.arg, f.env)
		}
		return usagef("missing required flag -%s (%s)", k, f.arg)
	case !in.set[k]:
	case f.kind == textFlag && in.str(k) == "" && !f.allowEmpty:
		// `-c "$CLUSTER"` with the variable unset: never a quiet "leave
		// it out", which for deleteTopic or the ACL keys means something
		// else entirely.
		if f.required {
			return usagef("flag -%s (%s) must not be empty", k, f.arg)
		}
		return usagef("flag -%s (%s) is given but empty: give a value or leave the flag out", k, f.arg)
	case f.kind == intFlag && (in.int(k) < f.min || in.int(k) > f.max):
		return usagef("bad -%s %d: want %d..%d", k, in.int(k), f.min, f.max)
	case f.addrs:
		if _, err := splitAddrs(in.str(k), k); errors.Is(err, errNoAddr) {
			return usagef("flag -%s lists no address", k)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// namesrvAddrs is -n, else NAMESRV_ADDR.
func (in *input) namesrvAddrs() ([]string, error) {
	addrs, err := splitAddrs(in.str("n"), "n")
	if errors.Is(err, errNoAddr) {
		return nil, usagef("missing required flag -n (addrs), or set NAMESRV_ADDR")
	}
	return addrs, err
}

// errNoAddr: an address list names no address.
var errNoAddr = usagef("no address")

// splitAddrs reads mqadmin's address list syntax (-n, -a): host:port
// entries separated by ';'.
func splitAddrs(list, flagName string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(list, ";") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, usagef("bad -%s address %q: want host:port", flagName, a)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, errNoAddr
	}
	return addrs, nil
}

// credentials is the ACL account that signs every request (-accessKey,
// -secretKey, or their variables, which keep the secret out of the process
// list); none means unsigned requests. -strictSign signs in rocketns's
// strict scheme.
func credentials(in *input) (client.Credentials, error) {
	ak, sk, strict := in.str("accessKey"), in.str("secretKey"), in.on("strictSign")
	if (ak == "") != (sk == "") {
		return client.Credentials{}, usagef("-accessKey and -secretKey (or ROCKETMQ_ACCESS_KEY and ROCKETMQ_SECRET_KEY) go together")
	}
	if strict && ak == "" {
		return client.Credentials{}, usagef("-strictSign needs -accessKey and -secretKey (or ROCKETMQ_ACCESS_KEY and ROCKETMQ_SECRET_KEY)")
	}
	return client.Credentials{AccessKey: ak, SecretKey: sk, Strict: strict}, nil
}

// tlsConfig builds the TLS client configuration, nil for plaintext. A TLS
// option given on the command line without TLS switched on is a usage
// error (it would be silently ignored); from the environment it is
// ignored, so that ROCKETMQ_TLS_CA can stay set for the servers that need
// it.
func tlsConfig(in *input) (*tls.Config, error) {
	if !in.on("tls") {
		for _, name := range []string{"tlsCA", "tlsInsecure", "tlsCert", "tlsKey"} {
			if in.set[name] && (name != "tlsInsecure" || in.on(name)) {
				return nil, usagef("-%s needs -tls (or ROCKETMQ_TLS=true)", name)
			}
		}
		return nil, nil
	}
	ca, insecure, cert, key := in.str("tlsCA"), in.on("tlsInsecure"), in.str("tlsCert"), in.str("tlsKey")
	// A flag on the command line beats the environment's opposite choice.
	switch {
	case in.set["tlsInsecure"] && !in.set["tlsCA"] && insecure:
		ca = ""
	case in.set["tlsCA"] && !in.set["tlsInsecure"]:
		insecure = false
	}
	if insecure && ca != "" {
		return nil, usagef("-tlsInsecure skips the check -tlsCA is for: give one of them")
	}
	if (cert == "") != (key == "") {
		return nil, usagef("-tlsCert and -tlsKey (or ROCKETMQ_TLS_CERT and ROCKETMQ_TLS_KEY) go together")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, usagef("bad -tlsCA: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usagef("bad -tlsCA %s: no PEM certificate in it", ca)
		}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, usagef("bad -tlsCert/-tlsKey: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// dial connects to addr over TLS or plaintext, as the command line says.
func dial(ctx context.Context, addr string, in *input) (*client.Client, error) {
	if in.tls != nil {
		return client.DialTLS(ctx, addr, in.tls)
	}
	return client.Dial(ctx, addr)
}

// errUnreachable marks a failure to talk to a server at all (dial, lost
// connection, deadline), as opposed to an answer with an error code.
// plain: the connection was plaintext. addr is the address tried, role
// what was expected there ("NameServer", "controller", "broker ..."), for
// the commands whose output does not name the address around the error.
type errUnreachable struct {
	err        error
	plain      bool
	addr, role string
}

func unreachable(err error, in *input) *errUnreachable {
	return &errUnreachable{err: err, plain: in.tls == nil}
}

// connectText is the error in the words of Java's RemotingConnectException
// ("connect to <addr> failed"), with what was expected at the address and
// why it failed.
func (e *errUnreachable) connectText() string {
	role := e.role
	if role == "" {
		role = "server"
	}
	return fmt.Sprintf("connect to %s failed (%s: %s)", e.addr, role, strings.TrimPrefix(e.Error(), "unreachable: "))
}

// Error keeps only the innermost network error ("connect: connection
// refused"): the address is already in the message around it.
func (e *errUnreachable) Error() string {
	var op *net.OpError
	msg := e.err.Error()
	switch {
	case errors.Is(e.err, context.DeadlineExceeded):
		return "unreachable: no answer before the deadline (-timeout)"
	case errors.As(e.err, &op) && op.Err != nil:
		msg = op.Err.Error()
	}
	// All a plaintext client sees of tls.server.mode=enforcing.
	if e.plain && (errors.Is(e.err, io.EOF) || errors.Is(e.err, syscall.ECONNRESET)) {
		msg += " (if the NameServer only accepts TLS, add -tls)"
	}
	return "unreachable: " + msg
}
func (e *errUnreachable) Unwrap() error { return e.err }

// withClient dials addr and runs fn with a deadline of in.timeout for both.
// Errors that are not a server's answer come back as *errUnreachable.
func withClient(addr string, in *input, fn func(ctx context.Context, c *client.Client) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), in.timeout)
	defer cancel()
	c, err := dial(ctx, addr, in)
	if err != nil {
		ue := unreachable(err, in)
		ue.addr = addr
		return ue
	}
	defer c.Close()
	c.SetCredentials(in.creds)
	err = fn(ctx, c)
	var re *client.ResponseError
	if err != nil && !errors.As(err, &re) && isTransport(err) {
		ue := unreachable(err, in)
		ue.addr = addr
		return ue
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
		return fmt.Sprintf("error code %d (%s): %s", re.Code, codec.ResponseCodeName(re.Code), remark)
	}
	return strings.Join(strings.Fields(err.Error()), " ")
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
	// BrokerNotFound: the NameServer has no broker of the -b name (205,
	// 327), so nothing could change there.
	BrokerNotFound bool `json:"brokerNotFound,omitempty"`
}

// runWrite sends the change to every NameServer in the list, as mqadmin
// does: each NameServer keeps its own state, so a change made on only one of
// them would make clients see different routes depending on which they ask.
// A failure on one address does not stop the others.
func runWrite(cmd *command, in *input, stdout, stderr io.Writer) int {
	results := make([]writeResult, 0, len(in.addrs))
	failed, notFound := 0, 0
	for _, addr := range in.addrs {
		r := writeResult{Namesrv: addr, OK: true}
		err := withClient(addr, in, func(ctx context.Context, c *client.Client) error {
			n, err := cmd.apply(ctx, c, in)
			if err == nil && n >= 0 {
				r.TopicCount = &n
			}
			return err
		})
		if errors.Is(err, errNoSuchBroker) {
			r.BrokerNotFound = true
			notFound++
			fmt.Fprintf(stderr, "nsadmin %s: %s: no broker named %s is registered there\n", cmd.name, addr, name(in.str("b")))
			err = nil
		}
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
	if notFound == len(in.addrs) {
		fmt.Fprintf(stderr, "nsadmin %s: no broker named %s on any NameServer: nothing changed (clusterList lists the broker names)\n", cmd.name, name(in.str("b")))
		return exitFail
	}
	return exitOK
}
