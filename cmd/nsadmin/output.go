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

// printFlags writes the help rows of flags: names, value and usage, a note
// of the default and the variable that stands in, on one row or more.
func printFlags(tw io.Writer, flags []flagSpec) {
	for _, f := range flags {
		names := "-" + f.short
		switch {
		case f.short == "":
			names = "--" + f.long
		case f.long != "":
			names += ", --" + f.long
		}
		if f.kind != switchFlag {
			names += " " + f.arg
		}
		var notes []string
		switch {
		case f.required && f.env == "":
			notes = append(notes, "required")
		case f.def != "":
			notes = append(notes, "default "+f.def)
		}
		if f.env != "" {
			notes = append(notes, "default: $"+f.env)
		}
		usage := f.usage
		if len(notes) > 0 {
			if !strings.HasSuffix(usage, "\n") {
				usage += " "
			}
			usage += "(" + strings.Join(notes, "; ") + ")"
		}
		for i, line := range strings.Split(usage, "\n") {
			if i > 0 {
				names = ""
			}
			fmt.Fprintf(tw, "  %s\t%s\n", names, line)
		}
	}
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, `nsadmin administers RocketMQ NameServers and 5.x controllers (rocketns or Java) with
mqadmin's command and flag names.

Usage:
  nsadmin <command> -n 'host:port[;host:port...]' [flags]
  nsadmin <controller command> -a 'host:port[;host:port...]' [flags]
  nsadmin help [command]
  nsadmin <command> -h
  nsadmin --version

Reads ask the first reachable NameServer in -n. Writes go to every NameServer in -n,
as mqadmin's do: each NameServer keeps its own state. diff asks them all and
compares. Controller commands talk to the controller nodes of -a (and, where they
list -n, the NameServers), and print their output and errors as mqadmin does.

Commands:
`)
	tw := newTable(w)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.name, c.kind(), c.synopsis)
	}
	tw.Flush()
	fmt.Fprint(w, "\nCommon flags:\n")
	tw = newTable(w)
	printFlags(tw, commonFlags)
	tw.Flush()
	fmt.Fprint(w, `
Table output keeps one row per line and each name in one field: a name (topic,
broker, cluster, address, key) that is empty or holds a space, a line break, a tab
or any other control or invisible character is printed Go-quoted ("a\nb"), and so
is a value holding such a character other than a space, or anything starting with a
double quote. -o json prints names as they are.

Every flag has mqadmin's long name too (--namesrvAddr, --topic, --brokerName,
--clusterName, --namespace, --key, --value, ...); "nsadmin help <command>" lists
them. Each name takes one dash or two, and its value after a space or '='. A flag
may be given once. A flag given with an empty value (-c "" from an unset variable)
is a bad command line, never the same as leaving the flag out; only -v takes "" as
a value.

Exit status: 0 on success; 1 when a server is unreachable or answers with an error
(for writes: when any of them does; for diff: also when they differ); 2 for a bad
command line.
`)
}

// where says where a command of each kind goes, in its help.
var where = map[string]string{
	"read":  "Read: answered by the first reachable NameServer in -n.",
	"write": "Write: sent to every NameServer in -n; the command fails if any of them fails.",
	"check": "Check: asks every NameServer in -n and compares their answers.",
	"controller": "Controller: a refusal is printed as mqadmin prints it (CODE: n  DESC: remark) and the\n" +
		"exit status is then 1.",
}

func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "nsadmin %s: %s\n\n%s\n\n%s\n", c.name, c.synopsis, c.about, where[c.kind()])
	var usage strings.Builder
	usage.WriteString("nsadmin " + c.name)
	flags := c.allFlags()
	for _, f := range flags[:len(flags)-len(commonFlags)] {
		spec := "--" + f.long
		if f.short != "" {
			spec = "-" + f.short
		}
		if f.kind != switchFlag {
			spec += " " + f.arg
		}
		if !f.required {
			spec = "[" + spec + "]"
		}
		usage.WriteString(" " + spec)
	}
	usage.WriteString(" [-o json]")
	fmt.Fprintf(w, "\nUsage:\n  %s\n\nFlags:\n", usage.String())
	tw := newTable(w)
	printFlags(tw, flags)
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
