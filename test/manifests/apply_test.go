package manifests_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	credentialsBindings = testbed.CredentialsBindingsResource
	shoots              = testbed.ShootsResource
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
	kube := testbed.KubeForTest(t)
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
	checkDirectionDownNotes(ctx, t, helm, kube)

	// The in-cluster variant installed for real, first as installed (release
	// dry-run, a read-only Role), then releasing.
	loadProject(ctx, t, kube, gardenNS)
	inCluster := append(slices.Clone(project), "--set", "hapReconciler.gardener.credentials=inCluster", "--set", "hapReconciler.gardener.namespace="+gardenNS)
	for _, releases := range []bool{false, true} {
		doc, _ := render(t, helm, ns, append(slices.Clone(inCluster), "--set", fmt.Sprintf("hapReconciler.release.dryRun=%v", !releases))...)
		k.run("apply", "-f", writeManifests(t, doc))
		checkServiceAccountPermissions(ctx, t, kube, ns, gardenNS, releases)
	}
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
// kube-apiserver refreshes its discovery of an aggregated API on its own
// schedule, so right after gardener-apiserver starts (or restarts) a group
// may still be reported stale although its APIService is Available: asked
// again until discovery is whole, for up to a minute, the last error
// reported.
func serverAPIs(t *testing.T, kube *testbed.Kube) []string {
	t.Helper()
	client := discovery.NewDiscoveryClientForConfigOrDie(kube.Config())
	var lists []*metav1.APIResourceList
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, lists, last = client.ServerGroupsAndResources()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("discovery not whole after a minute: %v (%v)", last, err)
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
		args   []string
	}{
		{kebValues, []string{"in namespace " + ns, "Gardener project:  garden-kyma-dev (from gardener.project)",
			"Image:             europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:0.2.0\n",
			"Mode:              serve", "rendered from the top-level hap block", "DRY RUN", "Monitoring:        VMServiceScrape",
			"Alerts:            VMRule\n", "helm test " + releaseName}, nil},
		{kebNestedValues, []string{"Gardener project:  garden-kyma-stage (from keb.gardener.project)", "rendered from keb.hap",
			"(2 allowed global accounts, 5 rules)"}, nil},
		// A landscape that mirrors KEB's registry, with KEB's pull secret.
		{kebValues, []string{"Image:             registry.mirror.example/kyma/hap-reconciler:0.2.0 (pull secrets: own-pull, kcp-registry-pull)\n"},
			[]string{"--set", "global.images.container_registry.path=registry.mirror.example/kyma", "--set", "imagePullSecret=kcp-registry-pull",
				"--set", "hapReconciler.imagePullSecrets[0].name=own-pull"}},
	} {
		out := run(t, helm, append([]string{"install", releaseName, chartDir, "--namespace", ns, "--dry-run=server", "--kubeconfig", kube.KubeconfigPath(), "-f", c.values}, c.args...)...)
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
// the admin created, for the Role the chart renders with release dry-run
// (read-only) or releasing (releases). Gardener's admission, not only RBAC,
// decides the writes: it admits a change to a CredentialsBinding, labels
// alone included, only from a user who may read the Secret it references.
// The ServiceAccount lives in the release's namespace (saNS), the Role in the
// Gardener project namespace (ns), which loadProject made a project.
func checkServiceAccountPermissions(ctx context.Context, t *testing.T, kube *testbed.Kube, saNS, ns string, releases bool) {
	t.Helper()
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

	reads := map[string]func() error{
		"list credentialsbindings": func() error { _, err := cbs.List(ctx, metav1.ListOptions{}); return err },
		"watch credentialsbindings": func() error {
			w, err := cbs.Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		},
		"get a credentialsbinding": func() error { _, err := cbs.Get(ctx, "cb-aws-1", metav1.GetOptions{}); return err },
		"list shoots":              func() error { _, err := job.Resource(shoots).Namespace(ns).List(ctx, metav1.ListOptions{}); return err },
		"get a shoot": func() error {
			_, err := job.Resource(shoots).Namespace(ns).Get(ctx, "shoot-1", metav1.GetOptions{})
			return err
		},
	}
	// What a release writes, and what Gardener wants of whoever writes it.
	release := map[string]func() error{
		"patch a credentialsbinding's labels": func() error {
			_, err := cbs.Patch(ctx, "cb-aws-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"dirty":"true"}}}`), metav1.PatchOptions{})
			return err
		},
		"get the secret a credentialsbinding references": func() error {
			_, err := jobCore.CoreV1().Secrets(ns).Get(ctx, "cb-aws-1", metav1.GetOptions{})
			return err
		},
	}
	// Its configuration comes as a mounted volume, not through the API.
	never := map[string]func() error{
		"read its own release's ConfigMap": func() error {
			_, err := jobCore.CoreV1().ConfigMaps(saNS).Get(ctx, releaseName, metav1.GetOptions{})
			return err
		},
		"list secrets": func() error { _, err := jobCore.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err },
		"update a credentialsbinding": func() error {
			cb, err := cbs.Get(ctx, "cb-aws-1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = cbs.Update(ctx, cb, metav1.UpdateOptions{})
			return err
		},
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
	}
	allowed, forbidden := reads, never
	if releases {
		allowed = mergedChecks(reads, release)
	} else {
		forbidden = mergedChecks(never, release)
	}
	for name, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("releases=%v: as the ServiceAccount, %s: %v, want it allowed", releases, name, err)
		}
	}
	for name, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("releases=%v: as the ServiceAccount, %s: error %v, want forbidden", releases, name, err)
		}
	}
}

func mergedChecks(a, b map[string]func() error) map[string]func() error {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
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

// loadProject makes ns a Gardener project holding what the job lists: the
// binding cb-aws-1 and the shoot shoot-1 on it, created through
// gardener-apiserver's admission with what it looks up first.
func loadProject(ctx context.Context, t *testing.T, kube *testbed.Kube, ns string) {
	t.Helper()
	l := landscape.New(1)
	l.AddBinding(landscape.BindingSpec{Name: "cb-aws-1", Pool: hap.Pool{HyperscalerType: "aws"}})
	l.AddShoot(landscape.ShootSpec{Name: "shoot-1", BindingName: "cb-aws-1"})
	if err := landscape.LoadKube(ctx, kube, ns, l, nil); err != nil {
		t.Fatalf("load the project's binding and shoot into %s: %v", ns, err)
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
