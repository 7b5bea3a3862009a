package manifests_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "../../manifests/hap-reconciler"
	// kebHapValues is the verbatim `hap` block of KEB's values.yaml.
	kebHapValues = "../../internal/config/testdata/keb-values-hap.yaml"
	// kebLandscapeValues is a landscape's values file for KEB's chart.
	kebLandscapeValues = "../../manifests/testdata/keb-values-landscape.yaml"
	// kebValues is KEB's resources/keb/values.yaml, verbatim.
	kebValues = "../../manifests/testdata/keb-values.yaml"
	// kebNestedValues holds KEB's keys under a wrapper chart's subchart key.
	kebNestedValues = "../../manifests/testdata/keb-values-nested.yaml"
	// kebValuesWithoutProject has no gardener.project.
	kebValuesWithoutProject = "../../manifests/testdata/keb-values-no-project.yaml"
	releaseName             = "hap-reconciler"
	// kubeVersion is what helm template assumes for Capabilities.KubeVersion
	// (the chart needs 1.29 or newer); the test bed's API server is 1.34.
	kubeVersion = "1.34.0"
)

// project is the one key the chart's own defaults leave open.
var project = []string{"--set", "gardener.project=kyma-dev"}

// monitoringAPIs are the kinds the chart's monitoring objects need, as
// helm template's --api-versions: a cluster that serves them all.
var monitoringAPIs = []string{
	"--api-versions", "monitoring.coreos.com/v1/PrometheusRule",
	"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor",
	"--api-versions", "operator.victoriametrics.com/v1beta1/VMServiceScrape",
	"--api-versions", "operator.victoriametrics.com/v1beta1/VMRule",
}

// monitoringKinds are the kinds rendered only where their API is served.
var monitoringKinds = []string{"PrometheusRule", "ServiceMonitor", "VMServiceScrape", "VMRule"}

// variant is one way of installing the chart the tests render.
type variant struct {
	name string
	args []string // helm template arguments: -f files, --set pairs
}

// variants are the installations every test renders: the defaults (serve),
// the CronJob, KEB's own hap block, a landscape's values file of KEB's,
// KEB's values.yaml as it is, the same keys nested under a subchart key, and
// KEB's landscape conventions (workload identity, ambient mesh, scheduling).
func variants() []variant {
	return []variant{
		{"default", project},
		{"cronjob", append(slices.Clone(project), "--set", "hapReconciler.mode=cronjob",
			"--set", "hapReconciler.metrics.pushgatewayURL=http://prometheus-pushgateway.monitoring.svc:9091")},
		{"serve with ServiceMonitor, PrometheusRule, cloudsql-proxy and in-cluster credentials", append(slices.Clone(project),
			"--set", "hapReconciler.mode=serve", "--set", "hapReconciler.metrics.scrape=ServiceMonitor",
			"--set", "hapReconciler.vmRule.enabled=false", "--set", "hapReconciler.prometheusRule.enabled=true",
			"--set", "global.database.cloudsqlproxy.enabled=true",
			"--set", "global.database.managedGCP.instanceConnectionName=kyma-dev:europe-west3:kcp",
			"--set", "hapReconciler.gardener.credentials=inCluster")},
		{"KEB's hap block", append([]string{"-f", kebHapValues}, project...)},
		{"KEB's landscape values", []string{"-f", kebLandscapeValues}},
		{"KEB's values.yaml", []string{"-f", kebValues}},
		{"KEB's keys nested under a subchart key", []string{"-f", kebNestedValues}},
		{"workload identity, ambient mesh and scheduling", []string{"-f", kebValues,
			"--set", "global.database.embedded.enabled=false",
			"--set", "global.database.cloudsqlproxy.enabled=true",
			"--set", "global.database.cloudsqlproxy.workloadIdentity.enabled=true",
			"--set", "global.database.managedGCP.instanceConnectionName=kyma-dev:europe-west3:kcp",
			"--set", "global.istio.ambient.enabled=true",
			"--set", "hapReconciler.tolerations[0].key=dedicated", "--set", "hapReconciler.tolerations[0].operator=Exists",
			"--set", "hapReconciler.priorityClassName=system-cluster-critical",
			"--set", "hapReconciler.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
			"--set", "hapReconciler.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists"}},
	}
}

func helmBin(t *testing.T) string {
	t.Helper()
	return ensureTool(t, "helm", "install-helm.sh")
}

// render runs helm template into namespace and returns the YAML and the
// objects (hooks and the test pod included: helm template renders them too).
func render(t *testing.T, helm, namespace string, args ...string) (string, []*unstructured.Unstructured) {
	t.Helper()
	out := run(t, helm, append([]string{"template", releaseName, chartDir, "--namespace", namespace, "--kube-version", kubeVersion}, args...)...)
	return out, decodeObjects(t, out)
}

// readYAML decodes a YAML file (a values file, a promtool test) into v.
func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func decodeObjects(t *testing.T, doc string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(doc), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decode rendered manifests: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s among the rendered objects", kind, name)
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// TestChartLints runs helm lint --strict on the defaults and every variant.
func TestChartLints(t *testing.T) {
	helm := helmBin(t)
	for _, v := range variants() {
		out := run(t, helm, append([]string{"lint", "--strict", chartDir, "--kube-version", kubeVersion}, v.args...)...)
		if !strings.Contains(out, "0 chart(s) failed") {
			t.Errorf("%s: helm lint:\n%s", v.name, out)
		}
	}
}

// TestChartRendersEachVariant checks what each variant is made of, on a
// cluster that serves every monitoring API.
func TestChartRendersEachVariant(t *testing.T) {
	helm := helmBin(t)
	// One rule object: the VMRule, but where the PrometheusRule is asked for.
	common := []string{"ConfigMap/hap-reconciler", "ConfigMap/hap-reconciler-dashboard", "ConfigMap/hap-reconciler-migrate",
		"Job/hap-reconciler-migrate", "VMRule/hap-reconciler", "Pod/hap-reconciler-check"}
	withPrometheusRule := slices.Clone(common)
	withPrometheusRule[slices.Index(common, "VMRule/hap-reconciler")] = "PrometheusRule/hap-reconciler"
	serve := []string{"Deployment/hap-reconciler", "Service/hap-reconciler", "VMServiceScrape/hap-reconciler", "ServiceAccount/hap-reconciler"}
	want := map[string][]string{
		"default":         append(slices.Clone(serve), common...),
		"cronjob":         append([]string{"CronJob/hap-reconciler", "ServiceAccount/hap-reconciler"}, common...),
		"KEB's hap block": append(slices.Clone(serve), common...),
		"serve with ServiceMonitor, PrometheusRule, cloudsql-proxy and in-cluster credentials": append([]string{"Deployment/hap-reconciler",
			"Role/hap-reconciler", "RoleBinding/hap-reconciler", "Service/hap-reconciler", "ServiceMonitor/hap-reconciler",
			"ServiceAccount/hap-reconciler"}, withPrometheusRule...),
		"KEB's landscape values":                 append(slices.Clone(serve), common...),
		"KEB's values.yaml":                      append(slices.Clone(serve), common...),
		"KEB's keys nested under a subchart key": append(slices.Clone(serve), common...),
		// KEB's ServiceAccount: none of the job's own.
		"workload identity, ambient mesh and scheduling": append([]string{"Deployment/hap-reconciler", "Service/hap-reconciler",
			"VMServiceScrape/hap-reconciler"}, common...),
	}
	for _, v := range variants() {
		_, objs := render(t, helm, "kcp-system", append(slices.Clone(v.args), monitoringAPIs...)...)
		w := slices.Clone(want[v.name])
		slices.Sort(w)
		if got := kinds(objs); !slices.Equal(got, w) {
			t.Errorf("%s: rendered\n %v\nwant\n %v", v.name, got, w)
		}
		// Without the monitoring APIs: everything else, no monitoring
		// object, and the alerts as a rule file in a ConfigMap.
		_, objs = render(t, helm, "kcp-system", v.args...)
		w = slices.DeleteFunc(w, func(k string) bool { return slices.Contains(monitoringKinds, strings.Split(k, "/")[0]) })
		w = append(w, "ConfigMap/hap-reconciler-alerts")
		slices.Sort(w)
		if got := kinds(objs); !slices.Equal(got, w) {
			t.Errorf("%s without the monitoring APIs: rendered\n %v\nwant\n %v", v.name, got, w)
		}
	}

	// The release switches: dry-run by default, for real when asked, in
	// both modes. Only the release: the candidate table is written either
	// way (--dry-run would leave it, and everything KEB reads, as it is).
	_, objs := render(t, helm, "kcp-system", project...)
	if args := mainContainerArgs(t, objs); !slices.Contains(args, "--release-dry-run") || slices.Contains(args, "--dry-run") || args[0] != "serve" {
		t.Errorf("default args %v: want serve --release-dry-run (serve is the default mode; release.dryRun defaults to true)", args)
	}
	_, objs = render(t, helm, "kcp-system", append(slices.Clone(project), "--set", "hapReconciler.release.dryRun=false")...)
	if args := mainContainerArgs(t, objs); slices.Contains(args, "--release-dry-run") {
		t.Errorf("release.dryRun=false: args %v still carry --release-dry-run", args)
	}
	_, objs = render(t, helm, "kcp-system", append(slices.Clone(project), "--set", "hapReconciler.mode=cronjob")...)
	if args := mainContainerArgs(t, objs); !slices.Contains(args, "--release-dry-run") || args[0] != "run" {
		t.Errorf("cronjob args %v: want run --release-dry-run (release.dryRun defaults to true)", args)
	}

	// Values the chart refuses, naming the key.
	for _, bad := range [][]string{
		{"hapReconciler.mode=daemon", "hapReconciler.mode"},
		{"hapReconciler.gardener.credentials=token", "hapReconciler.gardener.credentials"},
		{"hapReconciler.config.namespace=garden-x", "hapReconciler.config.namespace"},
		{"hapReconciler.config.hap.rule={aws}", "hapReconciler.config.hap"},
		// serve waits up to 45 s for a running job after SIGTERM.
		{"hapReconciler.terminationGracePeriodSeconds=45", "hapReconciler.terminationGracePeriodSeconds"},
		// values.schema.json
		{"hapReconciler.logLevel=loud", "/hapReconciler/logLevel"},
		{"hapReconciler.databse.userSecretKey=x", "'databse' not allowed"},
	} {
		out, err := runErr(helm, "template", releaseName, chartDir, "--kube-version", kubeVersion, "--set", "gardener.project=kyma-dev", "--set", bad[0])
		if err == nil || !strings.Contains(out, bad[1]) {
			t.Errorf("--set %s: want an error naming %s, got %v:\n%s", bad[0], bad[1], err, out)
		}
	}
	// Kubernetes older than the native sidecars.
	if out, err := runErr(helm, "template", releaseName, chartDir, "--kube-version", "1.28.9", "--set", "gardener.project=kyma-dev"); err == nil ||
		!strings.Contains(out, "kubeVersion: >=1.29.0-0") {
		t.Errorf("Kubernetes 1.28: want the chart's kubeVersion to refuse it, got %v:\n%s", err, out)
	}
}

// mainContainer is the hap-reconciler container of the workload.
func mainContainer(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(workloadPod(t, objs), "containers")
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == "hap-reconciler" {
			return c
		}
	}
	t.Fatal("no workload with a hap-reconciler container")
	return nil
}

func mainContainerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var args []string
	for _, a := range mainContainer(t, objs)["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

func renderedConfig(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	cfg, _, _ := unstructured.NestedString(find(t, objs, "ConfigMap", "hap-reconciler").Object, "data", "config.yaml")
	return cfg
}

// writeManifests writes rendered YAML for kubectl.
func writeManifests(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// toYAML is yaml.Marshal for test data.
func toYAML(t *testing.T, v any) []byte {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The migration step is a Helm hook by default and, switched on as KEB's
// migratorJobs.argosync, an Argo CD PreSync hook, its ConfigMap one sync
// wave before the Job; with the Helm hook switched off it carries Argo CD's
// annotations alone. Neither is refused: a plain Job would block upgrades.
func TestMigrationHookIsHelmsOrArgoCDs(t *testing.T) {
	helm := helmBin(t)
	hooks := func(args ...string) (cm, job map[string]string) {
		t.Helper()
		_, objs := render(t, helm, "kcp-system", append(slices.Clone(project), args...)...)
		return find(t, objs, "ConfigMap", releaseName+"-migrate").GetAnnotations(), find(t, objs, "Job", releaseName+"-migrate").GetAnnotations()
	}
	has := func(what string, annotations map[string]string, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if annotations[k] != v {
				t.Errorf("%s: annotation %s = %q, want %q (all: %v)", what, k, annotations[k], v, annotations)
			}
		}
	}
	lacks := func(what string, annotations map[string]string, prefix string) {
		t.Helper()
		for k := range annotations {
			if strings.HasPrefix(k, prefix) {
				t.Errorf("%s: unexpected annotation %s", what, k)
			}
		}
	}
	helmCM := map[string]string{"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "-10"}
	helmJob := map[string]string{"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "0",
		"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"}

	cm, job := hooks()
	has("default ConfigMap", cm, helmCM)
	has("default Job", job, helmJob)
	lacks("default ConfigMap", cm, "argocd.argoproj.io/")
	lacks("default Job", job, "argocd.argoproj.io/")

	cm, job = hooks("--set", "hapReconciler.migrations.argosync.enabled=true", "--set-string", "hapReconciler.migrations.argosync.syncwave=5")
	has("argosync ConfigMap", cm, map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "4"})
	has("argosync Job", job, map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "5",
		"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded"})
	has("argosync ConfigMap, Helm's too", cm, helmCM)
	has("argosync Job, Helm's too", job, helmJob)

	cm, job = hooks("--set", "hapReconciler.migrations.argosync.enabled=true", "--set", "hapReconciler.migrations.helmhook.enabled=false")
	has("Argo CD alone, ConfigMap", cm, map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "-1"})
	has("Argo CD alone, Job", job, map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "0"})
	lacks("Argo CD alone, ConfigMap", cm, "helm.sh/")
	lacks("Argo CD alone, Job", job, "helm.sh/")

	out, err := runErr(helm, "template", releaseName, chartDir, "--kube-version", kubeVersion, "--set", "gardener.project=kyma-dev",
		"--set", "hapReconciler.migrations.helmhook.enabled=false")
	if err == nil || !strings.Contains(out, "hapReconciler.migrations: enable helmhook, argosync or both") {
		t.Errorf("no hook at all: want the chart to refuse it naming hapReconciler.migrations, got %v:\n%s", err, out)
	}
}
