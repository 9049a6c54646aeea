// Help text, aligned tables and the report of a write sent to every
// NameServer.

package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// printCommonFlags writes the help rows of the flags every command takes.
func printCommonFlags(tw io.Writer) {
	for _, f := range [...][2]string{
		{"-n, --namesrvAddr addrs", "NameServer addresses host:port, ';'-separated (default: $NAMESRV_ADDR)"},
		{"-o format", "output: table (default) or json"},
		{"-timeout d", "deadline per NameServer for connect and answer (default 3s)"},
		{"-accessKey ak", "sign requests with this ACL account (default: $ROCKETMQ_ACCESS_KEY)"},
		{"-secretKey sk", "its secret key (default: $ROCKETMQ_SECRET_KEY, which keeps it out of ps)"},
		{"-strictSign", "sign in rocketns's strict scheme (code, time and nonce signed; rocketns only)"},
		{"", "(default: $ROCKETMQ_STRICT_SIGN)"},
		{"-tls", "connect over TLS, for tls.server.mode=enforcing (default: $ROCKETMQ_TLS)"},
		{"-tlsCA file", "PEM CAs to verify the NameServer's certificate against (default: $ROCKETMQ_TLS_CA;"},
		{"", "without it the system's roots)"},
		{"-tlsCert file", "PEM client certificate, for tls.server.need.client.auth (default: $ROCKETMQ_TLS_CERT)"},
		{"-tlsKey file", "its PEM private key (default: $ROCKETMQ_TLS_KEY)"},
		{"-tlsInsecure", "INSECURE: encrypt but do not verify the NameServer's certificate, so anyone"},
		{"", "on the path can pose as it; only for a test-mode server (default: $ROCKETMQ_TLS_INSECURE)"},
	} {
		fmt.Fprintf(tw, "  %s\t%s\n", f[0], f[1])
	}
}

func printHelp(w io.Writer, cmds []*command) {
	fmt.Fprint(w, `nsadmin administers RocketMQ NameServers (rocketns or Java) with mqadmin's command
and flag names.

Usage:
  nsadmin <command> -n 'host:port[;host:port...]' [flags]
  nsadmin <controller command> -a 'host:port[;host:port...]' [flags]
  nsadmin help [command]
  nsadmin <command> -h
  nsadmin --version

Reads ask the first reachable NameServer in -n. Writes go to every NameServer in -n,
as mqadmin's do: each NameServer keeps its own state. diff asks them all and
compares.

Commands:
`)
	tw := newTable(w)
	for _, c := range cmds {
		kind := "read"
		switch {
		case c.apply != nil:
			kind = "write"
		case c.all != nil:
			kind = "check"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.name, kind, c.synopsis)
	}
	tw.Flush()
	printControllerHelp(w) // controller.go
	fmt.Fprint(w, "\nCommon flags:\n")
	tw = newTable(w)
	printCommonFlags(tw)
	tw.Flush()
	fmt.Fprint(w, `
Table output keeps one row per line and each name in one field: a name (topic,
broker, cluster, address, key) that is empty or holds a space, a line break, a tab
or any other control or invisible character is printed Go-quoted ("a\nb"), and so
is a value holding such a character other than a space, or anything starting with a
double quote. -o json prints names as they are.

Every flag has mqadmin's long name too (--namesrvAddr, --topic, --brokerName,
--clusterName, --namespace, --key, --value, ...); "nsadmin help <command>" lists
them. A flag given with an empty value (-c "" from an unset variable) is a bad
command line, never the same as leaving the flag out; only -v takes "" as a value.

Exit status: 0 on success; 1 when a NameServer is unreachable or answers with an
error (for writes: when any of them does; for diff: also when they differ); 2 for
a bad command line.
`)
}

func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "nsadmin %s: %s\n\n%s\n\n", c.name, c.synopsis, c.about)
	switch {
	case c.all != nil:
		fmt.Fprintln(w, "Check: asks every NameServer in -n and compares their answers.")
	case c.apply != nil:
		fmt.Fprintln(w, "Write: sent to every NameServer in -n; the command fails if any of them fails.")
	default:
		fmt.Fprintln(w, "Read: answered by the first reachable NameServer in -n.")
	}
	var usage strings.Builder
	usage.WriteString("nsadmin " + c.name + " -n addrs")
	for _, f := range c.flags {
		spec := "-" + f.name
		if len(f.name) > 1 {
			spec = "-" + spec
		}
		if !f.isBool {
			spec += " " + f.arg
		}
		if f.required {
			fmt.Fprintf(&usage, " %s", spec)
		} else {
			fmt.Fprintf(&usage, " [%s]", spec)
		}
	}
	usage.WriteString(" [-o json]")
	fmt.Fprintf(w, "\nUsage:\n  %s\n\nFlags:\n", usage.String())
	tw := newTable(w)
	for _, f := range c.flags {
		note := ""
		switch {
		case f.required:
			note = " (required)"
		case f.def != "":
			note = " (default " + f.def + ")"
		}
		names := "-" + f.name
		if len(f.name) > 1 {
			names = "-" + names // a long-only flag
		}
		if f.long != "" {
			names += ", --" + f.long
		}
		if !f.isBool {
			names += " " + f.arg
		}
		fmt.Fprintf(tw, "  %s\t%s%s\n", names, f.usage, note)
	}
	printCommonFlags(tw)
	tw.Flush()
	fmt.Fprintf(w, "\nJSON output (-o json):\n  %s\n", strings.ReplaceAll(c.jsonDoc, "<name>", c.name))
}

// writeResults reports a write, one row per NameServer. Failures are also
// on stderr, so a script reading only the exit code and stderr loses
// nothing.
func writeResults(w io.Writer, c *command, results []writeResult, asJSON bool) error {
	if asJSON {
		return writeJSONTo(w, struct {
			Command string        `json:"command"`
			Results []writeResult `json:"results"`
		}{c.name, results})
	}
	counted := false
	for _, r := range results {
		counted = counted || r.TopicCount != nil
	}
	tw := newTable(w)
	if counted {
		fmt.Fprintln(tw, "#NameServer\t#Topics\t#Result")
	} else {
		fmt.Fprintln(tw, "#NameServer\t#Result")
	}
	for _, r := range results {
		res := "OK"
		switch {
		case !r.OK:
			res = r.Error
		case r.BrokerNotFound:
			res = "no such broker"
		}
		if counted {
			n := "-"
			if r.TopicCount != nil {
				n = fmt.Sprint(*r.TopicCount)
			}
			// The count goes before the result so that a long error
			// text does not push it out of its column.
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name(r.Namesrv), n, res)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\n", name(r.Namesrv), res)
	}
	return tw.Flush()
}
