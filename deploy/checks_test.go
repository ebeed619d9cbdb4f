package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/turncli/turncli/worker"
)

// The rules every rendered overlay keeps. Each check returns every violation it finds, so one
// run names them all.

// Labels and ports the rules know the workloads by.
const (
	nameLabel      = "app.kubernetes.io/name"
	componentLabel = "app.kubernetes.io/component"
	workerKeyLabel = "turncli.dev/worker-key"
	primaryGRPC    = 7420
	workerMetrics  = 7424
)

// sandboxCapabilities are what a worker adds to make and enter its sandboxes, and all it may
// add: SYS_ADMIN (namespaces, mount, mount_setattr, umount2, setns), SYS_CHROOT (setns into a
// mount namespace), SETUID and SETGID (each agent's own ids), SETPCAP (the shells' empty bounding set), CHOWN, FOWNER and
// DAC_OVERRIDE (agents' workspaces, pipes and logs), KILL (agents' processes). Spelled as the
// API has them: the API server refuses "CAP_SYS_ADMIN" beside allowPrivilegeEscalation: false.
var sandboxCapabilities = []corev1.Capability{
	"SYS_ADMIN", "SYS_CHROOT", "SETUID", "SETGID", "SETPCAP", "CHOWN", "FOWNER", "DAC_OVERRIDE", "KILL",
}

// podSecurityEnforce is the Namespace label naming the Pod Security Admission level enforced.
const podSecurityEnforce = "pod-security.kubernetes.io/enforce"

// utilizationMetric is the series the workers' autoscalers must target: the worker's own
// name for it, so a rename there fails here.
var utilizationMetric = "turncli_worker_" + worker.UtilizationMetric

// secretKeys says which Secrets exist and the keys each holds.
type secretKeys map[string]map[string]bool

func (o *rendered) secretKeys() secretKeys {
	out := secretKeys{}
	for _, s := range o.secrets {
		keys := map[string]bool{}
		for k := range s.Data {
			keys[k] = true
		}
		for k := range s.StringData {
			keys[k] = true
		}
		out[s.Name] = keys
	}
	return out
}

// check runs every rule over o; secrets are the Secrets that exist (the render's, and for an
// overlay whose Secrets the operator creates, those too).
func check(o *rendered, secrets secretKeys) []error {
	var errs []error
	for _, w := range o.workloads() {
		errs = append(errs, checkPod(w, o, secrets)...)
	}
	errs = append(errs, checkPrimaries(o)...)
	errs = append(errs, checkWorkers(o)...)
	errs = append(errs, checkServices(o)...)
	errs = append(errs, checkWorkerNetwork(o)...)
	errs = append(errs, checkPodSecurityAdmission(o)...)
	return errs
}

// checkPod: no privilege to gain, nothing writable but volumes, requests and probes, pinned
// images, and every Secret, ConfigMap and volume it names exists. A worker pod's container
// "worker" runs as root with its sandboxes' capabilities (sandboxContext); every other container
// is not root and has no capability (unprivileged).
func checkPod(w workload, o *rendered, secrets secretKeys) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(w.String()+": "+format, args...)) }
	spec := w.spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		fail("automountServiceAccountToken must be false")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		fail("shares a host namespace")
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if p := psc.AppArmorProfile; p != nil && p.Type == corev1.AppArmorProfileTypeUnconfined {
		fail("appArmorProfile Unconfined on the pod reaches every container: set it on the one that mounts")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		switch {
		case v.HostPath != nil:
			fail("volume %s is a hostPath", v.Name)
		case v.Secret != nil:
			errs = append(errs, secretExists(w, secrets, v.Secret.SecretName, v.Secret.Items)...)
		case v.ConfigMap != nil:
			if !slices.ContainsFunc(o.configMaps, func(c corev1.ConfigMap) bool { return c.Name == v.ConfigMap.Name }) {
				fail("volume %s names ConfigMap %s, which does not exist", v.Name, v.ConfigMap.Name)
			}
		case v.PersistentVolumeClaim != nil:
			fail("volume %s names claim %s: no PersistentVolumeClaim is rendered", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if w.labels[componentLabel] == "worker" && c.Name == "worker" {
			errs = append(errs, sandboxContext(w, c, psc)...)
		} else {
			errs = append(errs, unprivileged(w, c, psc)...)
		}
		if !isTrue(sc.ReadOnlyRootFilesystem) {
			fail("container %s: readOnlyRootFilesystem must be true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			fail("container %s: allowPrivilegeEscalation must be false", c.Name)
		}
		if isTrue(sc.Privileged) {
			fail("container %s is privileged", c.Name)
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = psc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			fail("container %s: seccompProfile must be RuntimeDefault", c.Name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			fail("container %s has no cpu and memory requests", c.Name)
		}
		if !pinned(c.Image) {
			fail("container %s: image %q has no tag or digest (or is :latest)", c.Name, c.Image)
		}
		if c.LivenessProbe == nil || c.ReadinessProbe == nil {
			fail("container %s lacks a liveness or readiness probe", c.Name)
		}
		if w.labels[nameLabel] == "turncli" && (w.labels[componentLabel] == "primary" || w.labels[componentLabel] == "worker") {
			errs = append(errs, healthProbes(w, c)...)
		}
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok && !slices.Contains(w.claims, m.Name) {
				fail("container %s mounts %s, which is not a volume of the pod", c.Name, m.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if ref := e.ValueFrom.SecretKeyRef; ref != nil {
				errs = append(errs, secretExists(w, secrets, ref.Name, []corev1.KeyToPath{{Key: ref.Key}})...)
			}
			if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil && !slices.ContainsFunc(o.configMaps, func(c corev1.ConfigMap) bool { return c.Name == ref.Name }) {
				fail("env %s names ConfigMap %s, which does not exist", e.Name, ref.Name)
			}
		}
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil {
				errs = append(errs, secretExists(w, secrets, from.SecretRef.Name, nil)...)
			}
		}
	}
	return errs
}

// containerFailures returns a function that adds a failure of container c of w to errs.
func containerFailures(w workload, c corev1.Container, errs *[]error) func(format string, args ...any) {
	return func(format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: container %s: "+format, append([]any{w, c.Name}, args...)...))
	}
}

// securityContext is c's security context, empty when it has none.
func securityContext(c corev1.Container) *corev1.SecurityContext {
	if c.SecurityContext == nil {
		return &corev1.SecurityContext{}
	}
	return c.SecurityContext
}

// unprivileged: not root, no capability, confined by the runtime's AppArmor profile.
func unprivileged(w workload, c corev1.Container, psc *corev1.PodSecurityContext) []error {
	var errs []error
	fail := containerFailures(w, c, &errs)
	sc := securityContext(c)
	switch {
	case !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot):
		fail("may run as root (runAsNonRoot)")
	case runAsUser(sc, psc) != nil && *runAsUser(sc, psc) == 0:
		fail("runs as uid 0")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		fail("must drop ALL capabilities and add none")
	}
	if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		fail("appArmorProfile Unconfined: only a worker, which mounts, may leave AppArmor")
	}
	return errs
}

// sandboxContext: a worker can make its sandboxes, and refuses to run without them. It runs as
// root, drops every capability and adds exactly sandboxCapabilities, leaves the runtime's
// AppArmor profile (which denies mount(2)), stays in the host's user namespace, and runs
// --isolation=required. Not privileged, no host namespace and seccomp RuntimeDefault are
// checked for every container.
func sandboxContext(w workload, c corev1.Container, psc *corev1.PodSecurityContext) []error {
	var errs []error
	fail := containerFailures(w, c, &errs)
	sc := securityContext(c)
	// The image's USER is not root: the manifest must say uid 0 itself.
	if uid := runAsUser(sc, psc); uid == nil || *uid != 0 || isTrue(sc.RunAsNonRoot) || isTrue(psc.RunAsNonRoot) {
		fail("must run as uid 0 (runAsUser: 0, no runAsNonRoot): only root makes sandboxes and switches agents to their own uids")
	}
	var drop, add []string
	if sc.Capabilities != nil {
		for _, d := range sc.Capabilities.Drop {
			drop = append(drop, string(d))
		}
		for _, a := range sc.Capabilities.Add {
			add = append(add, string(a))
		}
	}
	want := make([]string, len(sandboxCapabilities))
	for i, a := range sandboxCapabilities {
		want[i] = string(a)
	}
	slices.Sort(add)
	slices.Sort(want)
	if !slices.Contains(drop, "ALL") || !slices.Equal(add, want) {
		fail("must drop ALL capabilities and add exactly %v, what its sandboxes need; it adds %v", want, add)
	}
	if p := sc.AppArmorProfile; p == nil || p.Type != corev1.AppArmorProfileTypeUnconfined {
		fail("appArmorProfile must be Unconfined: the runtime's default AppArmor profile denies mount(2), so no sandbox could be made on a node with AppArmor")
	}
	if w.spec.HostUsers != nil && !*w.spec.HostUsers {
		fail("hostUsers: false puts the worker in a user namespace, where it can neither mount a sandbox's /proc nor switch to the agents' ids")
	}
	if got := flagValue(c.Args, "--isolation"); got != "required" {
		fail("the worker needs --isolation=required (has %q): a pod that cannot make sandboxes must exit, not run every agent's shells as one user", got)
	}
	return errs
}

// runAsUser is the uid a container runs as, if the manifest says.
func runAsUser(sc *corev1.SecurityContext, psc *corev1.PodSecurityContext) *int64 {
	if sc.RunAsUser != nil {
		return sc.RunAsUser
	}
	return psc.RunAsUser
}

// checkPodSecurityAdmission: a Namespace that holds workers admits them. Pod Security
// Admission's baseline and restricted levels refuse SYS_ADMIN and AppArmor Unconfined, so the
// workers' pods would never be created there.
func checkPodSecurityAdmission(o *rendered) []error {
	workers := slices.ContainsFunc(o.deployments, func(d appsv1.Deployment) bool {
		return d.Spec.Template.Labels[componentLabel] == "worker"
	})
	if !workers {
		return nil
	}
	var errs []error
	for _, ns := range o.namespaces {
		if level := ns.Labels[podSecurityEnforce]; level != "privileged" {
			errs = append(errs, fmt.Errorf("Namespace %s: %s is %q; the workers add SYS_ADMIN and run unconfined by AppArmor, which only \"privileged\" admits",
				ns.Name, podSecurityEnforce, level))
		}
	}
	return errs
}

// healthProbes: a turncli daemon is alive by /healthz and ready by /readyz, on a port it has.
func healthProbes(w workload, c corev1.Container) []error {
	var errs []error
	for _, p := range []struct {
		kind, path string
		probe      *corev1.Probe
	}{{"liveness", "/healthz", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path {
			errs = append(errs, fmt.Errorf("%s: container %s: the %s probe must GET %s", w, c.Name, p.kind, p.path))
			continue
		}
		if !hasPort(c, p.probe.HTTPGet.Port) {
			errs = append(errs, fmt.Errorf("%s: container %s: the %s probe's port %s is not one of its ports", w, c.Name, p.kind, p.probe.HTTPGet.Port.String()))
		}
	}
	return errs
}

func secretExists(w workload, secrets secretKeys, name string, items []corev1.KeyToPath) []error {
	keys, ok := secrets[name]
	if !ok {
		return []error{fmt.Errorf("%s names Secret %s, which does not exist", w, name)}
	}
	var errs []error
	for _, it := range items {
		if !keys[it.Key] {
			errs = append(errs, fmt.Errorf("%s names key %s of Secret %s, which it does not hold", w, it.Key, name))
		}
	}
	return errs
}

// checkPrimaries: two primaries sharing the lease, a disruption budget over them.
func checkPrimaries(o *rendered) []error {
	var errs []error
	var primary *workload
	for _, w := range o.workloads() {
		if w.labels[componentLabel] == "primary" {
			primary = &w
		}
	}
	if primary == nil {
		return []error{fmt.Errorf("no primary Deployment")}
	}
	for _, d := range o.deployments {
		if d.Name == primary.name && (d.Spec.Replicas == nil || *d.Spec.Replicas != 2) {
			errs = append(errs, fmt.Errorf("%s: want 2 replicas, one leading and one standing by", primary))
		}
	}
	args := primary.spec.Containers[0].Args
	for _, want := range []string{"--active-standby", "--workers-only"} {
		if !slices.Contains(args, want) {
			errs = append(errs, fmt.Errorf("%s: the primary needs %s", primary, want))
		}
	}
	if dir := flagValue(args, "--state-dir"); !onEmptyDir(*primary, primary.spec.Containers[0], dir) {
		errs = append(errs, fmt.Errorf("%s: the state directory %q must lie below an emptyDir mount", primary, dir))
	}
	for _, d := range o.deployments {
		// A standby is never Ready, so a rolling update would wait for it forever.
		if d.Name == primary.name && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			errs = append(errs, fmt.Errorf("%s: the primaries must be replaced (strategy Recreate), not rolled", primary))
		}
	}
	if !hasPort(primary.spec.Containers[0], intstr.FromInt32(primaryGRPC)) {
		errs = append(errs, fmt.Errorf("%s: the primary does not expose gRPC on %d", primary, primaryGRPC))
	}
	covered := false
	for _, pdb := range o.disruptions {
		if selects(pdb.Spec.Selector, primary.labels) {
			covered = true
		}
	}
	if !covered {
		errs = append(errs, fmt.Errorf("%s: no PodDisruptionBudget selects the primaries", primary))
	}
	return errs
}

// checkWorkers: each key's workers run from an emptyDir state directory, under the key their
// label names, with that key's credential, scaled by one autoscaler on the utilization gauge.
func checkWorkers(o *rendered) []error {
	var errs []error
	n := 0
	for _, d := range o.deployments {
		if d.Spec.Template.Labels[componentLabel] != "worker" {
			continue
		}
		n++
		w := workload{"Deployment", d.Name, d.Spec.Template.Labels, &d.Spec.Template.Spec, nil}
		c := d.Spec.Template.Spec.Containers[0]
		key := w.labels[workerKeyLabel]
		if got := envValue(c, "MINDROOM_WORKER_KEY"); key == "" || got != key {
			errs = append(errs, fmt.Errorf("%s: MINDROOM_WORKER_KEY %q, label %s %q: want the same key", w, got, workerKeyLabel, key))
		}
		if ref := envSecret(c, "MINDROOM_WORKER_CREDENTIAL"); ref == nil || ref.Key != key+".token" {
			errs = append(errs, fmt.Errorf("%s: MINDROOM_WORKER_CREDENTIAL must come from the Secret key %s.token", w, key))
		}
		if dir := flagValue(c.Args, "--state-dir"); !onEmptyDir(w, c, dir) {
			errs = append(errs, fmt.Errorf("%s: the state directory %q must lie below an emptyDir mount", w, dir))
		}
		if n, err := strconv.Atoi(flagValue(c.Args, "--capacity")); err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s: --capacity must be positive, or its utilization is always 0 and it never scales", w))
		}
		scaled := 0
		for _, h := range o.autoscalers {
			if h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != d.Name {
				continue
			}
			scaled++
			if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Pods == nil || h.Spec.Metrics[0].Pods.Metric.Name != utilizationMetric {
				errs = append(errs, fmt.Errorf("%s: its autoscaler %s must scale on the Pods metric %s alone", w, h.Name, utilizationMetric))
			}
		}
		if scaled != 1 {
			errs = append(errs, fmt.Errorf("%s: %d autoscalers target it, want 1", w, scaled))
		}
	}
	if n == 0 {
		errs = append(errs, fmt.Errorf("no worker Deployment"))
	}
	for _, h := range o.autoscalers {
		if !slices.ContainsFunc(o.deployments, func(d appsv1.Deployment) bool { return d.Name == h.Spec.ScaleTargetRef.Name }) {
			errs = append(errs, fmt.Errorf("autoscaler %s targets %s, which does not exist", h.Name, h.Spec.ScaleTargetRef.Name))
		}
	}
	return errs
}

// checkServices: every Service selects pods, and every port it targets is one of theirs.
func checkServices(o *rendered) []error {
	var errs []error
	for _, s := range o.services {
		var matched []workload
		for _, w := range o.workloads() {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.labels)) {
				matched = append(matched, w)
			}
		}
		if len(matched) == 0 {
			errs = append(errs, fmt.Errorf("Service %s selects no pods", s.Name))
			continue
		}
		for _, p := range s.Spec.Ports {
			for _, w := range matched {
				if !slices.ContainsFunc(w.spec.Containers, func(c corev1.Container) bool { return hasPort(c, p.TargetPort) }) {
					errs = append(errs, fmt.Errorf("Service %s: port %s targets %s, which %s does not expose", s.Name, p.Name, p.TargetPort.String(), w))
				}
			}
		}
	}
	return errs
}

// checkWorkerNetwork: one policy isolates every worker both ways, and lets it reach the
// primaries' gRPC port and the cluster's DNS, nothing else.
func checkWorkerNetwork(o *rendered) []error {
	var errs []error
	var primaryLabels map[string]string
	for _, w := range o.workloads() {
		if w.labels[componentLabel] == "primary" {
			primaryLabels = w.labels
		}
	}
	for _, d := range o.deployments {
		podLabels := d.Spec.Template.Labels
		if podLabels[componentLabel] != "worker" {
			continue
		}
		isolated := false
		for _, np := range o.networkPolicies {
			if !selects(&np.Spec.PodSelector, podLabels) {
				continue
			}
			if !slices.Contains(np.Spec.PolicyTypes, "Ingress") || !slices.Contains(np.Spec.PolicyTypes, "Egress") {
				errs = append(errs, fmt.Errorf("NetworkPolicy %s must restrict both ingress and egress", np.Name))
			}
			isolated = true
			for i, rule := range np.Spec.Ingress {
				fromMonitoring := len(rule.From) > 0
				for _, peer := range rule.From {
					fromMonitoring = fromMonitoring && peer.IPBlock == nil && peer.PodSelector == nil &&
						peer.NamespaceSelector != nil && len(peer.NamespaceSelector.MatchLabels)+len(peer.NamespaceSelector.MatchExpressions) > 0
				}
				if !fromMonitoring || !onlyPorts(rule.Ports, workerMetrics) {
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: ingress rule %d lets more than a selected namespace reach the metrics port", np.Name, i))
				}
			}
			for i, rule := range np.Spec.Egress {
				toPrimary := len(rule.To) > 0 && primaryLabels != nil
				toDNS := len(rule.To) > 0
				for _, peer := range rule.To {
					toPrimary = toPrimary && peer.NamespaceSelector == nil && peer.IPBlock == nil && selects(peer.PodSelector, primaryLabels)
					toDNS = toDNS && peer.NamespaceSelector != nil && peer.PodSelector != nil && peer.PodSelector.MatchLabels["k8s-app"] == "kube-dns"
				}
				switch {
				case toPrimary && onlyPorts(rule.Ports, primaryGRPC):
				case toDNS && onlyPorts(rule.Ports, 53):
				default:
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: egress rule %d lets workers reach more than the primary's gRPC port and DNS", np.Name, i))
				}
			}
		}
		if !isolated {
			errs = append(errs, fmt.Errorf("Deployment/%s: no NetworkPolicy selects its workers", d.Name))
		}
	}
	return errs
}

// onlyPorts reports whether ports names port and nothing else (an empty list is every port).
func onlyPorts(ports []networkingv1.NetworkPolicyPort, port int32) bool {
	if len(ports) == 0 {
		return false
	}
	for _, p := range ports {
		if p.Port == nil || p.Port.IntValue() != int(port) || p.EndPort != nil {
			return false
		}
	}
	return true
}

func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && !s.Empty() && s.Matches(labels.Set(set))
}

func hasPort(c corev1.Container, port intstr.IntOrString) bool {
	for _, p := range c.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return true
		}
	}
	return false
}

// onEmptyDir reports whether dir lies strictly below an emptyDir's mount: the mount's root is
// root's, and a daemon that is not root could not set its state directory's mode there.
func onEmptyDir(w workload, c corev1.Container, dir string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range w.spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil {
				return true
			}
		}
	}
	return false
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func envSecret(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func flagValue(args []string, flag string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// pinned reports whether an image names a digest, or a tag other than latest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	i := strings.LastIndex(image, ":")
	return i > strings.LastIndex(image, "/") && image[i+1:] != "latest"
}

func isTrue(b *bool) bool { return b != nil && *b }
