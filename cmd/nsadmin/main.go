// main.go holds argument parsing, help, the fan-out over the -n address
// list and the exit codes.

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
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, buildinfo.String("nsadmin"))
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			if cc := lookupController(args[1]); cc != nil { // controller.go
				printControllerCommandHelp(stdout, cc)
				return exitOK
			}
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
	if cc := lookupController(name); cc != nil { // controller.go
		return runControllerCommand(cc, args[1:], stdout, stderr, getenv)
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
	tls     *tls.Config // nil: plaintext
}

func (in *input) str(name string) string { return in.strs[name] }
func (in *input) int(name string) int64  { return in.ints[name] }
func (in *input) given(name string) bool { return in.set[name] }

func parse(cmd *command, args []string, getenv func(string) string) (*input, error) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	namesrv := fs.String("n", "", "")
	fs.StringVar(namesrv, "namesrvAddr", "", "")
	format := fs.String("o", "table", "")
	timeout := fs.Duration("timeout", defaultTimeout, "")
	accessKey := fs.String("accessKey", "", "")
	secretKey := fs.String("secretKey", "", "")
	strictSign := fs.Bool("strictSign", false, "")
	var tf tlsFlags
	fs.BoolVar(&tf.on, "tls", false, "")
	fs.StringVar(&tf.ca, "tlsCA", "", "")
	fs.BoolVar(&tf.insecure, "tlsInsecure", false, "")
	fs.StringVar(&tf.cert, "tlsCert", "", "")
	fs.StringVar(&tf.key, "tlsKey", "", "")
	strs := make(map[string]*string)
	ints := make(map[string]*int64)
	bools := make(map[string]*bool)
	// canonical maps mqadmin's long names (--topic) to the short ones (-t).
	canonical := map[string]string{"namesrvAddr": "n"}
	for _, f := range cmd.flags {
		names := []string{f.name}
		if f.long != "" {
			names = append(names, f.long)
			canonical[f.long] = f.name
		}
		switch {
		case f.isInt:
			def, _ := strconv.ParseInt(f.def, 10, 64)
			ints[f.name] = new(int64)
			for _, n := range names {
				fs.Int64Var(ints[f.name], n, def, "")
			}
		case f.isBool:
			bools[f.name] = new(bool)
			for _, n := range names {
				fs.BoolVar(bools[f.name], n, false, "")
			}
		default:
			strs[f.name] = new(string)
			for _, n := range names {
				fs.StringVar(strs[f.name], n, f.def, "")
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	in := &input{strs: map[string]string{}, ints: map[string]int64{}, set: map[string]bool{}, timeout: *timeout}
	fs.Visit(func(f *flag.Flag) {
		if c, ok := canonical[f.Name]; ok {
			in.set[c] = true
			return
		}
		in.set[f.Name] = true
	})
	// `-c "$CLUSTER"` with the variable unset: a given but blank value is
	// a mistake, never a quiet "leave it out" (which for deleteTopic or
	// the ACL keys means something else entirely).
	for _, name := range []string{"accessKey", "secretKey", "tlsCA", "tlsCert", "tlsKey"} {
		if in.set[name] && strings.TrimSpace(fs.Lookup(name).Value.String()) == "" {
			return nil, usagef("flag -%s is given but empty: give a value or leave the flag out", name)
		}
	}
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
	if in.creds, err = credentials(in, *accessKey, *secretKey, *strictSign, getenv); err != nil {
		return nil, err
	}
	if in.tls, err = tf.config(in, getenv); err != nil {
		return nil, err
	}
	for _, f := range cmd.flags {
		switch {
		case f.isBool:
			// A switch counts as given only when on: -c=false is off.
			in.set[f.name] = *bools[f.name]
			continue
		case f.isInt:
			in.ints[f.name] = *ints[f.name]
		default:
			in.strs[f.name] = strings.TrimSpace(*strs[f.name])
		}
		if f.required && !in.set[f.name] {
			return nil, usagef("missing required flag -%s (%s)", f.name, f.arg)
		}
		if !f.isInt && !f.allowEmpty && in.set[f.name] && in.strs[f.name] == "" {
			if f.required {
				return nil, usagef("flag -%s (%s) must not be empty", f.name, f.arg)
			}
			return nil, usagef("flag -%s (%s) is given but empty: give a value or leave the flag out", f.name, f.arg)
		}
		if f.isInt && (in.ints[f.name] < f.min || in.ints[f.name] > f.max) {
			return nil, usagef("bad -%s %d: want %d..%d", f.name, in.ints[f.name], f.min, f.max)
		}
	}
	return in, nil
}

// credentials reads the ACL account that signs every request: the flags,
// else ROCKETMQ_ACCESS_KEY / ROCKETMQ_SECRET_KEY (which keep the secret out
// of the process list). None means unsigned requests. -strictSign (or
// ROCKETMQ_STRICT_SIGN=true) signs in rocketns's strict scheme.
func credentials(in *input, ak, sk string, strict bool, getenv func(string) string) (client.Credentials, error) {
	if !in.set["strictSign"] {
		v := strings.TrimSpace(getenv("ROCKETMQ_STRICT_SIGN"))
		strict = v == "1" || strings.EqualFold(v, "true")
	}
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
	if strict && ak == "" {
		return client.Credentials{}, usagef("-strictSign needs -accessKey and -secretKey (or ROCKETMQ_ACCESS_KEY and ROCKETMQ_SECRET_KEY)")
	}
	return client.Credentials{AccessKey: ak, SecretKey: sk, Strict: strict}, nil
}

// tlsFlags are the command line's TLS settings before the environment
// fills in what was not given.
type tlsFlags struct {
	on, insecure  bool
	ca, cert, key string
}

// config builds the TLS client configuration, nil for plaintext. Each flag
// not given falls back to its ROCKETMQ_TLS* variable. A TLS option given on
// the command line without TLS switched on is a usage error (it would be
// silently ignored); from the environment it is ignored, so that
// ROCKETMQ_TLS_CA can stay set for the servers that need it.
func (f tlsFlags) config(in *input, getenv func(string) string) (*tls.Config, error) {
	envBool := func(name string, v *bool) error {
		s := strings.TrimSpace(getenv(name))
		if s == "" {
			return nil
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return usagef("bad %s %q: want true or false", name, s)
		}
		*v = b
		return nil
	}
	envStr := func(name string, v *string) {
		*v = strings.TrimSpace(getenv(name))
	}
	if !in.set["tls"] {
		if err := envBool("ROCKETMQ_TLS", &f.on); err != nil {
			return nil, err
		}
	}
	if !f.on {
		for _, name := range []string{"tlsCA", "tlsInsecure", "tlsCert", "tlsKey"} {
			if in.set[name] && (name != "tlsInsecure" || f.insecure) {
				return nil, usagef("-%s needs -tls (or ROCKETMQ_TLS=true)", name)
			}
		}
		return nil, nil
	}
	if !in.set["tlsInsecure"] {
		if err := envBool("ROCKETMQ_TLS_INSECURE", &f.insecure); err != nil {
			return nil, err
		}
	}
	for _, e := range []struct {
		flag, env string
		v         *string
	}{{"tlsCA", "ROCKETMQ_TLS_CA", &f.ca}, {"tlsCert", "ROCKETMQ_TLS_CERT", &f.cert}, {"tlsKey", "ROCKETMQ_TLS_KEY", &f.key}} {
		if in.set[e.flag] {
			*e.v = strings.TrimSpace(*e.v)
		} else {
			envStr(e.env, e.v)
		}
	}
	// A flag on the command line beats the environment's opposite choice.
	switch {
	case in.set["tlsInsecure"] && !in.set["tlsCA"] && f.insecure:
		f.ca = ""
	case in.set["tlsCA"] && !in.set["tlsInsecure"]:
		f.insecure = false
	}
	if f.insecure && f.ca != "" {
		return nil, usagef("-tlsInsecure skips the check -tlsCA is for: give one of them")
	}
	if (f.cert == "") != (f.key == "") {
		return nil, usagef("-tlsCert and -tlsKey (or ROCKETMQ_TLS_CERT and ROCKETMQ_TLS_KEY) go together")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.insecure}
	if f.ca != "" {
		pem, err := os.ReadFile(f.ca)
		if err != nil {
			return nil, usagef("bad -tlsCA: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usagef("bad -tlsCA %s: no PEM certificate in it", f.ca)
		}
	}
	if f.cert != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
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
		return nil, usagef("missing required flag -n/--namesrvAddr (NameServer addresses, ';'-separated; or set NAMESRV_ADDR)")
	}
	return addrs, nil
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
