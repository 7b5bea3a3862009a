package manifests_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every pod of the chart (workload, migration hook, helm test Pod) follows
// KEB's landscape conventions: no istio sidecar, or KEB's ambient labels
// with ambient on; KEB's ServiceAccount with workload identity, the hook
// included, as KEB's migrator; the scheduling knobs; and serve's pod gets
// longer than its 45 s shutdown grace.
func TestEveryPodFollowsKEBsLandscapeConventions(t *testing.T) {
	helm := helmBin(t)
	var wi variant
	for _, v := range variants() {
		if v.name == "workload identity, ambient mesh and scheduling" {
			wi = v
		}
	}
	for _, c := range []struct {
		v       variant
		landing bool // workload identity, ambient and scheduling set
	}{{variants()[0], false}, {variants()[1], false}, {wi, true}} {
		_, objs := render(t, helm, "kcp-system", c.v.args...)
		pods := podsOf(objs)
		for _, p := range pods {
			o, meta, spec := p.obj, p.meta, p.spec
			where := c.v.name + ": " + o.GetKind() + " " + o.GetName()
			if got, _, _ := unstructured.NestedString(meta, "annotations", "sidecar.istio.io/inject"); got != "false" {
				t.Errorf("%s: sidecar.istio.io/inject %q, want \"false\"", where, got)
			}
			sa, _, _ := unstructured.NestedString(spec, "serviceAccountName")
			if c.landing {
				if mode, _, _ := unstructured.NestedString(meta, "labels", "istio.io/dataplane-mode"); mode != "ambient" {
					t.Errorf("%s: no ambient label", where)
				}
				if sa != "kcp-kyma-environment-broker" {
					t.Errorf("%s: serviceAccountName %q, want KEB's kcp-kyma-environment-broker (workload identity)", where, sa)
				}
				if pc, _, _ := unstructured.NestedString(spec, "priorityClassName"); pc != "system-cluster-critical" {
					t.Errorf("%s: priorityClassName %q", where, pc)
				}
				if tol, _, _ := unstructured.NestedSlice(spec, "tolerations"); len(tol) != 1 {
					t.Errorf("%s: tolerations %v", where, tol)
				}
				if _, ok, _ := unstructured.NestedMap(spec, "affinity", "nodeAffinity"); !ok {
					t.Errorf("%s: no affinity", where)
				}
			} else if o.GetKind() != "Job" && sa != releaseName {
				t.Errorf("%s: serviceAccountName %q, want the job's own", where, sa)
			}
			if o.GetKind() == "Deployment" {
				grace, _, _ := unstructured.NestedFieldNoCopy(spec, "terminationGracePeriodSeconds")
				if n, ok := grace.(float64); !ok || n <= 45 {
					t.Errorf("%s: terminationGracePeriodSeconds %v, want more than serve's 45 s shutdown grace", where, grace)
				}
			}
		}
		if len(pods) != 3 {
			t.Errorf("%s: %d pods (workload, hook, test), want 3", c.v.name, len(pods))
		}
	}
}

// renderedPod is an object of the chart that runs a pod, with the pod's
// metadata and spec.
type renderedPod struct {
	obj        *unstructured.Unstructured
	meta, spec map[string]any
}

// podsOf lists the objects that run a pod (workload, migration hook, helm
// test Pod), in order.
func podsOf(objs []*unstructured.Unstructured) []renderedPod {
	var pods []renderedPod
	for _, o := range objs {
		if meta, spec, ok := podOf(o); ok {
			pods = append(pods, renderedPod{o, meta, spec})
		}
	}
	return pods
}

// podOf returns the pod metadata and spec an object runs, if any.
func podOf(o *unstructured.Unstructured) (meta, spec map[string]any, ok bool) {
	var path []string
	switch o.GetKind() {
	case "Pod":
		return o.Object["metadata"].(map[string]any), o.Object["spec"].(map[string]any), true
	case "Deployment", "Job":
		path = []string{"spec", "template"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template"}
	default:
		return nil, nil, false
	}
	tmpl, found, _ := unstructured.NestedMap(o.Object, path...)
	if !found {
		return nil, nil, false
	}
	meta, _ = tmpl["metadata"].(map[string]any)
	spec, _ = tmpl["spec"].(map[string]any)
	return meta, spec, true
}
