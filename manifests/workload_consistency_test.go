package manifests_test

import (
	"os"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/config"
)

// The CronJob and the serve Deployment run the same binary with the same
// identity, configuration, credentials and hardening; only what the mode
// needs differs (arguments, ports, probes, the Pushgateway address). Kustomize
// cannot share a pod template between two kinds, so this test keeps the two
// copies in step.
func TestCronJobAndDeploymentShareThePod(t *testing.T) {
	var cron batchv1.CronJob
	readManifest(t, "cronjob/cronjob.yaml", &cron)
	var deploy appsv1.Deployment
	readManifest(t, "serve/deployment.yaml", &deploy)

	a, b := cron.Spec.JobTemplate.Spec.Template.Spec, deploy.Spec.Template.Spec
	same(t, "serviceAccountName", a.ServiceAccountName, b.ServiceAccountName)
	same(t, "pod securityContext", a.SecurityContext, b.SecurityContext)
	same(t, "volumes", a.Volumes, b.Volumes)
	same(t, "initContainers", a.InitContainers, b.InitContainers)

	ca, cb := mainContainer(t, "cronjob/cronjob.yaml", a), mainContainer(t, "serve/deployment.yaml", b)
	same(t, "image", ca.Image, cb.Image)
	same(t, "envFrom", ca.EnvFrom, cb.EnvFrom)
	same(t, "env (without PUSHGATEWAY_URL)", withoutEnv(ca.Env, "PUSHGATEWAY_URL"), withoutEnv(cb.Env, "PUSHGATEWAY_URL"))
	same(t, "resources", ca.Resources, cb.Resources)
	same(t, "container securityContext", ca.SecurityContext, cb.SecurityContext)
	same(t, "volumeMounts", ca.VolumeMounts, cb.VolumeMounts)
}

// TestShippedConfigLoads feeds the ConfigMap's config.yaml to the binary's
// own loader, which refuses unknown keys and invalid values.
func TestShippedConfigLoads(t *testing.T) {
	cfg, err := config.Load("common/config.yaml")
	if err != nil {
		t.Fatalf("common/config.yaml: %v", err)
	}
	if cfg.Namespace != "" {
		t.Errorf("common/config.yaml sets namespace %q; the workload passes --namespace from where it runs", cfg.Namespace)
	}
}

func readManifest(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func mainContainer(t *testing.T, path string, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == "hap-reconciler" })
	if i < 0 {
		t.Fatalf("%s: no container named hap-reconciler", path)
	}
	return pod.Containers[i]
}

func withoutEnv(env []corev1.EnvVar, name string) []corev1.EnvVar {
	return slices.DeleteFunc(slices.Clone(env), func(e corev1.EnvVar) bool { return e.Name == name })
}

func same(t *testing.T, field string, cron, deploy any) {
	t.Helper()
	if !reflect.DeepEqual(cron, deploy) {
		t.Errorf("%s differs between cronjob/cronjob.yaml and serve/deployment.yaml:\ncronjob:    %+v\ndeployment: %+v", field, cron, deploy)
	}
}
