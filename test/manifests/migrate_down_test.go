package manifests_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

const migrateJob = "Job/" + releaseName + "-migrate"

// renderDocs renders the chart as an upgrade (helm upgrade's
// .Release.IsInstall false) and returns each document's text by kind/name.
func renderDocs(t *testing.T, helm string, args ...string) map[string]string {
	t.Helper()
	out, _ := render(t, helm, "kcp-system", append([]string{"--is-upgrade"}, args...)...)
	docs := map[string]string{}
	for _, doc := range strings.Split(out, "\n---\n") {
		objs := decodeObjects(t, doc)
		if len(objs) != 1 {
			continue
		}
		docs[objs[0].GetKind()+"/"+objs[0].GetName()] = doc
	}
	if _, ok := docs[migrateJob]; !ok {
		t.Fatalf("no %s among the rendered documents %v", migrateJob, slices.Sorted(maps.Keys(docs)))
	}
	return docs
}

func migrateArgs(t *testing.T, doc string) []string {
	t.Helper()
	var args []string
	for _, a := range containerOf(t, doc, "migrate")["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

func containerOf(t *testing.T, doc, name string) map[string]any {
	t.Helper()
	job := decodeObjects(t, doc)[0]
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == name {
			return c
		}
	}
	t.Fatalf("no container %s in %s", name, doc)
	return nil
}

// Rolling the job back is an upgrade of the installed release with
// direction=down, then helm rollback: the upgrade's hook, with the newer
// image and its down files, runs `migrate --down N`, and nothing else of the
// release changes, so the running pods are not restarted (the workloads'
// checksum/config annotations included) before the rollback replaces them.
func TestMigrationsDirectionDownRevertsAndChangesNothingElse(t *testing.T) {
	helm := helmBin(t)
	for _, v := range []variant{{"KEB's values.yaml (serve)", []string{"-f", kebValues}},
		{"cronjob", []string{"-f", kebValues, "--set", "hapReconciler.mode=cronjob"}}} {
		unset := renderDocs(t, helm, v.args...)
		up := renderDocs(t, helm, append(slices.Clone(v.args), "--set", "hapReconciler.migrations.direction=up")...)
		down := renderDocs(t, helm, append(slices.Clone(v.args), "--set", "hapReconciler.migrations.direction=down",
			"--set", "hapReconciler.migrations.downSteps=3")...)

		wantUp := []string{"migrate", "--config=/etc/hap-reconciler/config.yaml", "--log-level=info"}
		if got := migrateArgs(t, up[migrateJob]); !slices.Equal(got, wantUp) {
			t.Errorf("%s, direction=up: migrate args %q, want %q", v.name, got, wantUp)
		}
		if up[migrateJob] != unset[migrateJob] {
			t.Errorf("%s: direction=up renders the hook otherwise than the default:\n%s\n---\n%s", v.name, up[migrateJob], unset[migrateJob])
		}
		wantDown := []string{"migrate", "--down", "3", "--config=/etc/hap-reconciler/config.yaml", "--log-level=info"}
		if got := migrateArgs(t, down[migrateJob]); !slices.Equal(got, wantDown) {
			t.Errorf("%s, direction=down: migrate args %q, want %q", v.name, got, wantDown)
		}

		// Every other document byte for byte: the workload, its ConfigMap,
		// the hook's ConfigMap, the test Pod.
		if len(up) != len(down) {
			t.Errorf("%s: %d documents with direction=up, %d with down", v.name, len(up), len(down))
		}
		for name, doc := range up {
			if name != migrateJob && down[name] != doc {
				t.Errorf("%s: direction=down changes %s:\n%s\n--- down:\n%s", v.name, name, doc, down[name])
			}
		}
	}
}

// On install there is no older revision to roll back to; the chart says so
// naming the value. An upgrade with it renders.
func TestMigrationsDirectionDownIsRefusedOnInstall(t *testing.T) {
	helm := helmBin(t)
	args := []string{"template", releaseName, chartDir, "--kube-version", kubeVersion, "-f", kebValues,
		"--set", "hapReconciler.migrations.direction=down"}
	out, err := runErr(helm, args...)
	if err == nil || !strings.Contains(out, "hapReconciler.migrations.direction=down on install") {
		t.Errorf("install with direction=down: want the chart to refuse it naming hapReconciler.migrations.direction, got %v:\n%s", err, out)
	}
	if out, err := runErr(helm, append(args, "--is-upgrade")...); err != nil {
		t.Errorf("upgrade with direction=down: %v\n%s", err, out)
	}
}

func TestMigrationsDirectionSchema(t *testing.T) {
	helm := helmBin(t)
	for _, c := range []struct{ set, want string }{
		{"hapReconciler.migrations.direction=sideways", "/hapReconciler/migrations/direction"},
		{"hapReconciler.migrations.downSteps=0", "/hapReconciler/migrations/downSteps"},
	} {
		out, err := runErr(helm, "template", releaseName, chartDir, "--kube-version", kubeVersion, "-f", kebValues, "--is-upgrade",
			"--set", "hapReconciler.migrations.direction=down", "--set", c.set)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: want values.schema.json to refuse it at %s, got %v:\n%s", c.set, c.want, err, out)
		}
	}
}

// checkDirectionDownNotes installs the chart for real (no hooks: nothing
// runs pods here) and has helm render the documented down upgrade
// (--reuse-values, no values file) against it: the notes say what to run
// next, the release keeps KEB's values, and helm's manifest of the release,
// hooks aside, is the installed one.
func checkDirectionDownNotes(ctx context.Context, t *testing.T, helm string, kube *testbed.Kube) {
	t.Helper()
	ns := restrictedNamespace(ctx, t, kube, "kcp-down")
	kc := []string{"--namespace", ns, "--kubeconfig", kube.KubeconfigPath()}
	run(t, helm, append([]string{"install", releaseName, chartDir, "--no-hooks", "-f", kebValues}, kc...)...)
	installed := run(t, helm, append([]string{"get", "manifest", releaseName}, kc...)...)
	if !strings.Contains(installed, "kind: Deployment\n") {
		t.Fatalf("helm get manifest: no Deployment in the installed release:\n%s", installed)
	}
	out := run(t, helm, append([]string{"upgrade", releaseName, chartDir, "--reuse-values", "--dry-run=server",
		"--set", "hapReconciler.migrations.direction=down", "--set", "hapReconciler.migrations.downSteps=2"}, kc...)...)
	for _, w := range []string{"(upgraded)", "Gardener project:  garden-kyma-dev (from gardener.project)",
		"SCHEMA REVERTED by 2 migration(s) (hapReconciler.migrations.direction=down)",
		"helm rollback " + releaseName + " <revision> -n " + ns + "\n",
		"helm upgrade --reuse-values would revert 2 more", `"migrate", "--down", "2", "--config`} {
		if !strings.Contains(out, w) {
			t.Errorf("helm upgrade with direction=down does not say %q:\n%s", w, out)
		}
	}
	_, manifest, _ := strings.Cut(out, "MANIFEST:\n")
	manifest, _, _ = strings.Cut(manifest, "\nNOTES:")
	if strings.TrimSpace(manifest) != strings.TrimSpace(installed) {
		t.Errorf("helm upgrade with direction=down changes the release's manifest:\n%s\n--- installed:\n%s", manifest, installed)
	}
}
