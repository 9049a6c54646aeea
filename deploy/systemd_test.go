// The systemd unit under systemd/ and its example properties file.

package deploy_test

import (
	"bufio"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
)

// unitFile is a systemd unit: section -> key -> values in file order, and
// the comment lines.
type unitFile struct {
	sections map[string]map[string][]string
	comments []string
}

func (u unitFile) last(section, key string) (string, bool) {
	v := u.sections[section][key]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// parseUnit reads the INI-like unit syntax: [Section] headers, Key=Value,
// '#' and ';' comment lines, and lines continued by a trailing backslash.
func parseUnit(text string) (unitFile, error) {
	u := unitFile{sections: map[string]map[string][]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	section := ""
	lineNo := 0
	for sc.Scan() {
		lineNo++
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		if l[0] == '#' || l[0] == ';' {
			u.comments = append(u.comments, l)
			continue
		}
		for strings.HasSuffix(l, "\\") && sc.Scan() {
			lineNo++
			next := strings.TrimSpace(sc.Text())
			if next != "" && (next[0] == '#' || next[0] == ';') {
				continue
			}
			l = strings.TrimSuffix(l, "\\") + " " + next
		}
		if strings.HasPrefix(l, "[") {
			if !strings.HasSuffix(l, "]") {
				return u, fmt.Errorf("line %d: bad section header %q", lineNo, l)
			}
			section = l[1 : len(l)-1]
			if u.sections[section] == nil {
				u.sections[section] = map[string][]string{}
			}
			continue
		}
		if section == "" {
			return u, fmt.Errorf("line %d: %q outside a section", lineNo, l)
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return u, fmt.Errorf("line %d: %q is not Key=Value", lineNo, l)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		u.sections[section][k] = append(u.sections[section][k], v)
	}
	return u, sc.Err()
}

func TestSystemdUnit(t *testing.T) {
	u, err := parseUnit(string(readFile(t, systemdUnitPath)))
	if err != nil {
		t.Fatalf("%s: %v", systemdUnitPath, err)
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u.sections[s] == nil {
			t.Errorf("%s: no [%s] section", systemdUnitPath, s)
		}
	}
	execs := u.sections["Service"]["ExecStart"]
	if len(execs) != 1 {
		t.Fatalf("%s: %d ExecStart lines, want one", systemdUnitPath, len(execs))
	}
	argv := strings.Fields(execs[0])
	argv[0] = strings.TrimLeft(argv[0], "@-:+!") // systemd's executable prefixes
	if argv[0] != "/usr/local/bin/"+namesrvBinary {
		t.Errorf("%s: ExecStart runs %s, want /usr/local/bin/%s", systemdUnitPath, argv[0], namesrvBinary)
	}
	cfile, ok := configFileArg(argv[1:])
	if !ok || !path.IsAbs(cfile) {
		t.Fatalf("%s: ExecStart=%s has no -c <absolute file>", systemdUnitPath, execs[0])
	}
	// The install instructions at the top of the unit put the example
	// properties file where -c reads it.
	installed := false
	for _, c := range u.comments {
		f := strings.Fields(c)
		if slices.Contains(f, systemdPropsRepo) && f[len(f)-1] == cfile {
			installed = true
		}
	}
	if !installed {
		t.Errorf("%s: no install comment copies %s to %s (the ExecStart -c file)", systemdUnitPath, systemdPropsRepo, cfile)
	}

	cfg := loadConfig(t, systemdPropsPath, readFile(t, systemdPropsPath))

	// With ProtectSystem=strict the file system is read-only but for the
	// unit's own directories: the KV file must be in StateDirectory.
	stateDirs := strings.Fields(strings.Join(u.sections["Service"]["StateDirectory"], " "))
	if ps, _ := u.last("Service", "ProtectSystem"); ps == "strict" && len(stateDirs) == 0 {
		t.Errorf("%s: ProtectSystem=strict and no StateDirectory: kvConfigPath cannot be written", systemdUnitPath)
	}
	if slices.Contains(stateDirs, "rocketns") && !isUnder(cfg.KVConfigPath, "/var/lib/rocketns") {
		t.Errorf("%s: kvConfigPath %s is not under /var/lib/rocketns (StateDirectory=rocketns)", systemdPropsPath, cfg.KVConfigPath)
	}
	if len(stateDirs) > 0 && !slices.ContainsFunc(stateDirs, func(d string) bool { return isUnder(cfg.KVConfigPath, path.Join("/var/lib", d)) }) {
		t.Errorf("%s: kvConfigPath %s is in no StateDirectory %q", systemdPropsPath, cfg.KVConfigPath, stateDirs)
	}
}
