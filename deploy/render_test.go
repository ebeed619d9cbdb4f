package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// rendered is an overlay's objects, decoded into the API types.
type rendered struct {
	namespaces      []corev1.Namespace
	services        []corev1.Service
	secrets         []corev1.Secret
	configMaps      []corev1.ConfigMap
	deployments     []appsv1.Deployment
	statefulSets    []appsv1.StatefulSet
	disruptions     []policyv1.PodDisruptionBudget
	autoscalers     []autoscalingv2.HorizontalPodAutoscaler
	networkPolicies []networkingv1.NetworkPolicy
}

// render builds the kustomization in dir and decodes every object it emits.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := &rendered{}
	for _, r := range resources.Resources() {
		doc, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		if err := out.add(doc); err != nil {
			t.Fatalf("%s in %s: %v", r.CurId(), dir, err)
		}
	}
	return out
}

// add decodes one object strictly: its kind and apiVersion must be one the deployment uses,
// and a field the API type does not have is an error, as the API server would refuse it.
func (o *rendered) add(doc []byte) error {
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(doc, &head); err != nil {
		return err
	}
	var err error
	switch gvk := head.APIVersion + " " + head.Kind; gvk {
	case "v1 Namespace":
		err = appendStrict(doc, &o.namespaces)
	case "v1 Service":
		err = appendStrict(doc, &o.services)
	case "v1 Secret":
		err = appendStrict(doc, &o.secrets)
	case "v1 ConfigMap":
		err = appendStrict(doc, &o.configMaps)
	case "apps/v1 Deployment":
		err = appendStrict(doc, &o.deployments)
	case "apps/v1 StatefulSet":
		err = appendStrict(doc, &o.statefulSets)
	case "policy/v1 PodDisruptionBudget":
		err = appendStrict(doc, &o.disruptions)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		err = appendStrict(doc, &o.autoscalers)
	case "networking.k8s.io/v1 NetworkPolicy":
		err = appendStrict(doc, &o.networkPolicies)
	default:
		err = fmt.Errorf("%s is not a kind this deployment uses", gvk)
	}
	return err
}

func appendStrict[T any](doc []byte, list *[]T) error {
	var v T
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// workload is a Deployment's or StatefulSet's pod template, with what names it.
type workload struct {
	kind, name string
	labels     map[string]string // the pod template's
	spec       *corev1.PodSpec
	claims     []string // volumeClaimTemplates (StatefulSet)
}

func (o *rendered) workloads() []workload {
	var out []workload
	for i := range o.deployments {
		d := &o.deployments[i]
		out = append(out, workload{"Deployment", d.Name, d.Spec.Template.Labels, &d.Spec.Template.Spec, nil})
	}
	for i := range o.statefulSets {
		s := &o.statefulSets[i]
		w := workload{"StatefulSet", s.Name, s.Spec.Template.Labels, &s.Spec.Template.Spec, nil}
		for _, c := range s.Spec.VolumeClaimTemplates {
			w.claims = append(w.claims, c.Name)
		}
		out = append(out, w)
	}
	return out
}

func (w workload) String() string { return w.kind + "/" + w.name }
