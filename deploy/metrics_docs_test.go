// Every rocketns metric family of a real scrape has a row in the docs: the
// NameServer's in docs/monitoring.md, "Metrics", the controller's (named
// there without their rocketns_controller_ prefix) in docs/controller.md,
// "Metrics, readiness and status".

package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// tableRows are the table rows of section heading of a Markdown file, up to
// the next heading of the same level.
func tableRows(t *testing.T, file, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	text = text[i+len(heading)+2:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if j := strings.Index(text, "\n"+level); j >= 0 {
		text = text[:j]
	}
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "| ") {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s, %q, has no table", file, heading)
	}
	return rows
}

func TestScrapedMetricsAreDocumented(t *testing.T) {
	_, body := realScrape(t)
	ns := tableRows(t, "../docs/monitoring.md", "## Metrics")
	ctl := tableRows(t, "../docs/controller.md", "## Metrics, readiness and status")
	documented := func(rows []string, name string) bool {
		for _, r := range rows {
			if strings.Contains(r, "`"+name+"`") || strings.Contains(r, "`"+name+"{") {
				return true
			}
		}
		return false
	}
	families := regexp.MustCompile(`(?m)^# TYPE (rocketns_\w+) `).FindAllStringSubmatch(body, -1)
	if len(families) < 20 {
		t.Fatalf("only %d rocketns families in the scrape", len(families))
	}
	for _, f := range families {
		name := f[1]
		if short, ok := strings.CutPrefix(name, "rocketns_controller_"); ok {
			if !documented(ctl, short) {
				t.Errorf("%s is not in docs/controller.md's metrics table (as %s)", name, short)
			}
			continue
		}
		if !documented(ns, name) {
			t.Errorf("%s is not in docs/monitoring.md's metrics table", name)
		}
	}
}
