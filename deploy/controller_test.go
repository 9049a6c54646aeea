// The controller group's manifests under kubernetes/controller, read as
// data: the peers each pod's configuration names against the pods and the
// headless Service, the ports, the probes, the storage, and the start
// policy a raft group needs.

package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/config"
)

const controllerKubeDir = "kubernetes/controller"

// envVar is a container variable, with the downward-API field it may come
// from.
type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type controllerPod struct {
	Spec struct {
		PodManagementPolicy string `yaml:"podManagementPolicy"`
		Template            struct {
			Spec struct {
				Containers []struct {
					Env []envVar `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// expandEnv is Kubernetes's $(VAR) expansion of a variable's value from
// the variables before it.
func expandEnv(value string, vars map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(value, func(ref string) string {
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

func TestKubernetesController(t *testing.T) {
	kobjs := readYAMLDocuments(t, filepath.Join(controllerKubeDir, "kustomization.yaml"))
	if len(kobjs) != 1 || kobjs[0].Kind != "Kustomization" {
		t.Fatal("kustomization.yaml: want one Kustomization document")
	}
	kust := decodeAs[kustomization](t, kobjs[0])
	entries, err := os.ReadDir(controllerKubeDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".yaml") && n != "kustomization.yaml" {
			files = append(files, n)
		}
	}
	resources := slices.Sorted(slices.Values(kust.Resources))
	if !slices.Equal(resources, files) {
		t.Errorf("kustomization.yaml resources %q, want every manifest of the directory %q", resources, files)
	}
	byKind := map[string][]*object{}
	for _, f := range files {
		for _, o := range readYAMLDocuments(t, filepath.Join(controllerKubeDir, f)) {
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	one := func(kind string) *object {
		t.Helper()
		if len(byKind[kind]) != 1 {
			t.Fatalf("want one %s, found %d", kind, len(byKind[kind]))
		}
		return byKind[kind][0]
	}
	stsObj := one("StatefulSet")
	sts := decodeAs[statefulSet](t, stsObj)
	extra := decodeAs[controllerPod](t, stsObj)
	spec := &sts.Spec
	replicas := derefOr(spec.Replicas, 0)
	if replicas < 3 || replicas%2 == 0 {
		t.Errorf("%v: replicas %d, want an odd group of at least 3", stsObj, replicas)
	}
	// A node is ready only once the group has a leader: an ordered start
	// would wait on the first pod for ever.
	if extra.Spec.PodManagementPolicy != "Parallel" {
		t.Errorf("%v: podManagementPolicy %q, want Parallel", stsObj, extra.Spec.PodManagementPolicy)
	}
	podLabels := spec.Template.Metadata.Labels
	if !selects(spec.Selector.MatchLabels, podLabels) {
		t.Errorf("%v: selector does not select the pods", stsObj)
	}
	if esl := spec.Template.Spec.EnableServiceLinks; esl == nil || *esl {
		t.Errorf("%v: enableServiceLinks is not false", stsObj)
	}
	if u := spec.Template.Spec.SecurityContext.RunAsUser; u == nil || *u != containerUID {
		t.Errorf("%v: runAsUser %v, want %d", stsObj, u, containerUID)
	}
	if len(spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%v: want one container", stsObj)
	}
	c := &spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "controller" {
		t.Fatalf("%v: args %q do not start the controller mode", stsObj, c.Args)
	}
	portByName := map[string]int{}
	for _, p := range c.Ports {
		portByName[p.Name] = p.ContainerPort
	}

	// The headless Service the StatefulSet names, publishing pods before
	// they are ready (the nodes must find each other to elect a leader).
	var headless *service
	for _, o := range byKind["Service"] {
		if o.Metadata.Name == spec.ServiceName {
			headless = decodeAs[service](t, o)
		}
	}
	if headless == nil || headless.Spec.ClusterIP != "None" || !headless.Spec.PublishNotReadyAddresses ||
		!selects(headless.Spec.Selector, podLabels) {
		t.Fatalf("no headless Service %q publishing not-ready pods of the StatefulSet", spec.ServiceName)
	}
	servicePorts := map[int]bool{}
	for _, p := range headless.Spec.Ports {
		servicePorts[p.Port] = true
		if !p.TargetPort.isInt && p.TargetPort.str != "" {
			if _, ok := portByName[p.TargetPort.str]; !ok {
				t.Errorf("Service port %d targets %s, which the container does not declare", p.Port, p.TargetPort)
			}
		}
	}

	// The file -c names, from the ConfigMap the config volume mounts.
	cmObj := one("ConfigMap")
	cm := decodeAs[configMap](t, cmObj)
	cfile, ok := configFileArg(c.Args[1:])
	if !ok {
		t.Fatalf("%v: no -c <file> in %q", stsObj, c.Args)
	}
	var configMount string
	dataMounts := map[string]bool{}
	claims := map[string]bool{}
	for _, v := range spec.VolumeClaimTemplates {
		claims[v.Metadata.Name] = true
	}
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cmObj.Metadata.Name {
				configMount = m.MountPath
			}
		}
		if claims[m.Name] && !m.ReadOnly {
			dataMounts[m.MountPath] = true
		}
	}
	if configMount == "" || !isUnder(cfile, configMount) {
		t.Fatalf("%v: -c %s is not in the ConfigMap's mount %q", stsObj, cfile, configMount)
	}
	text, ok := cm.Data[path.Base(cfile)]
	if !ok {
		t.Fatalf("%v: no key %s", cmObj, path.Base(cfile))
	}
	props, err := properties.Parse(bytes.NewReader([]byte(text)))
	if err != nil {
		t.Fatal(err)
	}

	// Each pod's configuration: the file, then its ROCKETNS_ variables
	// with the downward-API values that pod gets.
	var env []envVar
	if cs := extra.Spec.Template.Spec.Containers; len(cs) == 1 {
		env = cs[0].Env
	}
	var peers []string
	for ordinal := range replicas {
		pod := fmt.Sprintf("%s-%d", stsObj.Metadata.Name, ordinal)
		vars := map[string]string{}
		var environ []string
		for _, e := range env {
			v := expandEnv(e.Value, vars)
			if e.ValueFrom != nil {
				switch f := e.ValueFrom.FieldRef; {
				case f != nil && f.FieldPath == "metadata.labels['apps.kubernetes.io/pod-index']":
					v = fmt.Sprint(ordinal)
				case f != nil && f.FieldPath == "metadata.name":
					v = pod
				default:
					t.Fatalf("%v: variable %s comes from a source this test does not know", stsObj, e.Name)
				}
			}
			vars[e.Name] = v
			environ = append(environ, e.Name+"="+v)
		}
		cfg := config.DefaultController()
		w, err := cfg.Apply(props)
		if err != nil || len(w) > 0 {
			t.Fatalf("%v: %v %q", cmObj, err, w)
		}
		envProps, err := config.FromEnv(environ)
		if err != nil {
			t.Fatalf("%s: %v", pod, err)
		}
		if _, err := cfg.Apply(envProps); err != nil {
			t.Fatalf("%s: %v", pod, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", pod, err)
		}
		k, err := cfg.Controller(false)
		if err != nil {
			t.Fatalf("%s: %v", pod, err)
		}
		m := k.Membership
		if len(m.Peers) != replicas {
			t.Errorf("%s: %d peers, %d replicas", pod, len(m.Peers), replicas)
		}
		// Its own peer entry is its own stable name, on the remoting port
		// the headless Service publishes.
		self := m.Self()
		wantAddr := fmt.Sprintf("%s.%s:%d", pod, spec.ServiceName, portByName["remoting"])
		if self.ServeAddr != wantAddr {
			t.Errorf("%s: its peer address %s, want %s", pod, self.ServeAddr, wantAddr)
		}
		if !servicePorts[portOf(t, "peer", self.ServeAddr)] {
			t.Errorf("%s: the headless Service does not publish port %s", pod, self.ServeAddr)
		}
		peers = append(peers, self.ID)
		// State on the pod's own volume.
		for key, p := range map[string]string{"controllerStorePath": k.StorePath, "configStorePath": k.ConfigStorePath} {
			onVolume := false
			for mount := range dataMounts {
				onVolume = onVolume || isUnder(p, mount)
			}
			if !onVolume {
				t.Errorf("%s: %s %s is not on a writable volume claim", pod, key, p)
			}
		}
		// Probes on the admin listener.
		adminPort := portOf(t, "adminListen", cfg.AdminListen)
		for _, pr := range []struct {
			p    *probe
			path string
		}{{c.ReadinessProbe, "/readyz"}, {c.LivenessProbe, "/healthz"}} {
			if pr.p == nil || pr.p.HTTPGet == nil || pr.p.HTTPGet.Path != pr.path || portByName[pr.p.HTTPGet.Port.str] != adminPort {
				t.Errorf("%v: no %s probe on the admin port %d", stsObj, pr.path, adminPort)
			}
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(peers)))) != replicas {
		t.Errorf("pods share a raft id: %q", peers)
	}

	// Voluntary disruptions leave a quorum.
	pdbObj := one("PodDisruptionBudget")
	pdb := decodeAs[podDisruptionBudget](t, pdbObj)
	if mu := pdb.Spec.MaxUnavailable; mu == nil || !mu.isInt || mu.num < 1 || mu.num > (replicas-1)/2 {
		t.Errorf("%v: maxUnavailable %v, want 1..%d so that a quorum stays", pdbObj, mu, (replicas-1)/2)
	}
	if !selects(pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("%v: does not select the pods", pdbObj)
	}
}
