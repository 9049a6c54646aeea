// Tests of the deployment files, read as data: the Dockerfile
// (dockerfile_test.go), the Kubernetes manifests (kubernetes_test.go) and the
// systemd unit (systemd_test.go); this file holds what they share. Each check
// ties a setting to the one it must agree with: a port to listenPort or
// adminListen, a path to the volume it must be on, a uid to the image's USER,
// and every shipped properties file to the configuration rules of
// core/config.

package deploy_test

import (
	"bytes"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/config"
)

// The container user of the image and the pods: uid and gid 3000, like the
// Apache RocketMQ image.
const (
	containerUID = 3000
	containerGID = 3000
)

// Paths relative to this package's directory (go test runs in it).
const (
	repoRoot          = ".."
	dockerfilePath    = "../Dockerfile"
	dockerignorePath  = "../.dockerignore"
	imagePropsPath    = "docker/namesrv.properties" // the properties file baked into the image
	imagePropsRepoRel = "deploy/docker/namesrv.properties"
	kubeDir           = "kubernetes"
	systemdUnitPath   = "systemd/rocketns.service"
	systemdPropsPath  = "systemd/namesrv.properties"
	systemdPropsRepo  = "deploy/systemd/namesrv.properties"
	namesrvBinary     = "namesrv"
	namesrvPackage    = "./cmd/namesrv"
)

// loadConfig applies a properties text to config.Default() the way namesrv
// -c does, and fails t on a parse error, an Apply error or warning, or a
// Validate error. allowedWarnings lists warnings the caller documents as
// expected (an exact match each).
func loadConfig(t *testing.T, name string, text []byte, allowedWarnings ...string) *config.Config {
	t.Helper()
	props, err := properties.Parse(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(props) == 0 {
		t.Fatalf("%s: no properties", name)
	}
	cfg := config.Default()
	warnings, err := cfg.Apply(props)
	if err != nil {
		t.Fatalf("%s: apply: %v", name, err)
	}
	for _, w := range warnings {
		if !slices.Contains(allowedWarnings, w) {
			t.Errorf("%s: unexpected warning: %s", name, w)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%s: validate: %v", name, err)
	}
	return cfg
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// isUnder reports whether the absolute slash path p lies strictly inside
// directory dir (after cleaning both, so /a/../b is not under /a).
func isUnder(p, dir string) bool {
	if !path.IsAbs(p) || !path.IsAbs(dir) {
		return false
	}
	p, dir = path.Clean(p), path.Clean(dir)
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}

// hostPort splits a host:port setting and returns the port as a number.
func portOf(t *testing.T, what, hostport string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("%s %q: %v", what, hostport, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		t.Fatalf("%s %q: bad port %q", what, hostport, p)
	}
	return n
}

// configFileArg returns the value of namesrv's -c (or -configFile) option in
// args, in any of the forms Go's flag package accepts.
func configFileArg(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		name := strings.TrimLeft(a, "-")
		if name == a || len(a)-len(name) > 2 {
			continue // not a flag
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name != "c" && name != "configFile" {
			continue
		}
		if hasValue {
			return value, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
		return "", false
	}
	return "", false
}
