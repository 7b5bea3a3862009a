package manifests_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var vaultStaticSecrets = schema.GroupVersionResource{Group: "secrets.hashicorp.com", Version: "v1beta1", Resource: "vaultstaticsecrets"}

// fromVault are the values that make the job's database Secret from Vault:
// KEB's values file (global.secrets.mechanism vso, KEB's Vault namespace and
// mount) and the Vault secret holding the job's role.
var fromVault = []string{"-f", kebValues, "--set", "hapReconciler.database.vault.path=kcp/hap-reconciler-postgresql",
	"--set", "hapReconciler.database.vault.userKey=user", "--set", "hapReconciler.database.vault.passwordKey=pass"}

// With KEB's Secrets mechanism vso the chart makes the job's database
// Secret from Vault as KEB's chart makes its own: a VaultStaticSecret that
// the real kube-apiserver, serving the Vault Secrets Operator's own CRD
// (hack/fetch-vso-crd.sh, the operator's release), accepts with strict
// field validation, while the same object with a key the CRD does not have,
// or a value its enum refuses, is refused.
func TestTheDatabaseSecretFromVaultValidatesAgainstTheOperatorsCRD(t *testing.T) {
	helm := helmBin(t)
	crd := ensureTool(t, "secrets.hashicorp.com_vaultstaticsecrets.yaml", "fetch-vso-crd.sh")
	kubectl := ensureTool(t, "kubectl", "install-kubectl.sh")
	kube := testbed.KubeForTest(t)
	k := kubectlRunner{t: t, bin: kubectl, kubeconfig: kube.KubeconfigPath()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k.run("apply", "-f", crd)
	k.run("wait", "--for=condition=Established", "--timeout=60s", "crd/vaultstaticsecrets.secrets.hashicorp.com")
	ns, err := kube.NewNamespace(ctx, "kcp-system")
	if err != nil {
		t.Fatal(err)
	}

	_, objs := render(t, helm, ns, append(slices.Clone(fromVault), serverAPIs(t, kube)...)...)
	vss := find(t, objs, "VaultStaticSecret", "hap-reconciler-postgresql")
	spec := vss.Object["spec"].(map[string]any)
	templates, _, _ := unstructured.NestedMap(spec, "destination", "transformation", "templates")
	target, _, _ := unstructured.NestedSlice(spec, "rolloutRestartTargets")
	if spec["namespace"] != "kyma" || spec["mount"] != "kcp-dev" || spec["path"] != "kcp/hap-reconciler-postgresql" || spec["type"] != "kv-v2" ||
		templates["username"].(map[string]any)["text"] != `{{- get .Secrets "user" -}}` ||
		templates["password"].(map[string]any)["text"] != `{{- get .Secrets "pass" -}}` ||
		len(target) != 1 || target[0].(map[string]any)["name"] != find(t, objs, "Deployment", releaseName).GetName() {
		t.Errorf("the VaultStaticSecret reads KEB's Vault namespace and mount, the job's path and keys, and restarts the Deployment: %v", spec)
	}

	client := dynamic.NewForConfigOrDie(kube.Config()).Resource(vaultStaticSecrets).Namespace(ns)
	create := func(obj *unstructured.Unstructured) error {
		_, err := client.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		return err
	}
	if err := create(vss); err != nil {
		t.Fatalf("the kube-apiserver with the operator's CRD refuses the chart's VaultStaticSecret: %v", err)
	}
	for name, spoil := range map[string]func(map[string]any){
		"a key the CRD lacks":   func(s map[string]any) { s["secretPath"] = "kcp/x" },
		"a type the enum lacks": func(s map[string]any) { s["type"] = "kv-v3" },
		"no destination at all": func(s map[string]any) { delete(s, "destination") },
	} {
		bad := vss.DeepCopy()
		spoil(bad.Object["spec"].(map[string]any))
		if err := create(bad); err == nil {
			t.Errorf("%s: the kube-apiserver accepts it, so it does not validate against the CRD's schema", name)
		}
	}
}

// The Vault way is opt-in and fails closed: no VaultStaticSecret without a
// Vault path or with KEB's plain Secrets mechanism (the Secret is then made
// by hand, as make e2e installs it), and a path on a cluster that does not
// serve the operator's API is refused rather than leaving the pods waiting
// for a Secret that never comes.
func TestTheDatabaseSecretFromVaultOnlyWhenAskedAndServed(t *testing.T) {
	helm := helmBin(t)
	vssAPI := []string{"--api-versions", "secrets.hashicorp.com/v1beta1/VaultStaticSecret"}
	for name, args := range map[string][]string{
		"KEB's values, no Vault path": append([]string{"-f", kebValues}, vssAPI...),
		"KEB's plain Secrets":         append(append(slices.Clone(fromVault), "--set", "global.secrets.mechanism=secrets"), vssAPI...),
		"the chart's defaults":        append(append(slices.Clone(project), "--set", "hapReconciler.database.vault.path=kcp/x"), vssAPI...),
	} {
		_, objs := render(t, helm, "kcp-system", args...)
		if slices.Contains(kinds(objs), "VaultStaticSecret") {
			t.Errorf("%s: a VaultStaticSecret is rendered", name)
		}
	}
	out, err := runErr(helm, append([]string{"template", releaseName, chartDir, "--kube-version", kubeVersion}, fromVault...)...)
	if err == nil || !strings.Contains(out, "does not serve secrets.hashicorp.com/v1beta1 VaultStaticSecret") {
		t.Errorf("a Vault path on a cluster without the operator: %v\n%s", err, out)
	}
}
