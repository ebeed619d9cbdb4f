package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Every overlay renders, decodes strictly and keeps every rule. Production's Secrets are made
// by the operator with the commands docs/DEPLOY.md gives, so those commands are what says
// they exist there.
func TestEveryOverlayKeepsTheRules(t *testing.T) {
	for _, tc := range []struct {
		overlay  string
		operator secretKeys // Secrets the operator creates before applying
	}{
		{"development", nil},
		{"production", operatorSecrets(t)},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			o := render(t, filepath.Join("overlays", tc.overlay))
			secrets := o.secretKeys()
			for name, keys := range tc.operator {
				secrets[name] = keys
			}
			for _, err := range check(o, secrets) {
				t.Error(err)
			}
			if len(o.namespaces) != 1 {
				t.Errorf("%d Namespaces rendered, want the overlay's own", len(o.namespaces))
			}
		})
	}
}

func TestProductionHoldsNoSecretAndRunsASecondWorkerKey(t *testing.T) {
	o := render(t, filepath.Join("overlays", "production"))
	if len(o.secrets) != 0 {
		t.Errorf("production renders %d Secrets; the operator creates them", len(o.secrets))
	}
	var keys []string
	for _, d := range o.deployments {
		if k := d.Spec.Template.Labels[workerKeyLabel]; k != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"build", "default"}) {
		t.Errorf("worker keys %v, want build and default", keys)
	}
}

// operatorSecrets reads the Secrets, and their keys, that docs/DEPLOY.md has the operator
// create with `kubectl create secret generic NAME --from-literal=KEY=… --from-file=KEY=…`.
func operatorSecrets(t *testing.T) secretKeys {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(doc), "\\\n", " ")
	out := secretKeys{}
	for _, m := range regexp.MustCompile(`create secret generic ([a-z0-9-]+)([^\n]*)`).FindAllStringSubmatch(text, -1) {
		keys := map[string]bool{}
		for _, k := range regexp.MustCompile(`--from-(?:literal|file)=([A-Za-z0-9._-]+)=`).FindAllStringSubmatch(m[2], -1) {
			keys[k[1]] = true
		}
		out[m[1]] = keys
	}
	if len(out) == 0 {
		t.Fatal("docs/DEPLOY.md has no `kubectl create secret generic` command")
	}
	return out
}

// The rules can fail: each mutation of a good render breaks one, and the check names it.
func TestTheRulesCatchWhatTheyGuard(t *testing.T) {
	worker := func(o *rendered) *corev1.PodSpec {
		for i := range o.deployments {
			if o.deployments[i].Spec.Template.Labels[componentLabel] == "worker" {
				return &o.deployments[i].Spec.Template.Spec
			}
		}
		t.Fatal("no worker")
		return nil
	}
	primary := func(o *rendered) *corev1.PodSpec {
		for i := range o.deployments {
			if o.deployments[i].Spec.Template.Labels[componentLabel] == "primary" {
				return &o.deployments[i].Spec.Template.Spec
			}
		}
		t.Fatal("no primary")
		return nil
	}
	// setCaps replaces the worker's added capabilities.
	setCaps := func(o *rendered, caps ...corev1.Capability) {
		worker(o).Containers[0].SecurityContext.Capabilities.Add = caps
	}
	// isolation replaces the worker's --isolation flag (drops it when arg is empty).
	isolation := func(o *rendered, arg string) {
		c := &worker(o).Containers[0]
		i := slices.IndexFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--isolation") })
		if i < 0 {
			t.Fatal("the worker has no --isolation flag")
		}
		if arg == "" {
			c.Args = slices.Delete(c.Args, i, i+1)
		} else {
			c.Args[i] = arg
		}
	}
	uid := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name   string
		mutate func(*rendered)
		want   string
	}{
		{"AWritableRootFilesystem", func(o *rendered) {
			f := false
			worker(o).Containers[0].SecurityContext.ReadOnlyRootFilesystem = &f
		}, "readOnlyRootFilesystem"},
		{"AServiceAccountToken", func(o *rendered) { worker(o).AutomountServiceAccountToken = nil }, "automountServiceAccountToken"},
		{"APrimaryWithACapability", func(o *rendered) {
			primary(o).Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		}, "drop ALL capabilities and add none"},
		{"APrimaryWithTheWorkersCapabilities", func(o *rendered) {
			primary(o).Containers[0].SecurityContext.Capabilities.Add = sandboxCapabilities
		}, "drop ALL capabilities and add none"},
		{"APrimaryThatMayRunAsRoot", func(o *rendered) {
			primary(o).SecurityContext.RunAsNonRoot = nil
			primary(o).Containers[0].SecurityContext.RunAsNonRoot = nil
		}, "runAsNonRoot"},
		{"APrimaryAsRoot", func(o *rendered) { primary(o).SecurityContext.RunAsUser = uid(0) }, "runs as uid 0"},
		{"APrimaryUnconfined", func(o *rendered) {
			primary(o).Containers[0].SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, "only a worker, which mounts, may leave AppArmor"},
		{"APrimaryRunningLocalShells", func(o *rendered) {
			c := &primary(o).Containers[0]
			c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return a == "--workers-only" })
		}, "the primary needs --workers-only"},
		{"PrivilegeEscalation", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}, "allowPrivilegeEscalation"},
		{"NoSeccomp", func(o *rendered) { worker(o).SecurityContext.SeccompProfile = nil }, "seccompProfile"},
		{"AWorkerUnconfinedBySeccomp", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, "seccompProfile must be RuntimeDefault"},
		{"AWorkerNotRoot", func(o *rendered) { worker(o).SecurityContext.RunAsUser = uid(65532) }, "must run as uid 0"},
		{"AWorkerAsTheImagesUser", func(o *rendered) {
			worker(o).SecurityContext.RunAsUser = nil
			worker(o).Containers[0].SecurityContext.RunAsUser = nil
		}, "must run as uid 0"},
		{"AWorkerToldRunAsNonRoot", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.RunAsNonRoot = &[]bool{true}[0]
		}, "must run as uid 0"},
		{"AWorkerWithAnExtraCapability", func(o *rendered) {
			setCaps(o, append(slices.Clone(sandboxCapabilities), "NET_ADMIN")...)
		}, "add exactly"},
		{"AWorkerWithoutSysAdmin", func(o *rendered) {
			setCaps(o, slices.DeleteFunc(slices.Clone(sandboxCapabilities), func(c corev1.Capability) bool { return c == "SYS_ADMIN" })...)
		}, "add exactly"},
		{"AWorkerWithoutSysChroot", func(o *rendered) {
			setCaps(o, slices.DeleteFunc(slices.Clone(sandboxCapabilities), func(c corev1.Capability) bool { return c == "SYS_CHROOT" })...)
		}, "add exactly"},
		{"AWorkerSpellingCAP_SYS_ADMIN", func(o *rendered) {
			caps := slices.Clone(sandboxCapabilities)
			caps[slices.Index(caps, "SYS_ADMIN")] = "CAP_SYS_ADMIN"
			setCaps(o, caps...)
		}, "add exactly"},
		{"AWorkerKeepingTheDefaultCapabilities", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.Capabilities.Drop = nil
		}, "must drop ALL capabilities"},
		{"APrivilegedWorker", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.Privileged = &[]bool{true}[0]
		}, "is privileged"},
		{"AWorkerInTheHostsPIDNamespace", func(o *rendered) { worker(o).HostPID = true }, "shares a host namespace"},
		{"AWorkerOnTheHostsNetwork", func(o *rendered) { worker(o).HostNetwork = true }, "shares a host namespace"},
		{"AWorkerInAUserNamespace", func(o *rendered) { worker(o).HostUsers = &[]bool{false}[0] }, "hostUsers: false"},
		{"AWorkerUnderTheDefaultAppArmorProfile", func(o *rendered) {
			worker(o).Containers[0].SecurityContext.AppArmorProfile = nil
		}, "appArmorProfile must be Unconfined"},
		{"AppArmorUnconfinedForThePod", func(o *rendered) {
			worker(o).SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, "reaches every container"},
		{"AWorkerWithIsolationOff", func(o *rendered) { isolation(o, "--isolation=off") }, "--isolation=required"},
		{"AWorkerWithIsolationAuto", func(o *rendered) { isolation(o, "--isolation=auto") }, "--isolation=required"},
		{"AWorkerWithoutTheIsolationFlag", func(o *rendered) { isolation(o, "") }, "--isolation=required"},
		{"ANamespaceThatRefusesTheWorkers", func(o *rendered) {
			o.namespaces[0].Labels[podSecurityEnforce] = "baseline"
		}, "only \"privileged\" admits"},
		{"NoRequests", func(o *rendered) { worker(o).Containers[0].Resources.Requests = nil }, "requests"},
		{"AReadinessProbeOnTheWrongPath", func(o *rendered) {
			worker(o).Containers[0].ReadinessProbe.HTTPGet.Path = "/healthz"
		}, "readiness probe must GET /readyz"},
		{"AProbeOnAPortNotExposed", func(o *rendered) {
			worker(o).Containers[0].LivenessProbe.HTTPGet.Port = intstr.FromString("nope")
		}, "is not one of its ports"},
		{"AnUnpinnedImage", func(o *rendered) { worker(o).Containers[0].Image = "turncli/worker:latest" }, "image"},
		{"AMissingSecret", func(o *rendered) {
			worker(o).Containers[0].Env[2].ValueFrom.SecretKeyRef.Name = "nope"
		}, "names Secret nope"},
		{"AMissingSecretKey", func(o *rendered) {
			worker(o).Containers[0].Env[2].ValueFrom.SecretKeyRef.Key = "other.token"
		}, "which it does not hold"},
		{"AStateDirectoryOffTheEmptyDir", func(o *rendered) {
			worker(o).Containers[0].Args[0] = "--state-dir=/srv"
		}, "below an emptyDir mount"},
		{"AStateDirectoryAtTheEmptyDirsRoot", func(o *rendered) {
			worker(o).Containers[0].Args[0] = "--state-dir=/var/lib/turncli-worker"
		}, "below an emptyDir mount"},
		{"AWorkerWithoutCapacity", func(o *rendered) { worker(o).Containers[0].Args[2] = "--capacity=0" }, "--capacity must be positive"},
		{"WorkersOpenToEveryone", func(o *rendered) {
			o.networkPolicies[0].Spec.Ingress = append(o.networkPolicies[0].Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
		}, "lets more than a selected namespace"},
		{"PrimariesRolled", func(o *rendered) {
			for i := range o.deployments {
				if o.deployments[i].Name == "turncli-primary" {
					o.deployments[i].Spec.Strategy.Type = "RollingUpdate"
				}
			}
		}, "strategy Recreate"},
		{"AHostPath", func(o *rendered) {
			worker(o).Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		}, "hostPath"},
		{"AnAutoscalerOnAnotherMetric", func(o *rendered) {
			o.autoscalers[0].Spec.Metrics[0].Pods.Metric.Name = "cpu"
		}, "turncli_worker_utilization_ratio"},
		{"AnAutoscalerOfNothing", func(o *rendered) { o.autoscalers[0].Spec.ScaleTargetRef.Name = "nope" }, "does not exist"},
		{"AServiceSelectingNothing", func(o *rendered) { o.services[0].Spec.Selector = map[string]string{"x": "y"} }, "selects no pods"},
		{"AServiceTargetingAPortNotExposed", func(o *rendered) {
			o.services[0].Spec.Ports[0].TargetPort = intstr.FromString("nope")
		}, "does not expose"},
		{"WorkersReachingEverything", func(o *rendered) {
			o.networkPolicies[0].Spec.Egress = append(o.networkPolicies[0].Spec.Egress, networkingv1.NetworkPolicyEgressRule{})
		}, "more than the primary's gRPC port"},
		{"WorkersReachingThePrimaryOnAnyPort", func(o *rendered) { o.networkPolicies[0].Spec.Egress[0].Ports = nil }, "more than the primary's gRPC port"},
		{"NoPolicyOverWorkers", func(o *rendered) { o.networkPolicies = nil }, "no NetworkPolicy selects"},
		{"APrimaryAlone", func(o *rendered) {
			one := int32(1)
			for i := range o.deployments {
				if o.deployments[i].Name == "turncli-primary" {
					o.deployments[i].Spec.Replicas = &one
				}
			}
		}, "want 2 replicas"},
		{"NoDisruptionBudget", func(o *rendered) { o.disruptions = nil }, "PodDisruptionBudget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := render(t, filepath.Join("overlays", "development"))
			if errs := check(o, o.secretKeys()); len(errs) != 0 {
				t.Fatalf("the unchanged render fails: %v", errors.Join(errs...))
			}
			tc.mutate(o)
			errs := check(o, o.secretKeys())
			if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), tc.want) }) {
				t.Fatalf("errors %v; want one saying %q", errors.Join(errs...), tc.want)
			}
		})
	}
}

func TestDecodingIsStrict(t *testing.T) {
	var o rendered
	err := o.add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":1,"replica":2}}`))
	if err == nil || !strings.Contains(err.Error(), `unknown field "replica"`) {
		t.Fatalf("a misspelt field: %v, want it refused", err)
	}
	if err := o.add([]byte(`{"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"x"}}`)); err == nil {
		t.Fatal("a retired apiVersion was accepted")
	}
}

// Every base image is pinned by digest, and each image runs as a numeric non-root user.
func TestDockerfilesPinTheirBasesAndRunAsNonRoot(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("images", "*.Dockerfile"))
	if err != nil || len(files) != 2 {
		t.Fatalf("Dockerfiles %v, %v; want the primary's and the worker's", files, err)
	}
	from := regexp.MustCompile(`(?m)^FROM\s+(\S+)`)
	digest := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)
	user := regexp.MustCompile(`(?m)^USER\s+([1-9][0-9]*)(?::[1-9][0-9]*)?\s*$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stages := from.FindAllStringSubmatch(string(b), -1)
		if len(stages) < 2 {
			t.Errorf("%s: %d stages, want a build stage and a runtime stage", f, len(stages))
		}
		for _, s := range stages {
			if !digest.MatchString(s[1]) {
				t.Errorf("%s: FROM %s is not pinned by digest (image:tag@sha256:…)", f, s[1])
			}
		}
		i := strings.LastIndex(string(b), "\nFROM ")
		if i < 0 {
			continue // reported above: fewer than two stages
		}
		if last := string(b)[i:]; !user.MatchString(last) {
			t.Errorf("%s: the runtime stage sets no numeric non-root USER", f)
		}
	}
}
