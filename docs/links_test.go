// The relative links of README.md, BENCHMARKS.md and the pages of docs/
// resolve: each names a file that exists and, where it names a heading of a
// Markdown file (#anchor), a heading that file has, with the anchor GitHub
// derives from it.

package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages are the documents whose links are checked, relative to this
// package's directory (go test runs in it).
func pages(t *testing.T) []string {
	t.Helper()
	list, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no Markdown pages in docs/")
	}
	return append(list, "../README.md", "../BENCHMARKS.md", "../pprof/README.md")
}

func TestRelativeLinksResolve(t *testing.T) {
	c := newChecker()
	links := 0
	for _, p := range pages(t) {
		n, problems, err := c.check(p)
		if err != nil {
			t.Fatal(err)
		}
		links += n
		for _, pr := range problems {
			t.Error(pr)
		}
	}
	// README.md alone links to every page of docs/: a checker that found
	// no links would pass whatever the pages say.
	if links < 50 {
		t.Errorf("found only %d relative links; the link pattern no longer matches the pages", links)
	}
}

// The README links to every page of docs/, so that the reference is one link
// away from what a newcomer reads first.
func TestREADMELinksEveryPage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	list, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		if !strings.Contains(string(b), "](docs/"+p) {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
}

// The checker itself: a broken file, a broken anchor and a link in code
// are told apart from good links.
func TestCheckerFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.md", "# B\n\n## Moving the controllers (RocketMQ 5.x controller mode)\n\n```\n## Not a heading\n```\n\n## Twice\n\n## Twice\n\n### `code` and *stress*\n")
	write("a.md", strings.Join([]string{
		"[ok](b.md) [ok](b.md#moving-the-controllers-rocketmq-5x-controller-mode) [ok](#a)",
		"[ok](b.md#twice-1) [ok](b.md#code-and-stress) [ok](https://example.com/x.md#y)",
		"[gone](c.md) [no heading](b.md#not-a-heading) [no third](b.md#twice-2)",
		"`[in code](d.md)`",
		"```", "[in a fence](e.md)", "```",
		"# A",
	}, "\n"))
	n, problems, err := newChecker().check(filepath.Join(dir, "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Errorf("checked %d relative links, want 8", n)
	}
	want := []string{"c.md", "b.md#not-a-heading", "b.md#twice-2"}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want one for each of %q", problems, want)
	}
	for i, w := range want {
		if !strings.Contains(problems[i], "("+w+")") {
			t.Errorf("problem %d = %q, want one about %s", i, problems[i], w)
		}
	}
}

type checker struct {
	anchors map[string]map[string]bool // Markdown file -> its headings' anchors
}

func newChecker() *checker { return &checker{anchors: map[string]map[string]bool{}} }

var (
	// [text](target), images included; a target has no spaces.
	linkRE = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	// Inline code, where brackets are not links.
	codeRE = regexp.MustCompile("`[^`]*`")
	// An ATX heading.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// A link inside a heading, whose text stays in the anchor.
	headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// check returns the number of relative links of page and what is wrong
// with them, each naming the page, its line and the link.
func (c *checker) check(page string) (int, []string, error) {
	lines, err := proseLines(page)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	var problems []string
	for _, l := range lines {
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(l.text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			if p := c.problem(page, target); p != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: (%s) %s", page, l.n, target, p))
			}
		}
	}
	return n, problems, nil
}

func (c *checker) problem(page, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	path := page
	if file != "" {
		path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
		if _, err := os.Stat(path); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return ""
	}
	a, err := c.anchorsOf(path)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return "no heading with this anchor in " + path
	}
	return ""
}

func (c *checker) anchorsOf(path string) (map[string]bool, error) {
	if a, ok := c.anchors[path]; ok {
		return a, nil
	}
	lines, err := proseLines(path)
	if err != nil {
		return nil, err
	}
	a, count := map[string]bool{}, map[string]int{}
	for _, l := range lines {
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if k := count[s]; k > 0 {
			a[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			a[s] = true
		}
		count[s]++
	}
	c.anchors[path] = a
	return a, nil
}

type line struct {
	n    int
	text string
}

// proseLines are the lines of a Markdown file outside fenced code blocks.
func proseLines(path string) ([]line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []line
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			out = append(out, line{n, text})
		}
	}
	return out, sc.Err()
}

// slug is the anchor GitHub gives a heading: its text without Markdown
// markup, lower case, with every character but letters, digits, '-', '_'
// and spaces dropped and each space a '-'.
func slug(heading string) string {
	heading = headingLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
