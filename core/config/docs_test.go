// The docs' tables of keys are generated from the table: the reference
// (docs/configuration.md), the README's main settings, the key lists of
// the pages that explain them (security, operations, monitoring, the
// controller), and the migration guide's Java keys. This test fails when
// a document differs from the code; `make docs` (go test ./core/config
// -run TestDocsGenerated -update) rewrites the generated blocks.

package config

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A generated block is the text between "<!-- generated: NAME -->" and
// "<!-- end: NAME -->"; everything else of a document is written by hand.
var generatedDocs = []struct {
	file   string
	blocks map[string]func() string
}{
	{"../../docs/configuration.md", map[string]func() string{
		"nameserver":  func() string { return keyTable(SectionNameServer) },
		"log":         func() string { return keyTable(SectionLog) },
		"security":    func() string { return keyTable(SectionSecurity) },
		"tls":         func() string { return keyTable(SectionTLS) },
		"limits":      func() string { return keyTable(SectionLimits) },
		"admin":       func() string { return keyTable(SectionAdmin) },
		"controller":  func() string { return keyTable(SectionController) },
		"java":        javaOnlyTable,
		"runtime-318": func() string { return runtimeList(RoleNameServer) },
	}},
	{"../../README.md", map[string]func() string{
		"main": mainTable,
	}},
	{"../../docs/security.md", map[string]func() string{
		"keys-security": func() string { return keyList(SectionSecurity) },
		"keys-tls":      func() string { return keyList(SectionTLS) },
	}},
	{"../../docs/operations.md", map[string]func() string{
		"keys-limits": func() string { return keyList(SectionLimits) },
	}},
	{"../../docs/monitoring.md", map[string]func() string{
		"keys-admin": func() string { return keyList(SectionAdmin) },
	}},
	{"../../docs/controller.md", map[string]func() string{
		"runtime-1009":    func() string { return runtimeList(RoleController) },
		"keys-controller": func() string { return keyList(SectionController) },
		"keys-java-ctl":   javaControllerList,
	}},
	{"../../docs/migrating.md", map[string]func() string{
		"java-keys": javaKeysMarkdown,
	}},
}

func TestDocsGenerated(t *testing.T) {
	for _, d := range generatedDocs {
		b, err := os.ReadFile(d.file)
		if err != nil {
			t.Fatal(err)
		}
		text, stale := string(b), false
		for name, gen := range d.blocks {
			begin, end := "<!-- generated: "+name+" -->", "<!-- end: "+name+" -->"
			i, j := strings.Index(text, begin), strings.Index(text, end)
			if i < 0 || j < i {
				t.Errorf("%s: no %s ... %s block", d.file, begin, end)
				continue
			}
			i += len(begin)
			want := gen()
			if strings.Contains(text[i:j], "\n") || strings.Contains(want, "\n") {
				want = "\n" + want
			}
			if text[i:j] != want {
				stale = true
				if !*update {
					t.Errorf("%s: block %s differs from config's table; run make docs\n--- in the file\n%s\n--- from the table\n%s", d.file, name, text[i:j], want)
				}
				text = text[:i] + want + text[j:]
			}
		}
		if stale && *update {
			if err := os.WriteFile(d.file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Every generated block of README.md and docs/ is one the table renders:
// a block moved to another page without its entry above would otherwise
// go stale unnoticed.
func TestDocsBlocksKnown(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	known := map[string]map[string]func() string{}
	for _, d := range generatedDocs {
		known[d.file] = d.blocks
	}
	marker := regexp.MustCompile(`<!-- generated: ([^ ]+) -->`)
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range marker.FindAllStringSubmatch(string(b), -1) {
			seen++
			if known[f][m[1]] == nil {
				t.Errorf("%s: block %q is not generated from config's table (add it to generatedDocs)", f, m[1])
			}
		}
	}
	want := 0
	for _, d := range generatedDocs {
		want += len(d.blocks)
	}
	if seen != want {
		t.Errorf("found %d generated blocks in README.md and docs/, generatedDocs lists %d", seen, want)
	}
}

// cell escapes the table separator.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// defaultCell shows a key's default, the controller's beside it where it
// differs.
func defaultCell(k *Key) string {
	show := func(r Role) string {
		switch s := k.DefaultText(r); {
		case k.defaultOf(r) == nil:
			return "(none)"
		case s == "":
			return "(empty)"
		case k.Unit != "":
			return "`" + s + "` " + k.Unit
		default:
			return "`" + s + "`"
		}
	}
	if k.Roles == RoleController {
		return show(RoleController)
	}
	if k.ctlDefault != nil {
		return show(RoleNameServer) + "; controller " + show(RoleController)
	}
	return show(RoleNameServer)
}

// docCell is what a key does, and whether an UPDATE may change it.
func docCell(k *Key) string {
	s := k.Doc
	switch {
	case k.Runtime && k.Roles&RoleController != 0:
		s += ". Run-time: UPDATE_CONTROLLER_CONFIG (1009)"
	case k.Runtime:
		s += ". Run-time: UPDATE_NAMESRV_CONFIG (318)"
	}
	return cell(s)
}

// documented are the keys of a section the docs describe one by one.
func documented(s Section) []*Key {
	var out []*Key
	for i := range keys {
		if k := &keys[i]; k.Section == s && !k.JavaOnly && k.Alias == "" {
			out = append(out, k)
		}
	}
	return out
}

// rangeCell shows a key's range: `lo..hi`, or how low it may go.
func rangeCell(k *Key) string {
	switch r := k.Range; {
	case r == nil:
		return ""
	case r.Max != math.MaxInt64:
		return "`" + r.String() + "`"
	default:
		return r.String()
	}
}

func keyTable(s Section) string {
	var b strings.Builder
	b.WriteString("| key and variable | default | range | read by | what it does |\n|---|---|---|---|---|\n")
	for _, k := range documented(s) {
		fmt.Fprintf(&b, "| `%s`<br>`%s` | %s | %s | %s | %s |\n", k.Name, EnvName(k.Name), defaultCell(k), rangeCell(k), k.Roles, docCell(k))
	}
	return b.String()
}

func javaOnlyTable() string {
	var b strings.Builder
	b.WriteString("| key | Java class | Java default | accepted by |\n|---|---|---|---|\n")
	for i := range keys {
		if k := &keys[i]; k.JavaOnly {
			def := defaultCell(k)
			if k.Class == ClassNettyClient {
				def = "(not printed by Java)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.Class, def, k.Roles)
		}
	}
	return b.String()
}

func mainTable() string {
	var b strings.Builder
	b.WriteString("| key | default | what it does |\n|---|---|---|\n")
	for i := range keys {
		if k := &keys[i]; k.Main {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, defaultCell(k), docCell(k))
		}
	}
	return b.String()
}

// names is "`a`, `b`, `c`".
func names(list []string) string { return "`" + strings.Join(list, "`, `") + "`" }

func keyList(s Section) string {
	var list []string
	for _, k := range documented(s) {
		list = append(list, k.Name)
	}
	return names(list)
}

func runtimeList(r Role) string {
	var list []string
	for i := range keys {
		if k := &keys[i]; k.Runtime && k.Roles&r != 0 && k.Alias == "" {
			list = append(list, k.Name)
		}
	}
	return names(list)
}

func javaControllerList() string {
	var list []string
	for i := range keys {
		if k := &keys[i]; k.JavaOnly && (k.Class == ClassController || k.Class == ClassJraft) {
			list = append(list, k.Name)
		}
	}
	return names(list)
}

// javaNameServerKeys are the keys of Java's NameServer config classes, in
// the order of the table: the migration guide lists them.
func javaNameServerKeys() []*Key {
	var out []*Key
	for i := range keys {
		switch k := &keys[i]; k.Class {
		case ClassNamesrv, ClassNettyServer, ClassNettyClient:
			out = append(out, k)
		}
	}
	return out
}

// javaKeysMarkdown renders them as the migration guide's two tables.
func javaKeysMarkdown() string {
	var b strings.Builder
	table := func(title string, used bool) {
		fmt.Fprintf(&b, "%s\n\n| key | Java class | Java default |\n|---|---|---|\n", title)
		for _, k := range javaNameServerKeys() {
			if k.JavaOnly == used {
				continue
			}
			def := "`" + k.DefaultText(RoleNameServer) + "`"
			switch {
			case k.Class == ClassNettyClient:
				def = "(not printed by Java)"
			case k.DefaultText(RoleNameServer) == "":
				def = "(empty)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, k.Class, def)
		}
	}
	table("**Read into rocketns's configuration** ([configuration.md](configuration.md) says what each does here):", true)
	b.WriteString("\n")
	table("**Accepted, kept, printed by `getNamesrvConfig`, and ignored** (thread pools, Netty buffers, the NameServer's outgoing client):", false)
	return b.String()
}

// The guide lists the Java NameServer keys rocketns reads as read,
// whoever reads them (enableControllerInNamesrv starts the controller),
// and rocketns's own keys and the controller's not at all.
func TestJavaKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range javaNameServerKeys() {
		seen[k.Name] = true
		if read := k.field != nil || k.node != nil; read == k.JavaOnly {
			t.Errorf("%s: read %v, Java-only %v", k.Name, read, k.JavaOnly)
		}
	}
	for _, n := range []string{"listenPort", "orderMessageEnable", "serverWorkerThreads", "enableControllerInNamesrv", "clientWorkerThreads"} {
		if !seen[n] {
			t.Errorf("%s missing", n)
		}
	}
	if seen["logLevel"] || seen["adminListen"] || seen["electMasterMaxRetryCount"] || seen["mappedFileSize"] {
		t.Error("rocketns's own keys or the controller's listed as Java NameServer keys")
	}
}
