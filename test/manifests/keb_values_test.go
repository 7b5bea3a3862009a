package manifests_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kebValuesBlob is the git blob id of resources/keb/values.yaml in
// kyma-project/kyma-environment-broker at commit
// bf89c5d51824f5fc05821341896576ce47f9ccff (manifests/testdata/README.md).
const kebValuesBlob = "40b8b49eb3dba55b4c7dde263f7a988429371adb"

// The fixture is KEB's file byte for byte: its git blob id is the one KEB's
// repository has for it at the named commit.
func TestKEBValuesFixtureIsVerbatim(t *testing.T) {
	data, err := os.ReadFile(kebValues)
	if err != nil {
		t.Fatal(err)
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	if got := hex.EncodeToString(h.Sum(nil)); got != kebValuesBlob {
		t.Errorf("%s: git blob %s, want %s (KEB's resources/keb/values.yaml at bf89c5d); keep it verbatim", kebValues, got, kebValuesBlob)
	}
}

// Every secretKeyRef of every rendered pod names either a key of the Secret
// docs/deployment.md creates, or a key of KEB's database Secret by the key
// names KEB's values give it. TestTheDocumentedInstallRunsOnKEBsValues
// checks the same for KEB's values.yaml against a real API server; this
// covers every values file the tests render.
func TestEverySecretKeyRefNamesADocumentedKey(t *testing.T) {
	helm := helmBin(t)
	docName, docKeys := documentedSecret(t)
	defaults := kebDatabaseKeys(t)
	for _, v := range variants() {
		_, objs := render(t, helm, "kcp-system", v.args...)
		keb := kebKeysOf(t, v.args, defaults)
		for _, ref := range secretKeyRefs(t, objs) {
			switch {
			case ref.name == docName && slices.Contains(docKeys, ref.key):
			case ref.name == keb.SecretName && slices.Contains([]string{keb.Host, keb.Port, keb.Name, keb.SSLMode, keb.User, keb.Password}, ref.key):
			default:
				t.Errorf("%s: %s reads key %q of Secret %q: neither the guide's Secret %s %v nor KEB's %s has it",
					v.name, ref.where, ref.key, ref.name, docName, docKeys, keb.SecretName)
			}
		}
	}
}

// documentedSecret is the Secret step 2 of docs/deployment.md creates: its
// name and its keys.
func documentedSecret(t *testing.T) (string, []string) {
	t.Helper()
	steps := installSteps(t)
	name := regexp.MustCompile(`create secret generic (\S+)`).FindStringSubmatch(steps)
	if name == nil {
		t.Fatalf("%s: step 2 creates no Secret", deploymentDoc)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`--from-literal=([A-Za-z0-9._-]+)=`).FindAllStringSubmatch(steps, -1) {
		keys = append(keys, m[1])
	}
	return name[1], keys
}

// kebKeysOf is KEB's database Secret as the values files in args name it:
// KEB's defaults, overridden by each file's global.database.managedGCP.
func kebKeysOf(t *testing.T, args []string, keys kebDBKeys) kebDBKeys {
	t.Helper()
	for i, a := range args {
		if a != "-f" {
			continue
		}
		var v struct {
			Global struct {
				Database struct {
					ManagedGCP map[string]string `json:"managedGCP"`
				} `json:"database"`
			} `json:"global"`
		}
		readYAML(t, args[i+1], &v)
		m := v.Global.Database.ManagedGCP
		for key, field := range map[string]*string{"secretName": &keys.SecretName, "hostSecretKey": &keys.Host, "portSecretKey": &keys.Port,
			"nameSecretKey": &keys.Name, "sslModeSecretKey": &keys.SSLMode, "userNameSecretKey": &keys.User, "passwordSecretKey": &keys.Password} {
			if m[key] != "" {
				*field = m[key]
			}
		}
	}
	return keys
}

// A wrapper chart's values file, KEB's keys under keb: read from there, or
// from the key hapReconciler.kebValuesKey names, which wins over the top
// level. Refused, naming the way out, when the top level has KEB's keys
// too, when the named key is missing, and when no project is given at all.
func TestKEBsKeysUnderASubchartKey(t *testing.T) {
	helm := helmBin(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"found", []string{"-f", kebNestedValues}},
		{"named, over another project at the top", []string{"-f", kebNestedValues, "--set", "gardener.project=kyma-other", "--set", "hapReconciler.kebValuesKey=keb"}},
	} {
		_, objs := render(t, helm, "kcp-system", c.args...)
		args := mainContainerArgs(t, objs)
		if !slices.Contains(args, "--namespace=garden-kyma-stage") {
			t.Errorf("%s: args %v, want --namespace=garden-kyma-stage (keb.gardener.project)", c.name, args)
		}
		if got := envValue(t, objs, "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_ALLOWED_GLOBAL_ACCOUNTS"); got != "3e64ebae-38b5-46a0-b1ed-9ccee153a0ae,8cd57dc2-edb2-45e0-af8b-7d881006e516" {
			t.Errorf("%s: allowlist %q, want keb.hap's", c.name, got)
		}
		rules, _, _ := unstructured.NestedString(find(t, objs, "ConfigMap", releaseName).Object, "data", "hapRule.yaml")
		if !strings.Contains(rules, "aws(PR=cf-eu11) -> EU") {
			t.Errorf("%s: hapRule.yaml %q, want keb.hap.rule", c.name, rules)
		}
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no project", []string{"-f", kebValuesWithoutProject}, "gardener.project is not set"},
		{"KEB's keys at the top and under keb", []string{"-f", kebLandscapeValues, "-f", kebNestedValues}, "set hapReconciler.kebValuesKey"},
		{"a key that is not there", []string{"-f", kebValues, "--set", "hapReconciler.kebValuesKey=kyma-env-broker"}, `hapReconciler.kebValuesKey: "kyma-env-broker" holds no map`},
	} {
		out, err := runErr(helm, append([]string{"template", releaseName, chartDir, "--kube-version", kubeVersion}, c.args...)...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: want a refusal saying %q, got %v:\n%s", c.name, c.want, err, out)
		}
	}
}

// envValue is the literal value of variable name in the main container.
func envValue(t *testing.T, objs []*unstructured.Unstructured, name string) string {
	t.Helper()
	for _, e := range mainContainer(t, objs)["env"].([]any) {
		if e := e.(map[string]any); e["name"] == name {
			v, _ := e["value"].(string)
			return v
		}
	}
	t.Fatalf("no variable %s", name)
	return ""
}
