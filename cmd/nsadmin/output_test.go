// Tests that names from the NameServer cannot forge rows or fields of the
// human output.

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
)

// Topic, broker and cluster names come from whoever registers a broker (the
// NameServer port has no login, and Java's NameServer does not check them).
// topicList is "one per line, so the output pipes straight into xargs or a
// loop": a name holding a line break must not come out as two topics.
func TestNamesCannotForgeLines(t *testing.T) {
	ns := startNS(t)
	evil := client.Broker{Cluster: "Evil\nCluster", Name: "broker x", Addr: "10.0.0.9:10911\n10.6.6.6:1"}
	tc := func(name string) body.TopicConfig {
		return body.TopicConfig{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	}
	registerOne(t, ns, evil, tc("Harmless\nTBW102"), tc("Plain"), tc("two words"), tc(`"Quoted"`), tc("rtl\u202eeno"), tc("tab\tbed"))

	if got, want := ok(t, "topicList", "-n", ns), "\"\\\"Quoted\\\"\"\n\"Harmless\\nTBW102\"\nPlain\n\"rtl\\u202eeno\"\n\"tab\\tbed\"\n\"two words\"\n"; got != want {
		t.Errorf("topicList:\n%s\nwant:\n%s", got, want)
	}
	if got, want := ok(t, "topicList", "-n", ns, "--clusterName", "Evil\nCluster"), ok(t, "topicList", "-n", ns); got != want {
		t.Errorf("topicList --clusterName:\n%s\nwant:\n%s", got, want)
	}
	// -c: one row per topic, the cluster quoted too.
	if got := ok(t, "topicList", "-n", ns, "-c"); strings.Count(got, "\n") != 7 || !strings.Contains(got, "\"Evil\\nCluster\"  Plain\n") {
		t.Errorf("topicList -c:\n%s", got)
	}
	if got, want := ok(t, "topicClusterList", "-n", ns, "-t", "Plain"), "\"Evil\\nCluster\"\n"; got != want {
		t.Errorf("topicClusterList = %q, want %q", got, want)
	}
	rows := func(cmd string, out string, want int) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != want {
			t.Errorf("%s: %d lines, want %d:\n%s", cmd, len(lines), want, out)
		}
		for _, l := range lines[1:] {
			if l != "" && len(fields(t, l)) != len(fields(t, lines[0])) {
				t.Errorf("%s: row %q does not have the header's %d fields", cmd, l, len(fields(t, lines[0])))
			}
		}
	}
	out := ok(t, "clusterList", "-n", ns)
	rows("clusterList", out, 2)
	if !strings.Contains(out, `"Evil\nCluster"  "broker x"  0     "10.0.0.9:10911\n10.6.6.6:1"`) {
		t.Errorf("clusterList does not quote the names:\n%s", out)
	}
	rows("topicRoute", ok(t, "topicRoute", "-n", ns, "-t", "Plain"), 5)
	rows("getBrokerMemberGroup", ok(t, "getBrokerMemberGroup", "-n", ns, "-c", "Evil\nCluster", "-b", "broker x"), 2)

	// diff against an empty NameServer: every name shows up in its rows.
	empty := startNS(t)
	r := nsadmin(t, "diff", "-n", ns+";"+empty)
	table, _, _ := strings.Cut(r.stdout, "\n\n")
	if r.code != 1 || !strings.Contains(table, `"Harmless\nTBW102"`) {
		t.Errorf("diff: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	rows("diff", table+"\n", 9)

	// JSON carries the names as they are.
	var doc struct{ Topics []string }
	okJSON(t, &doc, "topicList", "-n", ns)
	if len(doc.Topics) != 6 || doc.Topics[1] != "Harmless\nTBW102" {
		t.Errorf("topicList json = %q", doc.Topics)
	}

	// KV namespaces and keys are names too; values keep their line.
	ok(t, "updateKvConfig", "-n", ns, "-s", "NS", "-k", "k\nfake", "-v", "v\nfake")
	rows("getKvConfig", ok(t, "getKvConfig", "-n", ns, "-s", "NS"), 2)
}

func TestOneLineAndName(t *testing.T) {
	for _, c := range []struct{ in, oneLine, name string }{
		{"TopicTest", "TopicTest", "TopicTest"},
		{"", "", `""`},
		{"a b", "a b", `"a b"`},
		{"a\u00a0b", "a\u00a0b", `"a\u00a0b"`},
		{"a\nb", `"a\nb"`, `"a\nb"`},
		{"a\rb", `"a\rb"`, `"a\rb"`},
		{"a\tb", `"a\tb"`, `"a\tb"`},
		{"a\u2028b", `"a\u2028b"`, `"a\u2028b"`},
		{"a\u0085b", `"a\u0085b"`, `"a\u0085b"`},
		{"\x1b[2J", `"\x1b[2J"`, `"\x1b[2J"`},
		{`"x"`, `"\"x\""`, `"\"x\""`},
		{`a"b`, `a"b`, `a"b`},
		{"%RETRY%group", "%RETRY%group", "%RETRY%group"},
		{"naïve-тема", "naïve-тема", "naïve-тема"},
	} {
		if got := oneLine(c.in); got != c.oneLine {
			t.Errorf("oneLine(%q) = %s, want %s", c.in, got, c.oneLine)
		}
		if got := name(c.in); got != c.name {
			t.Errorf("name(%q) = %s, want %s", c.in, got, c.name)
		}
	}
}

// fields splits a table row at runs of spaces, reading a Go-quoted field
// as one.
func fields(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				t.Fatalf("bad quoted field in %q: %v", line, err)
			}
			out = append(out, q)
			line = line[len(q):]
			continue
		}
		f, rest, _ := strings.Cut(line, " ")
		out = append(out, f)
		line = rest
	}
	return out
}
