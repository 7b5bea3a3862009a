package manifests_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every pod of the chart (workload, migration hook, helm test Pod) pulls the
// job's image from the registry KEB's images come from
// (global.images.container_registry.path), named as KEB names its own
// (global.images.hap_reconciler.dir and version, the chart's appVersion by
// default), with KEB's image pull secret
// (imagePullSecret, top level or under a wrapper chart's subchart key) and
// the job's own; hapReconciler.image.repository wins over KEB's registry,
// and without a registry anywhere the image is Kyma's production one.
func TestImageFromKEBsRegistryWithKEBsPullSecret(t *testing.T) {
	helm := helmBin(t)
	kebRegistry := kebContainerRegistry(t)
	const (
		mirror  = "registry.mirror.example/kyma"
		tag     = ":0.2.0" // the chart's appVersion
		kebPull = "kcp-registry-pull"
	)
	mirrored := []string{"--set", "global.images.container_registry.path=" + mirror, "--set", "imagePullSecret=" + kebPull}
	for _, c := range []struct {
		name    string
		args    []string
		image   string
		secrets []string
	}{
		{"KEB's values.yaml", []string{"-f", kebValues},
			kebRegistry + "/hap-reconciler" + tag, nil},
		{"a landscape that mirrors KEB's registry", append([]string{"-f", kebValues}, mirrored...),
			mirror + "/hap-reconciler" + tag, []string{kebPull}},
		{"the same in cronjob mode", append([]string{"-f", kebValues, "--set", "hapReconciler.mode=cronjob"}, mirrored...),
			mirror + "/hap-reconciler" + tag, []string{kebPull}},
		{"KEB's registry with a trailing slash", []string{"-f", kebValues, "--set", "global.images.container_registry.path=" + mirror + "/"},
			mirror + "/hap-reconciler" + tag, nil},
		{"KEB's pull secret under the subchart key", []string{"-f", kebNestedValues, "--set", "keb.imagePullSecret=" + kebPull},
			kebRegistry + "/hap-reconciler" + tag, []string{kebPull}},
		{"the job's own repository and pull secrets, KEB's secret among them",
			append([]string{"-f", kebValues, "--set", "hapReconciler.image.repository=registry.own.example/hap-reconciler",
				"--set", "hapReconciler.image.tag=0.3.0-rc.1",
				"--set", "hapReconciler.imagePullSecrets[0].name=own-pull", "--set", "hapReconciler.imagePullSecrets[1].name=" + kebPull}, mirrored...),
			"registry.own.example/hap-reconciler:0.3.0-rc.1", []string{"own-pull", kebPull}},
		{"the version KEB's release automation bumps", []string{"-f", kebValues, "--set", "global.images.hap_reconciler.version=0.3.1"},
			kebRegistry + "/hap-reconciler:0.3.1", nil},
		{"a directory of KEB's registry, as KEB's images have one", append([]string{"-f", kebValues, "--set", "global.images.hap_reconciler.dir=dev/"}, mirrored...),
			mirror + "/dev/hap-reconciler" + tag, []string{kebPull}},
		{"no registry in KEB's values", []string{"-f", kebValues, "--set", "global.images.container_registry.path="},
			"europe-docker.pkg.dev/kyma-project/prod/hap-reconciler" + tag, nil},
	} {
		_, objs := render(t, helm, "kcp-system", c.args...)
		pods := podsOf(objs)
		for _, p := range pods {
			spec := p.spec
			where := c.name + ": " + p.obj.GetKind() + " " + p.obj.GetName()
			containers, _, _ := unstructured.NestedSlice(spec, "containers")
			for _, ct := range containers {
				ct := ct.(map[string]any)
				if name := ct["name"]; name != "hap-reconciler" && name != "migrate" {
					continue
				}
				if ct["image"] != c.image {
					t.Errorf("%s: image %v, want %s", where, ct["image"], c.image)
				}
			}
			var secrets []string
			list, _, _ := unstructured.NestedSlice(spec, "imagePullSecrets")
			for _, s := range list {
				secrets = append(secrets, s.(map[string]any)["name"].(string))
			}
			if !slices.Equal(secrets, c.secrets) {
				t.Errorf("%s: imagePullSecrets %v, want %v", where, secrets, c.secrets)
			}
		}
		if len(pods) != 3 {
			t.Errorf("%s: %d pods (workload, hook, test), want 3", c.name, len(pods))
		}
	}
}

// kebContainerRegistry is global.images.container_registry.path of KEB's
// values.yaml (the fixture, KEB's file verbatim).
func kebContainerRegistry(t *testing.T) string {
	t.Helper()
	var v struct {
		Global struct {
			Images struct {
				ContainerRegistry struct {
					Path string `json:"path"`
				} `json:"container_registry"`
			} `json:"images"`
		} `json:"global"`
		ImagePullSecret *string `json:"imagePullSecret"`
	}
	readYAML(t, kebValues, &v)
	path := strings.TrimSuffix(v.Global.Images.ContainerRegistry.Path, "/")
	if path == "" || v.ImagePullSecret == nil {
		t.Fatalf("%s: no global.images.container_registry.path or imagePullSecret; KEB's keys have moved", kebValues)
	}
	return path
}

// The version has one place: set both where KEB's automation bumps it and
// in the job's own tag, the chart refuses rather than let one silently win.
func TestTheImageVersionIsSetInOnePlace(t *testing.T) {
	out, err := runErr(helmBin(t), "template", releaseName, chartDir, "--kube-version", kubeVersion, "-f", kebValues,
		"--set", "global.images.hap_reconciler.version=0.3.1", "--set", "hapReconciler.image.tag=0.3.0")
	if err == nil || !strings.Contains(out, `global.images.hap_reconciler.version "0.3.1" and hapReconciler.image.tag "0.3.0" are both set`) {
		t.Errorf("both set: %v\n%s", err, out)
	}
}

// KEB's custom CA bundle (global.caBundle) reaches every container of the
// job as it reaches KEB's: the ClusterTrustBundle projected as the bundle
// file over the image's certificate directory, read-only. Off, nothing is
// mounted there.
func TestKEBsCABundleReplacesTheImagesInEveryContainer(t *testing.T) {
	helm := helmBin(t)
	for _, on := range []bool{true, false} {
		args := []string{"-f", kebValues}
		if on {
			args = append(args, "--set", "global.caBundle.enabled=true")
		}
		_, objs := render(t, helm, "kcp-system", args...)
		pods := podsOf(objs)
		for _, p := range pods {
			where := p.obj.GetKind() + " " + p.obj.GetName()
			volumes, _, _ := unstructured.NestedSlice(p.spec, "volumes")
			var bundle map[string]any
			for _, v := range volumes {
				if v := v.(map[string]any); v["name"] == "custom-ca-certificates" {
					bundle = v
				}
			}
			sources, _, _ := unstructured.NestedSlice(bundle, "projected", "sources")
			if on && (len(sources) != 1 || !reflect.DeepEqual(sources[0], map[string]any{"clusterTrustBundle": map[string]any{"name": "custom-ca-certificates", "path": "ca-certificates.crt"}})) {
				t.Errorf("caBundle on, %s: volume %v", where, bundle)
			}
			if !on && bundle != nil {
				t.Errorf("caBundle off, %s: volume %v", where, bundle)
			}
			containers, _, _ := unstructured.NestedSlice(p.spec, "containers")
			for _, ct := range containers {
				ct := ct.(map[string]any)
				if name := ct["name"]; name != "hap-reconciler" && name != "migrate" {
					continue
				}
				mounts, _, _ := unstructured.NestedSlice(ct, "volumeMounts")
				mounted := slices.ContainsFunc(mounts, func(m any) bool {
					m2 := m.(map[string]any)
					return m2["name"] == "custom-ca-certificates" && m2["mountPath"] == "/etc/ssl/certs" && m2["readOnly"] == true
				})
				if mounted != on {
					t.Errorf("caBundle %v, %s, container %v: mounted over /etc/ssl/certs %v", on, where, ct["name"], mounted)
				}
			}
		}
		if len(pods) != 3 {
			t.Errorf("%d pods (workload, hook, test), want 3", len(pods))
		}
	}
}
