// The command tables of docs/admin-cli.md list exactly the commands nsadmin
// has, each in its section: NameServer commands and controller commands.

package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestDocsListEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../docs/admin-cli.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{} // section -> the commands of its table
	section := ""
	row := regexp.MustCompile("^\\| `([A-Za-z]+)` \\|")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			section = l[3:]
		}
		if m := row.FindStringSubmatch(l); m != nil {
			documented[section] = append(documented[section], m[1])
		}
	}
	const ns, ctl = "NameServer commands", "Controller commands"
	want := map[string][]string{}
	for _, c := range commands() {
		s := ns
		if c.ctl != nil {
			s = ctl
		}
		want[s] = append(want[s], c.name)
	}
	for _, s := range []string{ns, ctl} {
		for _, name := range want[s] {
			if !slices.Contains(documented[s], name) {
				t.Errorf("docs/admin-cli.md, %q, has no row for %s", s, name)
			}
		}
		for _, name := range documented[s] {
			if !slices.Contains(want[s], name) {
				t.Errorf("docs/admin-cli.md, %q, lists %s, which is not one of nsadmin's %s", s, name, strings.ToLower(s))
			}
		}
	}
}
