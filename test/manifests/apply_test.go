package manifests_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	credentialsBindings = schema.GroupVersionResource{Group: "security.gardener.cloud", Version: "v1alpha1", Resource: "credentialsbindings"}
	shoots              = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
)

// TestChartAppliesToARealAPIServer renders every variant of the chart and
// applies it to a real kube-apiserver (server-side dry run: schema,
// defaulting and admission, including the restricted Pod Security profile,
// hooks included), then installs the in-cluster variant for real and checks,
// as the job's ServiceAccount, that the Role in the Gardener project
// namespace grants exactly what the job needs.
func TestChartAppliesToARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	helm := helmBin(t)
	kubectl := ensureTool(t, "kubectl", "install-kubectl.sh")
	kube := testbed.KubeForTest(t)
	k := kubectlRunner{t: t, bin: kubectl, kubeconfig: kube.KubeconfigPath()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	k.run("apply", "-f", "../../manifests/testdata/monitoring-crds.yaml")
	k.run("wait", "--for=condition=Established", "--timeout=60s", "crd/prometheusrules.monitoring.coreos.com",
		"crd/servicemonitors.monitoring.coreos.com", "crd/vmservicescrapes.operator.victoriametrics.com")
	// The release's namespace (kcp-system) and the Gardener project's, both
	// under the restricted profile.
	ns := restrictedNamespace(ctx, t, kube, "kcp-system")
	gardenNS := restrictedNamespace(ctx, t, kube, "garden-kyma")

	for _, v := range variants() {
		doc, objs := render(t, helm, ns, append(slices.Clone(v.args), "--set", "hapReconciler.gardener.namespace="+gardenNS)...)
		out := k.run("apply", "--dry-run=server", "-f", writeManifests(t, doc))
		for _, obj := range objs {
			line := regexp.MustCompile(`(?m)^` + strings.ToLower(obj.GetKind()) + `(\.[a-z0-9.-]+)?/` + regexp.QuoteMeta(obj.GetName()) + ` created \(server dry run\)$`)
			if !line.MatchString(out) {
				t.Errorf("%s: %s %s not created in the dry run:\n%s", v.name, obj.GetKind(), obj.GetName(), out)
			}
		}
		if n := strings.Count(out, "created (server dry run)"); n != len(objs) {
			t.Errorf("%s: %d objects created in the dry run, %d rendered:\n%s", v.name, n, len(objs), out)
		}
		if strings.Contains(out, "Warning:") {
			t.Errorf("%s: the API server warned (Pod Security \"restricted\" or a deprecation):\n%s", v.name, out)
		}
	}

	doc, _ := render(t, helm, ns, "--set", "hapReconciler.gardener.credentials=inCluster", "--set", "hapReconciler.gardener.namespace="+gardenNS)
	k.run("apply", "-f", writeManifests(t, doc))
	checkServiceAccountPermissions(ctx, t, kube, ns, gardenNS)
}

// checkServiceAccountPermissions acts as the job's ServiceAccount on objects
// the admin created.
// The ServiceAccount lives in the release's namespace (saNS), the Role in the
// Gardener project namespace (ns).
func checkServiceAccountPermissions(ctx context.Context, t *testing.T, kube *testbed.Kube, saNS, ns string) {
	admin := dynamic.NewForConfigOrDie(kube.Config())
	binding := object("security.gardener.cloud/v1alpha1", "CredentialsBinding", "cb-aws-1",
		map[string]any{"provider": map[string]any{"type": "aws"}})
	binding.SetLabels(map[string]string{"hyperscalerType": "aws"})
	mustCreate(ctx, t, admin.Resource(credentialsBindings).Namespace(ns), binding)
	mustCreate(ctx, t, admin.Resource(shoots).Namespace(ns), object("core.gardener.cloud/v1beta1", "Shoot", "shoot-1",
		map[string]any{"spec": map[string]any{"credentialsBindingName": "cb-aws-1"}}))
	adminCore := kubernetes.NewForConfigOrDie(kube.Config())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hyperscaler-account"}, StringData: map[string]string{"key": "value"}}
	if _, err := adminCore.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	otherNS, err := kube.NewNamespace(ctx, "other-project")
	if err != nil {
		t.Fatal(err)
	}

	cfg := kube.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:hap-reconciler", saNS),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNS, "system:authenticated"}}
	job := dynamic.NewForConfigOrDie(cfg)
	jobCore := kubernetes.NewForConfigOrDie(cfg)
	cbs := job.Resource(credentialsBindings).Namespace(ns)

	allowed := map[string]func() error{
		"list credentialsbindings": func() error { _, err := cbs.List(ctx, metav1.ListOptions{}); return err },
		"watch credentialsbindings": func() error {
			w, err := cbs.Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		},
		"get and update a credentialsbinding": func() error {
			cb, err := cbs.Get(ctx, "cb-aws-1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cb.SetLabels(map[string]string{"hyperscalerType": "aws", "tenantName": "ga-1"})
			_, err = cbs.Update(ctx, cb, metav1.UpdateOptions{})
			return err
		},
		"patch a credentialsbinding": func() error {
			_, err := cbs.Patch(ctx, "cb-aws-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"dirty":"true"}}}`), metav1.PatchOptions{})
			return err
		},
		"list shoots": func() error { _, err := job.Resource(shoots).Namespace(ns).List(ctx, metav1.ListOptions{}); return err },
		"get a shoot": func() error {
			_, err := job.Resource(shoots).Namespace(ns).Get(ctx, "shoot-1", metav1.GetOptions{})
			return err
		},
	}
	forbidden := map[string]func() error{
		"get a secret": func() error {
			_, err := jobCore.CoreV1().Secrets(ns).Get(ctx, "hyperscaler-account", metav1.GetOptions{})
			return err
		},
		"list secrets":                func() error { _, err := jobCore.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err },
		"delete a credentialsbinding": func() error { return cbs.Delete(ctx, "cb-aws-1", metav1.DeleteOptions{}) },
		"create a credentialsbinding": func() error {
			_, err := cbs.Create(ctx, object("security.gardener.cloud/v1alpha1", "CredentialsBinding", "cb-new", nil), metav1.CreateOptions{})
			return err
		},
		"patch a shoot": func() error {
			_, err := job.Resource(shoots).Namespace(ns).Patch(ctx, "shoot-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
			return err
		},
		"delete a shoot": func() error { return job.Resource(shoots).Namespace(ns).Delete(ctx, "shoot-1", metav1.DeleteOptions{}) },
		"list credentialsbindings of another project": func() error {
			_, err := job.Resource(credentialsBindings).Namespace(otherNS).List(ctx, metav1.ListOptions{})
			return err
		},
		"list credentialsbindings in its own namespace": func() error {
			_, err := job.Resource(credentialsBindings).Namespace(saNS).List(ctx, metav1.ListOptions{})
			return err
		},
		"read its own release's ConfigMap": func() error {
			_, err := jobCore.CoreV1().ConfigMaps(saNS).Get(ctx, releaseName, metav1.GetOptions{})
			return err
		},
	}
	for name, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("as the ServiceAccount, %s: %v, want it allowed", name, err)
		}
	}
	for name, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("as the ServiceAccount, %s: error %v, want forbidden", name, err)
		}
	}
}

// restrictedNamespace creates a namespace whose Pod Security admission warns
// about anything the "restricted" profile refuses, pod templates included.
func restrictedNamespace(ctx context.Context, t *testing.T, kube *testbed.Kube, prefix string) string {
	t.Helper()
	ns, err := kube.NewNamespace(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(kube.Config())
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/warn":"restricted"}}}`)
	if _, err := client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label namespace %s: %v", ns, err)
	}
	return ns
}

func object(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

func mustCreate(ctx context.Context, t *testing.T, client dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	t.Helper()
	if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

type kubectlRunner struct {
	t          *testing.T
	bin        string
	kubeconfig string
}

func (k kubectlRunner) run(args ...string) string {
	k.t.Helper()
	return run(k.t, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
}
