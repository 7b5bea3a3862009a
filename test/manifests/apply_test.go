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
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	credentialsBindings = schema.GroupVersionResource{Group: "security.gardener.cloud", Version: "v1alpha1", Resource: "credentialsbindings"}
	shoots              = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
)

// TestChartAppliesToARealAPIServer renders every variant of the chart with
// the real kube-apiserver's APIs as helm's .Capabilities (what helm install
// reads from the cluster's discovery) and applies it (server-side dry run: schema, defaulting and admission,
// including the restricted Pod Security profile, hooks and the helm test Pod
// included): first with no monitoring API registered, where no monitoring
// object may be rendered, then with the Prometheus and VictoriaMetrics
// operators' CRDs, where every one the variant asks for must be. It checks
// the release notes helm prints, then installs the in-cluster variant for
// real and checks, as the job's ServiceAccount, that the Role in the
// Gardener project namespace grants exactly what the job needs.
func TestChartAppliesToARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	helm := helmBin(t)
	kubectl := ensureTool(t, "kubectl", "install-kubectl.sh")
	kube := testbed.KubeForTest(t, testbed.WithGardenerKinds(testbed.NoGardenerKinds))
	k := kubectlRunner{t: t, bin: kubectl, kubeconfig: kube.KubeconfigPath()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The release's namespace (kcp-system) and the Gardener project's, both
	// under the restricted profile.
	ns := restrictedNamespace(ctx, t, kube, "kcp-system")
	gardenNS := restrictedNamespace(ctx, t, kube, "garden-kyma")
	// KEB's ServiceAccount, which the pods run as with workload identity:
	// KEB's chart has created it on the landscape.
	k.run("-n", ns, "create", "serviceaccount", "kcp-kyma-environment-broker")

	monitoring := map[string]bool{}
	for _, phase := range []string{"without the monitoring APIs", "with the monitoring APIs"} {
		if phase == "with the monitoring APIs" {
			k.run("apply", "-f", "../../manifests/testdata/monitoring-crds.yaml")
			k.run("wait", "--for=condition=Established", "--timeout=60s", "crd/prometheusrules.monitoring.coreos.com",
				"crd/servicemonitors.monitoring.coreos.com", "crd/vmservicescrapes.operator.victoriametrics.com",
				"crd/vmrules.operator.victoriametrics.com")
		}
		for _, v := range variants() {
			args := append(slices.Clone(v.args), "--set", "hapReconciler.gardener.namespace="+gardenNS)
			doc, objs := render(t, helm, ns, append(args, serverAPIs(t, kube)...)...)
			for _, o := range objs {
				if slices.Contains(monitoringKinds, o.GetKind()) {
					if phase == "without the monitoring APIs" {
						t.Errorf("%s, %s: rendered %s %s, whose API the server does not serve", v.name, phase, o.GetKind(), o.GetName())
					}
					monitoring[o.GetKind()] = true
				}
			}
			applyDryRun(t, k, v.name+", "+phase, doc, objs)
		}
	}
	for _, kind := range monitoringKinds {
		if !monitoring[kind] {
			t.Errorf("no variant rendered a %s once the server served it", kind)
		}
	}

	checkReleaseNotes(t, helm, kube, ns)

	doc, _ := render(t, helm, ns, append(slices.Clone(project), "--set", "hapReconciler.gardener.credentials=inCluster", "--set", "hapReconciler.gardener.namespace="+gardenNS)...)
	k.run("apply", "-f", writeManifests(t, doc))
	checkServiceAccountPermissions(ctx, t, kube, ns, gardenNS)
}

// applyDryRun applies doc with a server-side dry run and checks that each
// of objs was created, and that the API server warned about nothing. The
// helm test Pod is applied last, as helm runs it: after the install, once
// the release's ServiceAccount exists (it is created for the Pod's dry run
// and removed again; KEB's own ServiceAccount is there from the start).
func applyDryRun(t *testing.T, k kubectlRunner, name, doc string, objs []*unstructured.Unstructured) {
	t.Helper()
	var release, tests, accounts []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetAnnotations()["helm.sh/hook"] == "test":
			tests = append(tests, o)
		case o.GetKind() == "ServiceAccount":
			accounts = append(accounts, o)
			release = append(release, o)
		default:
			release = append(release, o)
		}
	}
	out := k.run("apply", "--dry-run=server", "-f", writeObjects(t, release))
	if len(accounts) > 0 {
		k.run("apply", "-f", writeObjects(t, accounts))
		defer k.run("delete", "--wait", "-f", writeObjects(t, accounts))
	}
	out += k.run("apply", "--dry-run=server", "-f", writeObjects(t, tests))
	for _, obj := range objs {
		line := regexp.MustCompile(`(?m)^` + strings.ToLower(obj.GetKind()) + `(\.[a-z0-9.-]+)?/` + regexp.QuoteMeta(obj.GetName()) + ` created \(server dry run\)$`)
		if !line.MatchString(out) {
			t.Errorf("%s: %s %s not created in the dry run:\n%s", name, obj.GetKind(), obj.GetName(), out)
		}
	}
	if n := strings.Count(out, "created (server dry run)"); n != len(objs) {
		t.Errorf("%s: %d objects created in the dry run, %d rendered:\n%s", name, n, len(objs), out)
	}
	if strings.Contains(out, "Warning:") {
		t.Errorf("%s: the API server warned (Pod Security \"restricted\" or a deprecation):\n%s", name, out)
	}
	if len(tests) != 1 {
		t.Errorf("%s: %d helm test Pods rendered, want 1", name, len(tests))
	}
}

// serverAPIs are the API server's group versions and kinds as helm's
// --api-versions: what helm reads from discovery when it installs.
func serverAPIs(t *testing.T, kube *testbed.Kube) []string {
	t.Helper()
	_, lists, err := discovery.NewDiscoveryClientForConfigOrDie(kube.Config()).ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	var args []string
	for _, list := range lists {
		args = append(args, "--api-versions", list.GroupVersion)
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				args = append(args, "--api-versions", list.GroupVersion+"/"+r.Kind)
			}
		}
	}
	return args
}

// writeObjects writes objects as a YAML stream for kubectl.
func writeObjects(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var docs []string
	for _, o := range objs {
		docs = append(docs, string(toYAML(t, o.Object)))
	}
	return writeManifests(t, strings.Join(docs, "---\n"))
}

// checkReleaseNotes has helm render the release against the API server
// (helm install --dry-run=server) and checks what NOTES.txt tells the
// operator: the namespace, the mode, where KEB's keys were read from, that
// release is a dry run, and the monitoring the cluster could take.
func checkReleaseNotes(t *testing.T, helm string, kube *testbed.Kube, ns string) {
	t.Helper()
	for _, c := range []struct {
		values string
		want   []string
	}{
		{kebValues, []string{"in namespace " + ns, "Gardener project:  garden-kyma-dev (from gardener.project)",
			"Mode:              serve", "rendered from the top-level hap block", "DRY RUN", "Monitoring:        VMServiceScrape",
			"VMRule PrometheusRule", "helm test " + releaseName}},
		{kebNestedValues, []string{"Gardener project:  garden-kyma-stage (from keb.gardener.project)", "rendered from keb.hap",
			"(2 allowed global accounts, 5 rules)"}},
	} {
		out := run(t, helm, "install", releaseName, chartDir, "--namespace", ns, "--dry-run=server", "--kubeconfig", kube.KubeconfigPath(), "-f", c.values)
		_, notes, ok := strings.Cut(out, "NOTES:\n")
		if !ok {
			t.Errorf("%s: helm install printed no NOTES:\n%s", c.values, out)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: the release notes do not say %q:\n%s", c.values, w, notes)
			}
		}
	}
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
