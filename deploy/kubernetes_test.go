// The Kubernetes manifests under kubernetes/, decoded into just the fields
// checked here, and the checks that tie them to each other and to the
// ConfigMap's properties (ports, probes, volumes, memory, selectors).

package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type objectMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type object struct {
	file       string
	doc        int
	node       *yaml.Node
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
}

func (o *object) String() string {
	return fmt.Sprintf("%s (document %d): %s/%s", o.file, o.doc, o.Kind, o.Metadata.Name)
}

// intOrString is a port given as a number or as a container port name.
type intOrString struct {
	isInt bool
	num   int
	str   string
}

func (v *intOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a port number or name", n.Line)
	}
	if n.Tag == "!!int" {
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return err
		}
		*v = intOrString{isInt: true, num: i}
		return nil
	}
	*v = intOrString{str: n.Value}
	return nil
}

func (v intOrString) String() string {
	if v.isInt {
		return strconv.Itoa(v.num)
	}
	return strconv.Quote(v.str)
}

type labelSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []any             `yaml:"matchExpressions"`
}

type kustomization struct {
	Resources []string    `yaml:"resources"`
	Images    []kustImage `yaml:"images"`
}

type kustImage struct {
	Name string `yaml:"name"`
}

type service struct {
	Spec struct {
		Type                     string            `yaml:"type"`
		ClusterIP                string            `yaml:"clusterIP"`
		PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
		Selector                 map[string]string `yaml:"selector"`
		Ports                    []struct {
			Name       string      `yaml:"name"`
			Port       int         `yaml:"port"`
			TargetPort intOrString `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type probe struct {
	HTTPGet *struct {
		Path string      `yaml:"path"`
		Port intOrString `yaml:"port"`
	} `yaml:"httpGet"`
}

type container struct {
	Name  string          `yaml:"name"`
	Image string          `yaml:"image"`
	Args  []string        `yaml:"args"`
	Ports []containerPort `yaml:"ports"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom any    `yaml:"valueFrom"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type statefulSet struct {
	Spec struct {
		ServiceName string        `yaml:"serviceName"`
		Replicas    *int          `yaml:"replicas"`
		Selector    labelSelector `yaml:"selector"`
		Template    struct {
			Metadata objectMeta `yaml:"metadata"`
			Spec     struct {
				Affinity struct {
					PodAntiAffinity struct {
						Required []struct {
							LabelSelector labelSelector `yaml:"labelSelector"`
						} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
						Preferred []struct {
							PodAffinityTerm struct {
								LabelSelector labelSelector `yaml:"labelSelector"`
							} `yaml:"podAffinityTerm"`
						} `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
					} `yaml:"podAntiAffinity"`
				} `yaml:"affinity"`
				EnableServiceLinks        *bool `yaml:"enableServiceLinks"`
				TopologySpreadConstraints []struct {
					LabelSelector labelSelector `yaml:"labelSelector"`
				} `yaml:"topologySpreadConstraints"`
				SecurityContext struct {
					RunAsUser    *int  `yaml:"runAsUser"`
					RunAsGroup   *int  `yaml:"runAsGroup"`
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name  string `yaml:"name"`
						Items []struct {
							Key  string `yaml:"key"`
							Path string `yaml:"path"`
						} `yaml:"items"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata objectMeta `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

type configMap struct {
	Data map[string]string `yaml:"data"`
}

type podDisruptionBudget struct {
	Spec struct {
		MinAvailable   *intOrString  `yaml:"minAvailable"`
		MaxUnavailable *intOrString  `yaml:"maxUnavailable"`
		Selector       labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

// readYAMLDocuments decodes every document of a file (empty ones skipped).
func readYAMLDocuments(t *testing.T, name string) []*object {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, name)))
	var out []*object
	for i := 1; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, i, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null" {
			continue
		}
		o := &object{file: name, doc: i, node: &n}
		if err := n.Decode(o); err != nil {
			t.Fatalf("%s: document %d: %v", name, i, err)
		}
		out = append(out, o)
	}
}

func decodeAs[T any](t *testing.T, o *object) *T {
	t.Helper()
	v := new(T)
	if err := o.node.Decode(v); err != nil {
		t.Fatalf("%v: %v", o, err)
	}
	return v
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// selects reports whether a selector's labels are all among labels (and the
// selector is not empty: an empty selector matches everything).
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

// parseQuantity reads a Kubernetes memory quantity in bytes: a plain number,
// or one with a binary (Ki..Ei) or decimal (k, M..E) suffix.
func parseQuantity(q string) (int64, error) {
	suffixes := []struct {
		s string
		m int64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
		{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
	}
	for _, s := range suffixes {
		if n, ok := strings.CutSuffix(q, s.s); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("quantity %q: want a whole number before %s", q, s.s)
			}
			return v * s.m, nil
		}
	}
	v, err := strconv.ParseInt(q, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("quantity %q: not a whole number of bytes with a known suffix", q)
	}
	return v, nil
}

// parseGoMemLimit reads a GOMEMLIMIT value in bytes as the Go runtime does
// (B, KiB, MiB, GiB, TiB; no decimal units), whole numbers only.
func parseGoMemLimit(s string) (int64, error) {
	for _, u := range []struct {
		s string
		m int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.s); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("GOMEMLIMIT %q: want a positive whole number before %s", s, u.s)
			}
			return v * u.m, nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("GOMEMLIMIT %q: want a byte count with an optional B, KiB, MiB, GiB or TiB unit", s)
	}
	return v, nil
}

func TestQuantityParsers(t *testing.T) {
	for q, want := range map[string]int64{"512Mi": 512 << 20, "1Gi": 1 << 30, "500M": 500e6, "1024": 1024, "64k": 64000} {
		if got, err := parseQuantity(q); err != nil || got != want {
			t.Errorf("parseQuantity(%q) = %d, %v; want %d", q, got, err, want)
		}
	}
	for _, q := range []string{"", "1.5Gi", "512MB", "x"} {
		if _, err := parseQuantity(q); err == nil {
			t.Errorf("parseQuantity(%q): no error", q)
		}
	}
	for s, want := range map[string]int64{"400MiB": 400 << 20, "1GiB": 1 << 30, "1048576": 1 << 20, "100B": 100} {
		if got, err := parseGoMemLimit(s); err != nil || got != want {
			t.Errorf("parseGoMemLimit(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "400Mi", "400MB", "off", "-1MiB"} {
		if _, err := parseGoMemLimit(s); err == nil {
			t.Errorf("parseGoMemLimit(%q): no error", s)
		}
	}
}

func TestKubernetes(t *testing.T) {
	// kustomization.yaml lists every manifest, and only existing ones.
	kobjs := readYAMLDocuments(t, filepath.Join(kubeDir, "kustomization.yaml"))
	if len(kobjs) != 1 || kobjs[0].Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml: want one Kustomization document")
	}
	kust := decodeAs[kustomization](t, kobjs[0])
	entries, err := os.ReadDir(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	var yamlFiles []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) && n != "kustomization.yaml" {
			yamlFiles = append(yamlFiles, n)
		}
	}
	resources := slices.Clone(kust.Resources)
	slices.Sort(resources)
	if len(slices.Compact(slices.Clone(resources))) != len(resources) {
		t.Errorf("kustomization.yaml: a resource is listed twice: %q", kust.Resources)
	}
	for _, r := range resources {
		if _, err := os.Stat(filepath.Join(kubeDir, filepath.FromSlash(r))); err != nil {
			t.Errorf("kustomization.yaml: resource %s: %v", r, err)
		}
	}
	if !slices.Equal(resources, yamlFiles) {
		t.Errorf("kustomization.yaml resources %q, want every manifest of the directory %q", resources, yamlFiles)
	}

	// Every manifest, by kind.
	byKind := map[string][]*object{}
	for _, f := range yamlFiles {
		for _, o := range readYAMLDocuments(t, filepath.Join(kubeDir, f)) {
			if o.Kind == "" || o.APIVersion == "" || o.Metadata.Name == "" {
				t.Errorf("%s document %d: apiVersion, kind and metadata.name are required", f, o.doc)
				continue
			}
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
	spec := &sts.Spec
	podLabels := spec.Template.Metadata.Labels

	if spec.Replicas == nil || *spec.Replicas < 3 {
		t.Errorf("%v: replicas %v, want at least 3 NameServers", stsObj, derefOr(spec.Replicas, -1))
	}
	if len(spec.Selector.MatchExpressions) > 0 {
		t.Errorf("%v: matchExpressions are not checked by this test; use matchLabels", stsObj)
	}
	if !selects(spec.Selector.MatchLabels, podLabels) {
		t.Errorf("%v: selector %v does not select the pod template's labels %v", stsObj, spec.Selector.MatchLabels, podLabels)
	}

	// Spreading the pods only works if the selectors find them.
	var spreadSelectors []labelSelector
	for _, r := range spec.Template.Spec.Affinity.PodAntiAffinity.Required {
		spreadSelectors = append(spreadSelectors, r.LabelSelector)
	}
	for _, p := range spec.Template.Spec.Affinity.PodAntiAffinity.Preferred {
		spreadSelectors = append(spreadSelectors, p.PodAffinityTerm.LabelSelector)
	}
	for _, c := range spec.Template.Spec.TopologySpreadConstraints {
		spreadSelectors = append(spreadSelectors, c.LabelSelector)
	}
	for _, sel := range spreadSelectors {
		if len(sel.MatchExpressions) > 0 || !selects(sel.MatchLabels, podLabels) {
			t.Errorf("%v: an anti-affinity or topology spread selector %v does not select the pod labels %v", stsObj, sel.MatchLabels, podLabels)
		}
	}

	// The container.
	if len(spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%v: want one container, found %d", stsObj, len(spec.Template.Spec.Containers))
	}
	c := &spec.Template.Spec.Containers[0]
	portByName := map[string]int{}
	for _, p := range c.Ports {
		if p.Name != "" {
			portByName[p.Name] = p.ContainerPort
		}
	}
	resolve := func(what string, p intOrString) int {
		t.Helper()
		if p.isInt {
			return p.num
		}
		n, ok := portByName[p.str]
		if !ok {
			t.Errorf("%v: %s names port %s, which the container does not declare", stsObj, what, p)
		}
		return n
	}
	// Kustomize's images: rewrites the container image only when the names match.
	if !slices.ContainsFunc(kust.Images, func(i kustImage) bool { return i.Name == c.Image }) {
		t.Errorf("kustomization.yaml images do not name the container image %q: its tag cannot be set there", c.Image)
	}

	// The ConfigMap the config volume mounts, and the file -c reads from it.
	cmObj := one("ConfigMap")
	cm := decodeAs[configMap](t, cmObj)
	cfile, ok := configFileArg(c.Args)
	if !ok {
		t.Fatalf("%v: container args %q have no -c <file>", stsObj, c.Args)
	}
	volumes := map[string]string{} // volume name -> ConfigMap name ("" if not one)
	var configMount string
	for _, v := range spec.Template.Spec.Volumes {
		volumes[v.Name] = ""
		if v.ConfigMap != nil {
			volumes[v.Name] = v.ConfigMap.Name
		}
	}
	claims := map[string]bool{}
	for _, vct := range spec.VolumeClaimTemplates {
		claims[vct.Metadata.Name] = true
	}
	var dataMounts []string
	for _, m := range c.VolumeMounts {
		cmName, isVolume := volumes[m.Name]
		switch {
		case claims[m.Name]:
			if !m.ReadOnly {
				dataMounts = append(dataMounts, m.MountPath)
			}
		case !isVolume:
			t.Errorf("%v: volumeMount %s names no volume or volumeClaimTemplate", stsObj, m.Name)
		case cmName == cmObj.Metadata.Name:
			configMount = m.MountPath
		}
	}
	if configMount == "" {
		t.Fatalf("%v: no volume of ConfigMap %s is mounted", stsObj, cmObj.Metadata.Name)
	}
	if !isUnder(cfile, configMount) {
		t.Fatalf("%v: -c %s is not inside the config volume's mountPath %s", stsObj, cfile, configMount)
	}
	key := strings.TrimPrefix(path.Clean(cfile), path.Clean(configMount)+"/")
	for _, v := range spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cmObj.Metadata.Name && len(v.ConfigMap.Items) > 0 {
			mapped := ""
			for _, it := range v.ConfigMap.Items {
				if it.Path == key {
					mapped = it.Key
				}
			}
			key = mapped
		}
	}
	text, ok := cm.Data[key]
	if !ok {
		t.Fatalf("%v: no data key %q for -c %s", cmObj, key, cfile)
	}
	cfg := loadConfig(t, cmObj.String()+" "+key, []byte(text))

	if !slices.ContainsFunc(dataMounts, func(m string) bool { return isUnder(cfg.KVConfigPath, m) }) {
		t.Errorf("%v: kvConfigPath %s is not under the writable data volume's mountPath %q", cmObj, cfg.KVConfigPath, dataMounts)
	}

	// Ports: the remoting port is listenPort, the probes' port is adminListen's.
	if !slices.ContainsFunc(c.Ports, func(p containerPort) bool { return p.ContainerPort == cfg.ListenPort }) {
		t.Errorf("%v: no containerPort equals listenPort %d", stsObj, cfg.ListenPort)
	}
	if cfg.AdminListen == "" {
		t.Fatalf("%v: adminListen is not set: the probes have nothing to ask", cmObj)
	}
	adminPort := portOf(t, "adminListen", cfg.AdminListen)
	for _, pr := range []struct {
		name string
		p    *probe
		path string
	}{{"readinessProbe", c.ReadinessProbe, "/readyz"}, {"livenessProbe", c.LivenessProbe, "/healthz"}} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("%v: no %s.httpGet", stsObj, pr.name)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("%v: %s path %q, want %s", stsObj, pr.name, pr.p.HTTPGet.Path, pr.path)
		}
		if pr.p.HTTPGet.Port.isInt {
			t.Errorf("%v: %s port %s: name the admin container port instead", stsObj, pr.name, pr.p.HTTPGet.Port)
		}
		if got := resolve(pr.name+" port", pr.p.HTTPGet.Port); got != adminPort {
			t.Errorf("%v: %s port %s is containerPort %d, adminListen %s listens on %d", stsObj, pr.name, pr.p.HTTPGet.Port, got, cfg.AdminListen, adminPort)
		}
	}
	if p, ok := spec.Template.Metadata.Annotations["prometheus.io/port"]; ok && p != strconv.Itoa(adminPort) {
		t.Errorf("%v: prometheus.io/port %s, /metrics is on the adminListen port %d", stsObj, p, adminPort)
	}

	// Service variables share the ROCKETNS_ prefix of the settings taken
	// from the environment; the pods are not given any.
	if esl := spec.Template.Spec.EnableServiceLinks; esl == nil || *esl {
		t.Errorf("%v: enableServiceLinks is not false", stsObj)
	}

	// Security: the image's uid, not root.
	sc := spec.Template.Spec.SecurityContext
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%v: pod securityContext.runAsNonRoot is not true", stsObj)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != containerUID {
		t.Errorf("%v: pod securityContext.runAsUser %d, want %d (the image's USER)", stsObj, derefOr(sc.RunAsUser, -1), containerUID)
	}
	if sc.RunAsGroup != nil && *sc.RunAsGroup != containerGID {
		t.Errorf("%v: pod securityContext.runAsGroup %d, want %d (the image's USER)", stsObj, *sc.RunAsGroup, containerGID)
	}

	// Memory: a limit, a request within it, and GOMEMLIMIT below the limit.
	limitText, ok := c.Resources.Limits["memory"]
	if !ok {
		t.Errorf("%v: no memory limit", stsObj)
	} else {
		limit, err := parseQuantity(limitText)
		if err != nil {
			t.Fatalf("%v: memory limit: %v", stsObj, err)
		}
		if reqText, ok := c.Resources.Requests["memory"]; ok {
			req, err := parseQuantity(reqText)
			if err != nil {
				t.Fatalf("%v: memory request: %v", stsObj, err)
			}
			if req > limit {
				t.Errorf("%v: memory request %s above the limit %s", stsObj, reqText, limitText)
			}
		}
		found := false
		for _, e := range c.Env {
			if e.Name != "GOMEMLIMIT" {
				continue
			}
			found = true
			if e.ValueFrom != nil {
				t.Errorf("%v: GOMEMLIMIT from valueFrom is not checked by this test", stsObj)
				continue
			}
			gml, err := parseGoMemLimit(e.Value)
			if err != nil {
				t.Errorf("%v: %v", stsObj, err)
			} else if gml >= limit {
				t.Errorf("%v: GOMEMLIMIT %s is not below the memory limit %s", stsObj, e.Value, limitText)
			}
		}
		if !found {
			t.Errorf("%v: no GOMEMLIMIT: the Go heap grows to the memory limit before collecting harder", stsObj)
		}
	}

	// Services: the headless one the StatefulSet names, and every Service's
	// target ports exist.
	var headless *object
	perPod := map[int]string{} // ordinal -> per-pod Service
	for _, o := range byKind["Service"] {
		svc := decodeAs[service](t, o)
		// A port without targetPort targets the same number.
		target := func(port int, tp intOrString) int {
			if !tp.isInt && tp.str == "" {
				return port
			}
			return resolve(fmt.Sprintf("%s port %d targetPort", o.Metadata.Name, port), tp)
		}
		for _, p := range svc.Spec.Ports {
			target(p.Port, p.TargetPort)
		}
		if o.Metadata.Name != spec.ServiceName {
			// Per-pod Services select one pod of the StatefulSet by name.
			if pod, ok := svc.Spec.Selector["statefulset.kubernetes.io/pod-name"]; ok {
				ord, err := strconv.Atoi(strings.TrimPrefix(pod, stsObj.Metadata.Name+"-"))
				if err != nil || !strings.HasPrefix(pod, stsObj.Metadata.Name+"-") || spec.Replicas == nil || ord < 0 || ord >= *spec.Replicas {
					t.Errorf("%v: selects pod %s, not one of the StatefulSet's", o, pod)
				} else if prev, dup := perPod[ord]; dup {
					t.Errorf("%v: pod %s already has per-pod Service %s", o, pod, prev)
				} else {
					perPod[ord] = o.Metadata.Name
				}
			}
			continue
		}
		headless = o
		if svc.Spec.ClusterIP != "None" {
			t.Errorf("%v: clusterIP %q, want None (headless: a DNS name per pod)", o, svc.Spec.ClusterIP)
		}
		if !svc.Spec.PublishNotReadyAddresses {
			t.Errorf("%v: publishNotReadyAddresses is not true: brokers could not reach a NameServer during needWaitForService", o)
		}
		if !selects(svc.Spec.Selector, podLabels) {
			t.Errorf("%v: selector %v does not select the pod labels %v", o, svc.Spec.Selector, podLabels)
		}
		hasRemoting := false
		for _, p := range svc.Spec.Ports {
			if p.Port == cfg.ListenPort {
				hasRemoting = true
				if got := target(p.Port, p.TargetPort); got != cfg.ListenPort {
					t.Errorf("%v: port %d targets containerPort %d, not listenPort %d", o, p.Port, got, cfg.ListenPort)
				}
			}
		}
		if !hasRemoting {
			t.Errorf("%v: no port %d", o, cfg.ListenPort)
		}
	}
	if headless == nil {
		t.Errorf("%v: serviceName %q names no Service", stsObj, spec.ServiceName)
	}
	// Per-pod Services, when there are any, give every pod a stable IP.
	if len(perPod) > 0 && spec.Replicas != nil {
		for i := range *spec.Replicas {
			if _, ok := perPod[i]; !ok {
				t.Errorf("%v: pod %s-%d has no per-pod Service like the others", stsObj, stsObj.Metadata.Name, i)
			}
		}
	}

	// The PodDisruptionBudget covers the same pods.
	pdbObj := one("PodDisruptionBudget")
	pdb := decodeAs[podDisruptionBudget](t, pdbObj)
	if len(pdb.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("%v: matchExpressions are not checked by this test; use matchLabels", pdbObj)
	}
	if !selects(pdb.Spec.Selector.MatchLabels, podLabels) || !maps.Equal(pdb.Spec.Selector.MatchLabels, spec.Selector.MatchLabels) {
		t.Errorf("%v: selector %v, want the StatefulSet's %v", pdbObj, pdb.Spec.Selector.MatchLabels, spec.Selector.MatchLabels)
	}
	if pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
		t.Errorf("%v: neither minAvailable nor maxUnavailable", pdbObj)
	}
}
