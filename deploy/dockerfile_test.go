// The Dockerfile read line by line, and the checks of the image it
// describes: a static build stamped with the version, uid 3000, the binary
// the ENTRYPOINT runs, and ports and paths that agree with the baked-in
// properties file. Plain matches on the instructions, not a parser of the
// Dockerfile language: a check that stops matching after an edit of the
// Dockerfile fails and names the line it looked for.

package deploy_test

import (
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
)

// dockerfile is the Dockerfile's instructions, continuation lines joined
// and comments dropped, split at each FROM into stages.
type dockerfile struct {
	stages [][]string // each starts with its FROM line
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	var d dockerfile
	var cur strings.Builder
	for _, l := range strings.Split(string(readFile(t, dockerfilePath)), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if more, ok := strings.CutSuffix(l, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(l)
		in := strings.Join(strings.Fields(cur.String()), " ")
		cur.Reset()
		if strings.HasPrefix(in, "FROM ") {
			d.stages = append(d.stages, nil)
		}
		if len(d.stages) > 0 {
			d.stages[len(d.stages)-1] = append(d.stages[len(d.stages)-1], in)
		}
	}
	if len(d.stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a multi-stage build", len(d.stages))
	}
	return d
}

func (d dockerfile) final() []string { return d.stages[len(d.stages)-1] }

// last is the stage's last instruction cmd (with its arguments after
// cmd), or fails t.
func last(t *testing.T, stage []string, cmd string) string {
	t.Helper()
	for _, in := range slices.Backward(stage) {
		if args, ok := strings.CutPrefix(in, cmd+" "); ok {
			return args
		}
	}
	t.Fatalf("Dockerfile: the final stage has no %s", cmd)
	return ""
}

// execForm decodes a JSON-array argument list; the shell form fails t
// (the distroless base has no shell, and a shell would be PID 1).
func execForm(t *testing.T, what, args string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(args), &out); err != nil || len(out) == 0 {
		t.Fatalf("Dockerfile: %s %s is not in exec form: %v", what, args, err)
	}
	return out
}

func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	final := d.final()

	// The build stage: CGO off (a static binary for the distroless base),
	// the version stamped from an ARG declared before the build, and the
	// output directory the final stage copies from.
	var build []string
	var run string
	for _, st := range d.stages[:len(d.stages)-1] {
		for _, in := range st {
			if strings.HasPrefix(in, "RUN ") && strings.Contains(in, " go build ") && strings.Contains(in, " "+namesrvPackage) {
				build, run = st, in
			}
		}
	}
	if run == "" {
		t.Fatalf("Dockerfile: no RUN go build of %s before the final stage", namesrvPackage)
	}
	from := strings.Fields(build[0])
	if len(from) != 4 || !strings.EqualFold(from[2], "AS") {
		t.Fatalf("Dockerfile: %q: want the build stage named (FROM image AS name)", build[0])
	}
	name := from[3]
	if !strings.Contains(run, "CGO_ENABLED=0 ") {
		t.Errorf("Dockerfile: %q builds without CGO_ENABLED=0", run)
	}
	if stamp := "-X " + buildinfo.VersionVar + "=${VERSION}"; !strings.Contains(run, stamp) {
		t.Errorf("Dockerfile: %q lacks %q: the image would report no version", run, stamp)
	}
	if i := slices.IndexFunc(build, func(in string) bool { return in == "ARG VERSION" || strings.HasPrefix(in, "ARG VERSION=") }); i < 0 || i > slices.Index(build, run) {
		t.Error("Dockerfile: no ARG VERSION in the build stage before its go build: ${VERSION} would be empty")
	}
	f := strings.Fields(run)
	o := slices.Index(f, "-o")
	if o < 0 || o+1 == len(f) || !strings.HasSuffix(f[o+1], "/") {
		t.Fatalf("Dockerfile: %q: want -o DIR/ (the final stage copies the binaries from there)", run)
	}
	built := path.Join(f[o+1], namesrvBinary)

	// The final stage runs that binary, as uid 3000.
	entry := execForm(t, "ENTRYPOINT", last(t, final, "ENTRYPOINT"))
	if entry[0] != "/usr/local/bin/"+namesrvBinary {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want /usr/local/bin/%s", entry, namesrvBinary)
	}
	copied := slices.ContainsFunc(final, func(in string) bool {
		w := strings.Fields(in)
		return len(w) >= 4 && w[0] == "COPY" && w[1] == "--from="+name && slices.Contains(w[2:len(w)-1], built) &&
			(w[len(w)-1] == path.Dir(entry[0])+"/" || w[len(w)-1] == entry[0])
	})
	if !copied {
		t.Errorf("Dockerfile: no COPY --from=%s of %s to %s", name, built, entry[0])
	}
	if u := last(t, final, "USER"); u != strconv.Itoa(containerUID)+":"+strconv.Itoa(containerGID) {
		t.Errorf("Dockerfile: USER %s, want %d:%d (numeric, so runAsNonRoot can verify it)", u, containerUID, containerGID)
	}

	// The configuration it starts with: -c names the baked-in file.
	args := slices.Concat(entry[1:], execForm(t, "CMD", last(t, final, "CMD")))
	cfile, ok := configFileArg(args)
	if !ok {
		t.Fatalf("Dockerfile: ENTRYPOINT+CMD %q has no -c <file>", args)
	}
	if want := "COPY " + imagePropsRepoRel + " " + cfile; !slices.Contains(final, want) {
		t.Errorf("Dockerfile: no %q: -c names a file the image does not have", want)
	}
	for _, ignored := range strings.Fields(string(readFile(t, dockerignorePath))) {
		if m, _ := path.Match(ignored, imagePropsRepoRel); m || strings.HasPrefix(imagePropsRepoRel, strings.TrimPrefix(ignored, "/")+"/") {
			t.Errorf(".dockerignore: %q leaves %s out of the build context", ignored, imagePropsRepoRel)
		}
	}
	cfg := loadConfig(t, imagePropsPath, readFile(t, imagePropsPath))

	// Paths: the KV file and HOME on the volume.
	volumes := execForm(t, "VOLUME", last(t, final, "VOLUME"))
	if !slices.ContainsFunc(volumes, func(v string) bool { return isUnder(cfg.KVConfigPath, v) }) {
		t.Errorf("%s: kvConfigPath %s is not under a VOLUME %q", imagePropsPath, cfg.KVConfigPath, volumes)
	}
	env := map[string]string{}
	for _, in := range final {
		if a, ok := strings.CutPrefix(in, "ENV "); ok {
			for _, kv := range strings.Fields(a) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		}
	}
	if home, ok := env["HOME"]; ok && !slices.Contains(volumes, path.Clean(home)) && !slices.ContainsFunc(volumes, func(v string) bool { return isUnder(home, v) }) {
		t.Errorf("Dockerfile: ENV HOME=%s is not on a VOLUME %q", home, volumes)
	}

	// Ports: EXPOSE has listenPort (9876) and the admin listener's; what
	// talks to the server from inside the container uses listenPort.
	if cfg.ListenPort != 9876 {
		t.Errorf("%s: listenPort %d, want the RocketMQ default 9876", imagePropsPath, cfg.ListenPort)
	}
	if cfg.AdminListen == "" {
		t.Fatalf("%s: adminListen is not set: the image has no /healthz or /readyz", imagePropsPath)
	}
	exposed := strings.Fields(last(t, final, "EXPOSE"))
	for _, p := range []int{cfg.ListenPort, portOf(t, "adminListen", cfg.AdminListen)} {
		if !slices.Contains(exposed, strconv.Itoa(p)) && !slices.Contains(exposed, strconv.Itoa(p)+"/tcp") {
			t.Errorf("Dockerfile: EXPOSE %q lacks port %d", exposed, p)
		}
	}
	if a, ok := env["NAMESRV_ADDR"]; ok && portOf(t, "ENV NAMESRV_ADDR", a) != cfg.ListenPort {
		t.Errorf("Dockerfile: ENV NAMESRV_ADDR=%s does not name listenPort %d", a, cfg.ListenPort)
	}
	hc := last(t, final, "HEALTHCHECK")
	i := strings.Index(hc, "CMD [")
	if i < 0 {
		t.Fatalf("Dockerfile: HEALTHCHECK %s: want CMD in exec form (distroless has no shell)", hc)
	}
	check := execForm(t, "HEALTHCHECK CMD", hc[i+len("CMD "):])
	if n := slices.Index(check, "-n"); n < 0 || n+1 == len(check) || portOf(t, "HEALTHCHECK -n", check[n+1]) != cfg.ListenPort {
		t.Errorf("Dockerfile: HEALTHCHECK %q does not ask listenPort %d", check, cfg.ListenPort)
	}
}
