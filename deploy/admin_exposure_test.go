// What the shipped configurations expose on the admin listener, which has
// no authentication: in Kubernetes a NetworkPolicy lets only the
// monitoring namespace reach the admin port (the remoting port stays open);
// no Service publishes it outside the cluster; the image's run line
// publishes it on the host's loopback only; the systemd unit binds it to
// loopback; and no shipped configuration turns pprof on.

package deploy_test

import (
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type networkPolicy struct {
	Spec struct {
		PodSelector labelSelector `yaml:"podSelector"`
		PolicyTypes []string      `yaml:"policyTypes"`
		Ingress     []struct {
			From []struct {
				NamespaceSelector *labelSelector `yaml:"namespaceSelector"`
				PodSelector       *labelSelector `yaml:"podSelector"`
				IPBlock           *struct {
					CIDR string `yaml:"cidr"`
				} `yaml:"ipBlock"`
			} `yaml:"from"`
			Ports []struct {
				Port intOrString `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"ingress"`
	} `yaml:"spec"`
}

func TestAdminPortExposure(t *testing.T) {
	for _, dir := range []string{kubeDir, controllerKubeDir} {
		t.Run(dir, func(t *testing.T) { checkAdminExposure(t, dir) })
	}
}

func checkAdminExposure(t *testing.T, dir string) {
	byKind := map[string][]*object{}
	for _, r := range decodeAs[kustomization](t, readYAMLDocuments(t, filepath.Join(dir, "kustomization.yaml"))[0]).Resources {
		for _, o := range readYAMLDocuments(t, filepath.Join(dir, r)) {
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	if len(byKind["StatefulSet"]) != 1 || len(byKind["NetworkPolicy"]) != 1 {
		t.Fatalf("%s: want one StatefulSet and one NetworkPolicy in kustomization.yaml, found %d and %d",
			dir, len(byKind["StatefulSet"]), len(byKind["NetworkPolicy"]))
	}
	sts := decodeAs[statefulSet](t, byKind["StatefulSet"][0])
	c := sts.Spec.Template.Spec.Containers[0]
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["admin"] == 0 || ports["remoting"] == 0 {
		t.Fatalf("%s: container ports %v, want admin and remoting", dir, ports)
	}
	for _, a := range c.Args {
		if strings.Contains(a, "pprof") {
			t.Errorf("%s: the container's args %q turn pprof on", dir, c.Args)
		}
	}
	is := func(p intOrString, name string) bool { return p.str == name || (p.isInt && p.num == ports[name]) }

	npObj := byKind["NetworkPolicy"][0]
	np := decodeAs[networkPolicy](t, npObj)
	if len(np.Spec.PodSelector.MatchExpressions) > 0 || !selects(np.Spec.PodSelector.MatchLabels, sts.Spec.Template.Metadata.Labels) ||
		len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("%v: podSelector %v does not select the StatefulSet's pods", npObj, np.Spec.PodSelector.MatchLabels)
	}
	if !slices.Contains(np.Spec.PolicyTypes, "Ingress") {
		t.Errorf("%v: policyTypes %q lack Ingress", npObj, np.Spec.PolicyTypes)
	}
	remotingOpen, adminAllowed := false, false
	for i, r := range np.Spec.Ingress {
		if len(r.Ports) == 0 {
			t.Errorf("%v: ingress rule %d allows every port", npObj, i)
		}
		for _, p := range r.Ports {
			switch {
			case is(p.Port, "remoting") && len(r.From) == 0:
				remotingOpen = true
			case is(p.Port, "admin"):
				if len(r.From) == 0 {
					t.Errorf("%v: ingress rule %d lets every pod reach the admin port", npObj, i)
				}
				for _, f := range r.From {
					if f.IPBlock != nil || (f.NamespaceSelector == nil && f.PodSelector == nil) ||
						(f.NamespaceSelector != nil && len(f.NamespaceSelector.MatchLabels) == 0) {
						t.Errorf("%v: ingress rule %d opens the admin port beyond a named namespace or pods", npObj, i)
					}
				}
				adminAllowed = true
			}
		}
	}
	if !remotingOpen {
		t.Errorf("%v: the remoting port is not open to brokers and clients", npObj)
	}
	if !adminAllowed {
		t.Errorf("%v: nothing may scrape the admin port", npObj)
	}
	for _, o := range byKind["Service"] {
		svc := decodeAs[service](t, o)
		if svc.Spec.Type != "LoadBalancer" && svc.Spec.Type != "NodePort" {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if is(p.TargetPort, "admin") {
				t.Errorf("%v: a %s Service publishes the admin port outside the cluster", o, svc.Spec.Type)
			}
		}
	}
}

// The image's run line publishes the admin port on the host's loopback
// only; the systemd unit's configuration binds it to loopback; neither
// turns pprof on.
func TestAdminBindOutsideKubernetes(t *testing.T) {
	df := string(readFile(t, dockerfilePath))
	run := regexp.MustCompile(`(?m)^# Run:\s+(docker run .*)$`).FindStringSubmatch(df)
	if run == nil {
		t.Fatal("Dockerfile: no `# Run:` line")
	}
	for _, m := range regexp.MustCompile(`-p\s+(\S+)`).FindAllStringSubmatch(run[1], -1) {
		parts := strings.Split(m[1], ":")
		if parts[len(parts)-1] == "9877" && (len(parts) != 3 || !net.ParseIP(parts[0]).IsLoopback()) {
			t.Errorf("Dockerfile Run line %q publishes the admin port %s beyond the host's loopback", run[1], m[1])
		}
	}
	if strings.Contains(df, "pprof") && regexp.MustCompile(`(?m)^(CMD|ENTRYPOINT).*pprof`).MatchString(df) {
		t.Error("Dockerfile: the image turns pprof on")
	}
	cfg := loadConfig(t, systemdPropsPath, readFile(t, systemdPropsPath))
	host, port, err := net.SplitHostPort(cfg.AdminListen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Errorf("%s: adminListen %q is not on loopback", systemdPropsPath, cfg.AdminListen)
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Errorf("%s: adminListen port %q", systemdPropsPath, port)
	}
	if unit := string(readFile(t, systemdUnitPath)); strings.Contains(unit, "pprof") {
		t.Errorf("%s turns pprof on", systemdUnitPath)
	}
}
