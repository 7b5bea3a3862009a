package manifests_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// noLimit is what KEB applies when its default limit is 0 or not set
// (envconfig's default=999999 on HyperscalerAccountLimits.Default).
const noLimit = 999999

// TestTheJobLogsKEBsPolicy renders the chart with KEB's values and starts
// the built binary exactly as the rendered workload would: its arguments, its
// environment (the variables with literal values; the database's come from
// Secrets and are left out, so the run stops at the database), and the
// rendered ConfigMaps as files at their mount paths. The multi-account
// policy the job logs at start must be the one KEB applies from the same
// values file, worked out here from the file alone.
//
// This runs the binary rather than config.LoadWithEnv on the rendered
// variables because what has to hold is the whole path: the chart's variable
// names and values, the mounted files and the flags that point at them,
// and the binary's own reading of all of it.
func TestTheJobLogsKEBsPolicy(t *testing.T) {
	helm := helmBin(t)
	bin := buildBinary(t)
	for _, values := range []string{kebHapValues, kebLandscapeValues, kebValues, kebNestedValues} {
		t.Run(filepath.Base(values), func(t *testing.T) {
			_, objs := render(t, helm, "kcp-system", "-f", values, "--set", "hapReconciler.gardener.namespace=garden-kyma-dev")
			lines := startAsTheWorkload(t, bin, objs)
			got, ok := lines[app.PolicyMessage]
			if !ok {
				t.Fatalf("no %q line in the job's log:\n%s", app.PolicyMessage, joinLines(lines))
			}
			want := kebPolicy(t, values)
			for _, key := range []string{"enabled", "allowedGlobalAccounts", "limits", "minBindingsForGuard"} {
				if !reflect.DeepEqual(normalize(got[key]), normalize(want[key])) {
					t.Errorf("%s: the job logs %v, KEB applies %v", key, got[key], want[key])
				}
			}
			if src, _ := got["source"].(string); !strings.HasPrefix(src, "environment (") {
				t.Errorf("source %q: want KEB's variables", src)
			}
		})
	}
}

// kebPolicy is what KEB applies from the hap block of a values file: the
// allowlist as listed (on as soon as it has an entry), the guard, and per
// provider KEB's LimitForProvider on the variables its chart sets: aws, gcp
// and azure their own limit unless 0; openstack and alicloud, whose
// variables KEB's chart misnames, and gdch, which KEB has no field for, the
// default; a default of 0 or none means no limit.
func kebPolicy(t *testing.T, valuesFile string) map[string]any {
	t.Helper()
	type hapBlock struct {
		HAP struct {
			MultiHyperscalerAccount struct {
				AllowedGlobalAccounts []string       `json:"allowedGlobalAccounts"`
				MinBindingsForGuard   int            `json:"minBindingsForGuard"`
				Limits                map[string]int `json:"limits"`
			} `json:"multiHyperscalerAccount"`
		} `json:"hap"`
	}
	// KEB's keys at the top, or under a wrapper chart's subchart key keb.
	var v struct {
		hapBlock
		KEB *hapBlock `json:"keb"`
	}
	readYAML(t, valuesFile, &v)
	if v.KEB != nil {
		v.hapBlock = *v.KEB
	}
	m := v.HAP.MultiHyperscalerAccount
	def := m.Limits["default"]
	if def == 0 {
		def = noLimit
	}
	limits := map[string]any{"default": def, "openstack": def, "alicloud": def}
	for _, p := range []string{"aws", "gcp", "azure"} {
		if n := m.Limits[p]; n > 0 {
			limits[p] = n
		} else {
			limits[p] = def
		}
	}
	allowed := []any{}
	for _, ga := range m.AllowedGlobalAccounts {
		allowed = append(allowed, ga)
	}
	return map[string]any{
		"enabled":               len(m.AllowedGlobalAccounts) > 0,
		"allowedGlobalAccounts": allowed,
		"limits":                limits,
		"minBindingsForGuard":   m.MinBindingsForGuard,
	}
}

// normalize makes JSON numbers and Go ints, and a missing and an empty
// list, compare equal.
func normalize(v any) any {
	out, _ := json.Marshal(v)
	var n any
	_ = json.Unmarshal(out, &n)
	if n == nil {
		return []any{}
	}
	return n
}

// startAsTheWorkload runs bin with the rendered workload's (Deployment or
// CronJob) arguments and environment, the ConfigMaps it mounts written
// under a temporary root, and returns the JSON log lines by message.
func startAsTheWorkload(t *testing.T, bin string, objs []*unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	p := materialize(t, workloadPod(t, objs), "hap-reconciler", objs, nil)
	code, out := p.run(t, bin)
	if code == 0 {
		t.Fatalf("the job ran without a database:\n%s", out)
	}
	lines := logLines(out)
	if len(lines) == 0 {
		t.Fatalf("the job logged no JSON line (args %q):\n%s", p.args, out)
	}
	return lines
}

// workloadPod is the pod spec of the rendered Deployment or CronJob.
func workloadPod(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	for _, p := range podsOf(objs) {
		if kind := p.obj.GetKind(); kind == "Deployment" || kind == "CronJob" {
			return p.spec
		}
	}
	t.Fatal("no Deployment or CronJob among the rendered objects")
	return nil
}

// podProcess is a container of a rendered pod made into a local process:
// its arguments and environment, its volumes written under root.
type podProcess struct {
	args []string
	env  []string
	// rebase moves a path under a mount point (or a flag's value that is
	// one) under the process's root.
	rebase func(string) string
}

// rebaseAll is rebase for each of args.
func (p podProcess) rebaseAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = p.rebase(a)
	}
	return out
}

// secretValue resolves a secretKeyRef or a Secret volume's key; nil leaves
// Secret-sourced variables out and Secret volumes empty.
type secretValue func(name, key string) (string, bool)

// materialize prepares container of pod to run here: ConfigMap volumes from
// the rendered objects, Secret volumes and secretKeyRef variables through
// secrets, and every path under a mount point moved under a temporary root.
func materialize(t *testing.T, pod map[string]any, container string, objs []*unstructured.Unstructured, secrets secretValue) podProcess {
	t.Helper()
	var c map[string]any
	for _, x := range pod["containers"].([]any) {
		if x.(map[string]any)["name"] == container {
			c = x.(map[string]any)
		}
	}
	if c == nil {
		t.Fatalf("no container %s in the pod", container)
	}
	root := t.TempDir()

	volumes := map[string]map[string]any{}
	for _, v := range pod["volumes"].([]any) {
		v := v.(map[string]any)
		volumes[v["name"].(string)] = v
	}
	var mounts []string
	for _, m := range c["volumeMounts"].([]any) {
		m := m.(map[string]any)
		path := m["mountPath"].(string)
		mounts = append(mounts, path)
		dir := filepath.Join(root, path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data := map[string]string{}
		volume := volumes[m["name"].(string)]
		if cm, ok := volume["configMap"].(map[string]any); ok {
			data, _, _ = unstructured.NestedStringMap(find(t, objs, "ConfigMap", cm["name"].(string)).Object, "data")
		}
		if s, ok := volume["secret"].(map[string]any); ok && secrets != nil {
			data = secretVolume(t, s, secrets)
		}
		for file, content := range data {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Paths under a mount point now live under root: a value, or a flag's
	// value after "=", that starts with a mount path is moved, once.
	rebase := func(s string) string {
		flag, value, isFlag := strings.Cut(s, "=")
		if !isFlag || !strings.HasPrefix(flag, "--") {
			flag, value = "", s
		} else {
			flag += "="
		}
		for _, m := range mounts {
			if value == m || strings.HasPrefix(value, m+"/") {
				return flag + filepath.Join(root, value)
			}
		}
		return s
	}
	var args []string
	for _, a := range c["args"].([]any) {
		if strings.Contains(a.(string), "$(") {
			t.Fatalf("argument %q refers to a variable; expand it here first", a)
		}
		args = append(args, rebase(a.(string)))
	}
	env := []string{"HOME=" + root}
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		if value, ok := e["value"].(string); ok {
			env = append(env, e["name"].(string)+"="+rebase(value))
			continue
		}
		ref, _, _ := unstructured.NestedStringMap(e, "valueFrom", "secretKeyRef")
		if ref == nil || secrets == nil {
			continue
		}
		value, ok := secrets(ref["name"], ref["key"])
		if !ok {
			t.Fatalf("variable %s: Secret %s has no key %s", e["name"], ref["name"], ref["key"])
		}
		env = append(env, e["name"].(string)+"="+value)
	}
	return podProcess{args: args, env: env, rebase: rebase}
}

// secretVolume is what a Secret volume holds: its items, or every key.
func secretVolume(t *testing.T, volume map[string]any, secrets secretValue) map[string]string {
	t.Helper()
	name := volume["secretName"].(string)
	optional, _ := volume["optional"].(bool)
	out := map[string]string{}
	items, _ := volume["items"].([]any)
	for _, it := range items {
		it := it.(map[string]any)
		value, ok := secrets(name, it["key"].(string))
		if !ok {
			if optional {
				continue
			}
			t.Fatalf("Secret volume %s: no key %s", name, it["key"])
		}
		out[it["path"].(string)] = value
	}
	if len(items) == 0 {
		// The tests mount whole Secrets of one key only: the kubeconfig.
		if value, ok := secrets(name, "kubeconfig"); ok {
			out["kubeconfig"] = value
		}
	}
	return out
}

// run starts the process and returns its exit code and its stdout (the
// job's log).
func (p podProcess) run(t *testing.T, bin string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.args...)
	cmd.Env = p.env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errorsAs(err, &exit) {
		t.Fatalf("start %s: %v", bin, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String()
}

// runSplit starts the process and returns its stdout and stderr apart,
// and its exit code.
func (p podProcess) runSplit(t *testing.T, bin string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.args...)
	cmd.Env = p.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errorsAs(err, &exit) {
		t.Fatalf("start %s: %v", bin, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// logLines returns the JSON log lines of out by message.
func logLines(out string) map[string]map[string]any {
	lines := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			if msg, ok := line["msg"].(string); ok {
				lines[msg] = line
			}
		}
	}
	return lines
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func joinLines(lines map[string]map[string]any) string {
	var b strings.Builder
	for msg, l := range lines {
		b.WriteString(msg)
		b.WriteString(": ")
		out, _ := json.Marshal(l)
		b.Write(out)
		b.WriteString("\n")
	}
	return b.String()
}

// buildBinary builds cmd/hap-reconciler for the test.
func buildBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := testbed.BuildBinary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// The rendered config.yaml of every variant loads with the job's own
// loader, which refuses unknown keys and invalid values, and leaves the
// namespace to --namespace.
func TestRenderedConfigLoads(t *testing.T) {
	helm := helmBin(t)
	for _, v := range variants() {
		_, objs := render(t, helm, "kcp-system", v.args...)
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(renderedConfig(t, objs)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Errorf("%s: config.yaml: %v", v.name, err)
			continue
		}
		if cfg.Namespace != "" || cfg.HAP.MultiHyperscalerAccount != nil {
			t.Errorf("%s: config.yaml sets namespace %q or a hap block; both come from KEB's values", v.name, cfg.Namespace)
		}
	}
}
