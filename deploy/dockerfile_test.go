// The Dockerfile read as data: a small parser for its instructions and
// .dockerignore, and the checks of the image it describes (multi-stage,
// static build, uid 3000, ports and paths that agree with the baked-in
// properties file).

package deploy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
)

// instruction is one Dockerfile instruction after line continuations are
// joined and comments dropped.
type instruction struct {
	line  int    // of its first physical line
	cmd   string // upper case: FROM, RUN, COPY...
	flags map[string][]string
	args  string   // what follows the flags, trimmed
	exec  []string // args in JSON (exec) form, nil in shell form
}

func (in instruction) String() string { return fmt.Sprintf("line %d: %s %s", in.line, in.cmd, in.args) }

// stage is one FROM and the instructions up to the next.
type stage struct {
	index  int
	name   string // the AS name, "" when unnamed
	base   string
	instrs []instruction
}

// refersTo reports whether a --from value names this stage (by AS name,
// case-insensitively as Docker does, or by index).
func (s *stage) refersTo(from string) bool {
	if s.name != "" && strings.EqualFold(from, s.name) {
		return true
	}
	return from == strconv.Itoa(s.index)
}

func (s *stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// parseDockerfile reads Dockerfile text: parser directives (only escape= is
// acted on), comment lines (also inside a continuation), empty lines, line
// continuations, instruction flags (--name=value) and the JSON form.
// It returns the global instructions (ARG before the first FROM) and the
// stages.
func parseDockerfile(text string) (global []instruction, stages []*stage, err error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	escape := byte('\\')
	// Parser directives: "# key=value" lines at the very top.
	directive := regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(\S+)\s*$`)
	for _, l := range lines {
		m := directive.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			break
		}
		if strings.EqualFold(m[1], "escape") {
			if m[2] != "\\" && m[2] != "`" {
				return nil, nil, fmt.Errorf("escape directive %q", m[2])
			}
			escape = m[2][0]
		}
	}

	var instrs []instruction
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		start := i + 1
		var logical strings.Builder
		for {
			trimmed := strings.TrimRight(lines[i], " \t")
			if !strings.HasSuffix(trimmed, string(escape)) {
				logical.WriteString(lines[i])
				break
			}
			logical.WriteString(trimmed[:len(trimmed)-1])
			// The next non-comment, non-empty line continues this one.
			for i++; i < len(lines); i++ {
				n := strings.TrimSpace(lines[i])
				if n != "" && !strings.HasPrefix(n, "#") {
					break
				}
			}
			if i >= len(lines) {
				return nil, nil, fmt.Errorf("line %d: continuation at the end of the file", start)
			}
		}
		in, err := parseInstruction(start, logical.String())
		if err != nil {
			return nil, nil, err
		}
		instrs = append(instrs, in)
	}

	for _, in := range instrs {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := &stage{index: len(stages)}
			switch {
			case len(f) == 1:
			case len(f) == 3 && strings.EqualFold(f[1], "AS"):
				s.name = f[2]
			default:
				return nil, nil, fmt.Errorf("%v: want FROM image [AS name]", in)
			}
			s.base = f[0]
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				return nil, nil, fmt.Errorf("%v: only ARG may come before the first FROM", in)
			}
			global = append(global, in)
			continue
		}
		st := stages[len(stages)-1]
		st.instrs = append(st.instrs, in)
	}
	if len(stages) == 0 {
		return nil, nil, errors.New("no FROM")
	}
	return global, stages, nil
}

func parseInstruction(line int, logical string) (instruction, error) {
	logical = strings.TrimSpace(logical)
	cmd, rest := logical, ""
	if j := strings.IndexAny(logical, " \t"); j >= 0 {
		cmd, rest = logical[:j], logical[j+1:]
	}
	in := instruction{line: line, cmd: strings.ToUpper(cmd), flags: map[string][]string{}}
	if !regexp.MustCompile(`^[A-Za-z]+$`).MatchString(cmd) {
		return in, fmt.Errorf("line %d: %q is not an instruction", line, cmd)
	}
	rest = strings.TrimSpace(rest)
	// Flags: leading --name=value words (FROM, RUN, COPY, ADD, HEALTHCHECK).
	for strings.HasPrefix(rest, "--") {
		word, after := rest, ""
		if j := strings.IndexAny(rest, " \t"); j >= 0 {
			word, after = rest[:j], rest[j+1:]
		}
		name, value, _ := strings.Cut(strings.TrimPrefix(word, "--"), "=")
		in.flags[name] = append(in.flags[name], value)
		rest = strings.TrimSpace(after)
	}
	in.args = rest
	if strings.HasPrefix(rest, "[") {
		var exec []string
		if err := json.Unmarshal([]byte(rest), &exec); err == nil {
			in.exec = exec
		}
	}
	return in, nil
}

// words returns the instruction's arguments: the JSON array, or the shell
// form split on blanks (with quotes resolved).
func (in instruction) words(t *testing.T) []string {
	t.Helper()
	if in.exec != nil {
		return in.exec
	}
	cmds, err := splitWords(in.args)
	if err != nil {
		t.Fatalf("%v: %v", in, err)
	}
	var out []string
	for _, c := range cmds {
		out = append(out, c...)
	}
	return out
}

// envAssignments returns the KEY=value pairs of an ENV instruction (both the
// KEY=value form and the legacy "ENV KEY value").
func envAssignments(t *testing.T, in instruction) map[string]string {
	t.Helper()
	out := map[string]string{}
	w := in.words(t)
	if len(w) >= 2 && !strings.Contains(w[0], "=") {
		out[w[0]] = strings.Join(w[1:], " ")
		return out
	}
	for _, a := range w {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			t.Fatalf("%v: %q is not KEY=value", in, a)
		}
		out[k] = v
	}
	return out
}

// goBuild is a `go build` found in a RUN instruction.
type goBuild struct {
	in       instruction
	env      map[string]string // assignments before `go` in the same simple command
	packages []string
	output   string // -o
	ldflags  string // -ldflags, as the shell passes it
}

func findGoBuilds(t *testing.T, s *stage) []goBuild {
	t.Helper()
	var out []goBuild
	for _, in := range s.all("RUN") {
		var cmds [][]string
		if in.exec != nil {
			cmds = [][]string{in.exec}
		} else {
			var err error
			if cmds, err = splitWords(in.args); err != nil {
				t.Fatalf("%v: %v", in, err)
			}
		}
		for _, words := range cmds {
			env := map[string]string{}
			i := 0
			for ; i < len(words); i++ {
				k, v, ok := strings.Cut(words[i], "=")
				if !ok || !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
					break
				}
				env[k] = v
			}
			if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
				continue
			}
			b := goBuild{in: in, env: env}
			args := words[i+2:]
			for j := 0; j < len(args); j++ {
				a := args[j]
				switch {
				case a == "-o" && j+1 < len(args):
					b.output = args[j+1]
					j++
				case strings.HasPrefix(a, "-o="):
					b.output = strings.TrimPrefix(a, "-o=")
				case (a == "-ldflags" || a == "--ldflags") && j+1 < len(args):
					b.ldflags = args[j+1]
					j++
				case strings.HasPrefix(a, "-ldflags=") || strings.HasPrefix(a, "--ldflags="):
					_, b.ldflags, _ = strings.Cut(a, "=")
				case strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
					// Flags taking a separate value; the others are booleans.
					switch strings.TrimLeft(a, "-") {
					case "ldflags", "gcflags", "asmflags", "tags", "p", "mod", "modfile", "overlay", "pgo", "buildmode", "compiler", "installsuffix", "pkgdir", "toolexec":
						j++
					}
				case strings.HasPrefix(a, "-"):
				default:
					b.packages = append(b.packages, a)
				}
			}
			out = append(out, b)
		}
	}
	return out
}

// dockerignore is the exclusion list of .dockerignore: a path is excluded
// when the last pattern matching it or one of its parent directories is not
// a !exception, as Docker's pattern matcher decides.
type dockerignore []struct {
	re      *regexp.Regexp
	exclude bool
}

func parseDockerignore(t *testing.T, text string) dockerignore {
	t.Helper()
	var d dockerignore
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		exclude := true
		if strings.HasPrefix(l, "!") {
			exclude = false
			l = strings.TrimSpace(l[1:])
		}
		l = strings.TrimPrefix(path.Clean(l), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(l); i++ {
			switch c := l[i]; {
			case strings.HasPrefix(l[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(l[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			case c == '[':
				j := strings.IndexByte(l[i:], ']')
				if j < 0 {
					t.Fatalf(".dockerignore: unterminated [ in %q", l)
				}
				re.WriteString(l[i : i+j+1])
				i += j
			case c == '\\' && i+1 < len(l):
				i++
				re.WriteString(regexp.QuoteMeta(l[i : i+1]))
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		d = append(d, struct {
			re      *regexp.Regexp
			exclude bool
		}{regexp.MustCompile(re.String()), exclude})
	}
	return d
}

// excluded reports whether the repository-relative slash path p is left out
// of the build context.
func (d dockerignore) excluded(p string) bool {
	p = path.Clean(p)
	if p == "." {
		return false
	}
	// p and each of its parents: a/b/c, a/b, a.
	var candidates []string
	for q := p; q != "." && q != "/"; q = path.Dir(q) {
		candidates = append(candidates, q)
	}
	out := false
	for _, pat := range d {
		for _, c := range candidates {
			if pat.re.MatchString(c) {
				out = pat.exclude
				break
			}
		}
	}
	return out
}

func TestDockerfileParser(t *testing.T) {
	// The parser itself, on the constructs TestDockerfile relies on.
	_, stages, err := parseDockerfile(`# syntax=docker/dockerfile:1
ARG V=1
FROM a:${V} AS one
RUN --mount=type=cache,target=/x A=1 \
# a comment inside a continuation

    go build -o /o/ -ldflags='-s -w' ./cmd/x && echo "a b"
FROM b
COPY --from=one /o/x /bin/
ENTRYPOINT ["/bin/x"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || stages[0].name != "one" || stages[1].name != "" || stages[1].base != "b" {
		t.Fatalf("stages: %+v", stages)
	}
	run := stages[0].instrs[0]
	if run.line != 4 || run.flags["mount"][0] != "type=cache,target=/x" {
		t.Errorf("RUN: %+v", run)
	}
	b := findGoBuilds(t, stages[0])
	if len(b) != 1 || b[0].env["A"] != "1" || b[0].output != "/o/" || !slices.Equal(b[0].packages, []string{"./cmd/x"}) {
		t.Errorf("go build: %+v", b)
	}
	if e := stages[1].all("ENTRYPOINT"); len(e) != 1 || !slices.Equal(e[0].exec, []string{"/bin/x"}) {
		t.Errorf("ENTRYPOINT: %+v", e)
	}
	if _, _, err := parseDockerfile("FROM a\nRUN x \\\n"); err == nil {
		t.Error("a continuation at the end of the file parsed")
	}

	ig := parseDockerignore(t, "/bin\n*.test\ndeploy/k8s\n!deploy/k8s/keep\n**/*.tmp\n")
	for p, want := range map[string]bool{
		"bin/namesrv": true, "cmd/bin": false, "x.test": true, "a/x.test": false,
		"deploy/k8s/a.yaml": true, "deploy/k8s/keep": false, "deploy/docker/x": false,
		"a/b/c.tmp": true, "c.tmp": true, ".": false,
	} {
		if got := ig.excluded(p); got != want {
			t.Errorf("excluded(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestDockerfile(t *testing.T) {
	_, stages, err := parseDockerfile(string(readFile(t, dockerfilePath)))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d FROM stage(s), want a multi-stage build", len(stages))
	}
	final := stages[len(stages)-1]

	// The build stage: the one whose RUN builds ./cmd/namesrv, statically.
	var build *stage
	var nsBuild goBuild
	for _, s := range stages {
		for _, b := range findGoBuilds(t, s) {
			if slices.Contains(b.packages, namesrvPackage) {
				build, nsBuild = s, b
			}
		}
	}
	if build == nil {
		t.Fatalf("Dockerfile: no RUN builds %s", namesrvPackage)
	}
	if build == final || build.refersTo(final.base) {
		t.Fatalf("Dockerfile: the final stage (FROM %s) is the build stage", final.base)
	}
	cgo, ok := nsBuild.env["CGO_ENABLED"]
	if !ok {
		// Or an ENV of the build stage before the RUN.
		for _, in := range build.all("ENV") {
			if in.line < nsBuild.in.line {
				if v, set := envAssignments(t, in)["CGO_ENABLED"]; set {
					cgo, ok = v, true
				}
			}
		}
	}
	if !ok || cgo != "0" {
		t.Errorf("Dockerfile %v: go build of %s without CGO_ENABLED=0 (a static binary for the distroless base)", nsBuild.in, namesrvPackage)
	}
	if nsBuild.output == "" {
		t.Fatalf("Dockerfile %v: go build without -o: the final stage cannot know where the binary is", nsBuild.in)
	}
	// The version stamp: -X of buildinfo's variable from a build argument
	// declared in the build stage before the RUN, so `make image` (and
	// any docker build --build-arg VERSION=...) reaches the binary.
	stamp := "-X " + buildinfo.VersionVar + "=${VERSION}"
	if !strings.Contains(nsBuild.ldflags, stamp) {
		t.Errorf("Dockerfile %v: -ldflags %q lacks %q: the image would report no version", nsBuild.in, nsBuild.ldflags, stamp)
	}
	declared := false
	for _, in := range build.all("ARG") {
		if name, _, _ := strings.Cut(in.args, "="); name == "VERSION" && in.line < nsBuild.in.line {
			declared = true
		}
	}
	if !declared {
		t.Errorf("Dockerfile: no ARG VERSION in the build stage before %v: ${VERSION} would be empty", nsBuild.in)
	}
	builtBinary := nsBuild.output
	if strings.HasSuffix(builtBinary, "/") {
		builtBinary = path.Join(builtBinary, path.Base(namesrvPackage))
	}

	// The final stage: non-root numeric user, the remoting port, the binary.
	users := final.all("USER")
	if len(users) == 0 {
		t.Error("Dockerfile: the final stage sets no USER: the container runs as root")
	} else if u := users[len(users)-1].args; u != fmt.Sprintf("%d:%d", containerUID, containerGID) {
		t.Errorf("Dockerfile: final USER %q, want %d:%d (numeric, so runAsNonRoot can verify it)", u, containerUID, containerGID)
	}

	exposed := map[int]bool{}
	for _, in := range final.all("EXPOSE") {
		for _, w := range in.words(t) {
			p, proto, _ := strings.Cut(w, "/")
			n, err := strconv.Atoi(p)
			if err != nil || (proto != "" && proto != "tcp") {
				t.Errorf("Dockerfile %v: %q is not a TCP port", in, w)
				continue
			}
			exposed[n] = true
		}
	}

	entry := final.all("ENTRYPOINT")
	if len(entry) == 0 {
		t.Fatal("Dockerfile: the final stage has no ENTRYPOINT")
	}
	ep := entry[len(entry)-1]
	if len(ep.exec) == 0 {
		t.Fatalf("Dockerfile %v: ENTRYPOINT in shell form: the binary would not be PID 1 and would miss SIGTERM", ep)
	}
	entryBinary := ep.exec[0]
	if path.Base(entryBinary) != namesrvBinary || !path.IsAbs(entryBinary) {
		t.Errorf("Dockerfile %v: ENTRYPOINT %q is not the %s binary", ep, entryBinary, namesrvBinary)
	}
	// The binary the ENTRYPOINT runs is the one the build stage made.
	copied := false
	for _, in := range final.all("COPY") {
		from := in.flags["from"]
		if len(from) == 0 || !build.refersTo(from[len(from)-1]) {
			continue
		}
		w := in.words(t)
		if len(w) < 2 {
			t.Fatalf("Dockerfile %v: want sources and a destination", in)
		}
		dest := w[len(w)-1]
		for _, src := range w[:len(w)-1] {
			target := dest
			if strings.HasSuffix(dest, "/") || len(w) > 2 {
				target = path.Join(dest, path.Base(src))
			}
			if path.Clean(src) == path.Clean(builtBinary) && path.Clean(target) == path.Clean(entryBinary) {
				copied = true
			}
		}
	}
	if !copied {
		t.Errorf("Dockerfile: no COPY --from=%s puts %s (the go build output) at %s (the ENTRYPOINT)", build.name, builtBinary, entryBinary)
	}

	// Every local COPY/ADD source exists and is in the build context.
	ignore := parseDockerignore(t, string(readFile(t, dockerignorePath)))
	localDest := map[string]string{} // image path -> repository path, for single files
	for _, s := range stages {
		for _, in := range s.instrs {
			if (in.cmd != "COPY" && in.cmd != "ADD") || len(in.flags["from"]) > 0 {
				continue
			}
			w := in.words(t)
			if len(w) < 2 {
				t.Fatalf("Dockerfile %v: want sources and a destination", in)
			}
			dest := w[len(w)-1]
			for _, src := range w[:len(w)-1] {
				if strings.Contains(src, "://") {
					continue // ADD of a URL
				}
				rel := path.Clean(strings.TrimPrefix(src, "/"))
				matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(rel)))
				if err != nil || len(matches) == 0 {
					t.Errorf("Dockerfile %v: source %q does not exist in the repository", in, src)
					continue
				}
				if ignore.excluded(rel) {
					t.Errorf("Dockerfile %v: source %q is excluded from the build context by .dockerignore", in, src)
				}
				if len(w) == 2 && !strings.ContainsAny(rel, "*?[") {
					target := dest
					if strings.HasSuffix(dest, "/") {
						target = path.Join(dest, path.Base(rel))
					}
					if !path.IsAbs(target) {
						// Relative to the WORKDIR; only absolute destinations matter here.
						continue
					}
					localDest[path.Clean(target)] = rel
				}
			}
		}
	}

	// The configuration the image starts with: -c of ENTRYPOINT+CMD names the
	// baked-in properties file.
	args := slices.Clone(ep.exec[1:])
	if cmds := final.all("CMD"); len(cmds) > 0 {
		c := cmds[len(cmds)-1]
		if c.exec == nil {
			t.Fatalf("Dockerfile %v: CMD in shell form cannot be arguments to an exec-form ENTRYPOINT", c)
		}
		args = append(args, c.exec...)
	}
	cfile, ok := configFileArg(args)
	if !ok {
		t.Fatalf("Dockerfile: ENTRYPOINT+CMD %q has no -c <file>: the image would ignore its properties file", args)
	}
	if src := localDest[path.Clean(cfile)]; src != imagePropsRepoRel {
		t.Errorf("Dockerfile: -c %s is copied from %q, want %s", cfile, src, imagePropsRepoRel)
	}
	cfg := loadConfig(t, imagePropsPath, readFile(t, imagePropsPath))

	var volumes []string
	for _, in := range final.all("VOLUME") {
		volumes = append(volumes, in.words(t)...)
	}
	if len(volumes) == 0 {
		t.Error("Dockerfile: no VOLUME in the final stage: the KV file would live in the container's writable layer")
	}
	if !slices.ContainsFunc(volumes, func(v string) bool { return isUnder(cfg.KVConfigPath, v) }) {
		t.Errorf("%s: kvConfigPath %s is not under a VOLUME %q", imagePropsPath, cfg.KVConfigPath, volumes)
	}

	// The ports: EXPOSE lists the remoting port and the admin listener's.
	if cfg.ListenPort != 9876 {
		t.Errorf("%s: listenPort %d, want the RocketMQ default 9876", imagePropsPath, cfg.ListenPort)
	}
	if !exposed[cfg.ListenPort] {
		t.Errorf("Dockerfile: EXPOSE %v lacks listenPort %d", slices.Sorted(maps.Keys(exposed)), cfg.ListenPort)
	}
	if cfg.AdminListen == "" {
		t.Errorf("%s: adminListen is not set: the image has no /healthz or /readyz", imagePropsPath)
	} else if p := portOf(t, imagePropsPath+" adminListen", cfg.AdminListen); !exposed[p] {
		t.Errorf("Dockerfile: EXPOSE %v lacks the adminListen port %d", slices.Sorted(maps.Keys(exposed)), p)
	}

	// What talks to the server from inside the container uses listenPort.
	env := map[string]string{}
	for _, in := range final.all("ENV") {
		for k, v := range envAssignments(t, in) {
			env[k] = v
		}
	}
	if a, ok := env["NAMESRV_ADDR"]; ok && portOf(t, "Dockerfile ENV NAMESRV_ADDR", a) != cfg.ListenPort {
		t.Errorf("Dockerfile: ENV NAMESRV_ADDR=%s does not name listenPort %d", a, cfg.ListenPort)
	}
	if home, ok := env["HOME"]; ok && !slices.ContainsFunc(volumes, func(v string) bool { return path.Clean(home) == path.Clean(v) || isUnder(home, v) }) {
		t.Errorf("Dockerfile: ENV HOME=%s is not on a VOLUME %q", home, volumes)
	}
	for _, in := range final.all("HEALTHCHECK") {
		cmd, rest, _ := strings.Cut(in.args, " ")
		if !strings.EqualFold(cmd, "CMD") {
			continue // HEALTHCHECK NONE
		}
		var hc []string
		if err := json.Unmarshal([]byte(strings.TrimSpace(rest)), &hc); err != nil {
			t.Errorf("Dockerfile %v: HEALTHCHECK CMD not in exec form (distroless has no shell): %v", in, err)
			continue
		}
		for i, a := range hc {
			if a == "-n" && i+1 < len(hc) && portOf(t, "Dockerfile HEALTHCHECK -n", hc[i+1]) != cfg.ListenPort {
				t.Errorf("Dockerfile %v: -n %s does not name listenPort %d", in, hc[i+1], cfg.ListenPort)
			}
		}
	}
}
