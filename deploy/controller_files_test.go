// The standalone controller's systemd unit and properties files, read as
// data: what runs, where its state goes, and that its ports do not collide
// with the NameServer's shipped ones on the same host.

package deploy_test

import (
	"net"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
)

const (
	ctlUnitPath        = "systemd/rocketns-controller.service"
	ctlSystemdProps    = "systemd/controller.properties"
	ctlSystemdPropsRel = "deploy/systemd/controller.properties"
	ctlImageProps      = "docker/controller.properties"
	ctlImagePropsRel   = "deploy/docker/controller.properties"
	ctlImagePropsDest  = "/etc/rocketns/controller.properties"
)

// loadController reads a controller properties file as `namesrv controller
// -c` does and returns its settings; any error or warning fails t.
func loadController(t *testing.T, file string) (*config.Config, *config.Controller) {
	t.Helper()
	loaded, err := config.Load(config.LoadInput{File: file, Base: config.DefaultController(), KeepConfigStorePath: true})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, w := range loaded.Warnings {
		t.Errorf("%s: warning: %s", file, w)
	}
	k, err := loaded.Config.Controller(false)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return loaded.Config, k
}

// ports checks that the controller's ports differ from the NameServer's in
// nsProps, so both roles fit on one host.
func checkPorts(t *testing.T, name string, cfg *config.Config, k *config.Controller, nsProps string) {
	t.Helper()
	ns := loadConfig(t, nsProps, readFile(t, nsProps))
	taken := map[int]string{ns.ListenPort: "the NameServer's listenPort", portOf(t, nsProps+" adminListen", ns.AdminListen): "the NameServer's adminListen"}
	self := portOf(t, name+" self peer", k.Membership.Self().ServeAddr)
	admin := portOf(t, name+" adminListen", cfg.AdminListen)
	for what, p := range map[string]int{"the self peer's port": self, "adminListen": admin} {
		if other, ok := taken[p]; ok {
			t.Errorf("%s: %s %d is %s (%s)", name, what, p, other, nsProps)
		}
	}
	if self == admin {
		t.Errorf("%s: the peer port and adminListen are both %d", name, self)
	}
}

func TestSystemdControllerUnit(t *testing.T) {
	u, err := parseUnit(string(readFile(t, ctlUnitPath)))
	if err != nil {
		t.Fatalf("%s: %v", ctlUnitPath, err)
	}
	execs := u.sections["Service"]["ExecStart"]
	if len(execs) != 1 {
		t.Fatalf("%s: %d ExecStart lines, want one", ctlUnitPath, len(execs))
	}
	argv := strings.Fields(execs[0])
	if len(argv) < 2 {
		t.Fatalf("%s: ExecStart=%s: want namesrv controller and its flags", ctlUnitPath, execs[0])
	}
	argv[0] = strings.TrimLeft(argv[0], "@-:+!") // systemd's executable prefixes
	if argv[0] != "/usr/local/bin/"+namesrvBinary || argv[1] != "controller" {
		t.Errorf("%s: ExecStart runs %q, want /usr/local/bin/%s controller", ctlUnitPath, argv[:2], namesrvBinary)
	}
	cfile, ok := configFileArg(argv[2:])
	if !ok || !path.IsAbs(cfile) {
		t.Fatalf("%s: ExecStart=%s has no -c <absolute file>", ctlUnitPath, execs[0])
	}
	installed := slices.ContainsFunc(u.comments, func(c string) bool {
		f := strings.Fields(c)
		return slices.Contains(f, ctlSystemdPropsRel) && f[len(f)-1] == cfile
	})
	if !installed {
		t.Errorf("%s: no install comment copies %s to %s", ctlUnitPath, ctlSystemdPropsRel, cfile)
	}
	// Not root: a dynamic user or a named one.
	if dyn, _ := u.last("Service", "DynamicUser"); dyn != "yes" {
		if user, ok := u.last("Service", "User"); !ok || user == "root" || user == "0" {
			t.Errorf("%s: runs as root", ctlUnitPath)
		}
	}
	// Its state directory is its own, and holds every path it writes.
	dirs := strings.Fields(strings.Join(u.sections["Service"]["StateDirectory"], " "))
	if len(dirs) != 1 || dirs[0] == "rocketns" {
		t.Fatalf("%s: StateDirectory %q, want one of its own (not the NameServer's rocketns)", ctlUnitPath, dirs)
	}
	cfg, k := loadController(t, ctlSystemdProps)
	state := path.Join("/var/lib", dirs[0])
	for key, p := range map[string]string{"controllerStorePath": k.StorePath, "configStorePath": k.ConfigStorePath} {
		if !isUnder(p, state) {
			t.Errorf("%s: %s %s is not under %s (StateDirectory; ProtectSystem=strict)", ctlSystemdProps, key, p, state)
		}
	}
	if host, _, err := net.SplitHostPort(cfg.AdminListen); err != nil || !net.ParseIP(host).IsLoopback() {
		t.Errorf("%s: adminListen %q is not on loopback", ctlSystemdProps, cfg.AdminListen)
	}
	checkPorts(t, ctlSystemdProps, cfg, k, systemdPropsPath)
}

func TestImageControllerProperties(t *testing.T) {
	final := readDockerfile(t).final()
	copied := slices.Contains(final, "COPY "+ctlImagePropsRel+" "+ctlImagePropsDest)
	volumes := execForm(t, "VOLUME", last(t, final, "VOLUME"))
	if !copied {
		t.Errorf("Dockerfile: no COPY %s %s", ctlImagePropsRel, ctlImagePropsDest)
	}
	cfg, k := loadController(t, ctlImageProps)
	for key, p := range map[string]string{"controllerStorePath": k.StorePath, "configStorePath": k.ConfigStorePath} {
		if !slices.ContainsFunc(volumes, func(v string) bool { return isUnder(p, v) }) {
			t.Errorf("%s: %s %s is not on a VOLUME %q", ctlImageProps, key, p, volumes)
		}
	}
	checkPorts(t, ctlImageProps, cfg, k, imagePropsPath)
}
