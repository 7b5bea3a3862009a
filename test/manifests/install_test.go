package manifests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

const deploymentDoc = "../../docs/deployment.md"

var jobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

// TestTheDocumentedInstallRunsOnKEBsValues follows docs/deployment.md on
// the test bed with KEB's values.yaml as it is: KEB's database with KEB's
// role owning it, KEB's kcp-postgresql Secret under the key names KEB's
// values give, KEB's Gardener kubeconfig Secret, the namespaces KEB's values
// name (kcp-system, garden-kyma-dev). It runs the guide's steps 1 and 2
// exactly as written (psql and kubectl), then renders the chart with KEB's
// file and
//
//   - resolves every secretKeyRef of every rendered pod (workload, migration
//     hook, helm test Pod; init containers included) against the Secrets
//     that now exist in the API server: a key the guide does not create is
//     the CreateContainerConfigError an operator would meet;
//   - runs the migration hook's container and then the helm test Pod's
//     container as processes, with the environment and files those Secrets
//     and the rendered ConfigMaps give them: the hook migrates as KEB's
//     role, the check passes as the job's role and logs KEB's policy;
//   - breaks the job's password in its Secret and sees the check fail with
//     one JSON error line that names the cause and not the password.
//
// The guide's steps 3 and 4 need a cluster that runs pods: the test bed's
// API server has no kubelet. TestChartAppliesToARealAPIServer applies what
// they would install with a server-side dry run.
func TestTheDocumentedInstallRunsOnKEBsValues(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, etcd and kube-apiserver")
	}
	helm := helmBin(t)
	kubectl, psql := installTools(t)
	bin := buildBinary(t)
	kube := testbed.KubeForTest(t)
	ctx := testbed.Context(t, 10*time.Minute)
	pg, err := testbed.StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	kubeconfig, err := os.ReadFile(kube.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	core := installKEBsSide(ctx, t, kube, pg, kubectl, psql, "127.0.0.1:"+fmt.Sprint(pg.Port()), kubeconfig)

	_, objs := render(t, helm, "kcp-system", "-f", kebValues)
	secrets := func(name, key string) (string, bool) {
		s, err := core.CoreV1().Secrets("kcp-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", false
		}
		v, ok := s.Data[key]
		return string(v), ok
	}
	for _, ref := range secretKeyRefs(t, objs) {
		if _, ok := secrets(ref.name, ref.key); !ok {
			t.Errorf("%s: secretKeyRef %s/%s: the documented install has no such Secret key (CreateContainerConfigError)", ref.where, ref.name, ref.key)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The migration hook, as KEB's role.
	hook := find(t, objs, "Job", releaseName+"-migrate")
	hookPod, _, _ := unstructured.NestedMap(hook.Object, "spec", "template", "spec")
	if code, out := materialize(t, hookPod, "migrate", objs, secrets).run(t, bin); code != 0 {
		t.Fatalf("the migration hook's command: exit %d\n%s", code, out)
	}

	// Something to list in the project KEB's values name.
	loadProject(ctx, t, kube, "garden-kyma-dev")

	// The helm test Pod's command, as the job's role.
	testPod, _, _ := unstructured.NestedMap(find(t, objs, "Pod", releaseName+"-check").Object, "spec")
	code, out := materialize(t, testPod, "hap-reconciler", objs, secrets).run(t, bin)
	if code != 0 {
		t.Fatalf("the helm test Pod's command: exit %d\n%s", code, out)
	}
	lines := logLines(out)
	passed, ok := lines[checkPassedMessage]
	if !ok {
		t.Fatalf("no %q line:\n%s", checkPassedMessage, out)
	}
	if passed["namespace"] != "garden-kyma-dev" || passed["bindings"] != float64(1) || passed["shootsListed"] != true ||
		!strings.HasPrefix(fmt.Sprint(passed["policySource"]), "environment (") || passed["level"] != "INFO" {
		t.Errorf("check line %v: want namespace garden-kyma-dev, bindings and shoots listed, KEB's variables as the source, level INFO", passed)
	}
	if _, ok := lines["multi-account policy in effect"]; !ok {
		t.Errorf("the check does not log the policy in effect:\n%s", out)
	}

	// The job's Secret with a wrong password: one JSON error line saying
	// what to check, without the password.
	const wrong = "not-the-password-1618"
	s, err := core.CoreV1().Secrets("kcp-system").Get(ctx, "hap-reconciler-postgresql", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte(wrong)
	if s, err = core.CoreV1().Secrets("kcp-system").Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out = materialize(t, testPod, "hap-reconciler", objs, secrets).run(t, bin)
	last := lastLine(out)
	if code != 1 || last["level"] != "ERROR" || !strings.Contains(fmt.Sprint(last["msg"]), "refused the job's login: check the user and password") {
		t.Errorf("check with a wrong password: exit %d, last line %v; want exit 1 and an ERROR line about the login\n%s", code, last, out)
	}
	if strings.Contains(out, wrong) {
		t.Errorf("the log shows the password:\n%s", out)
	}
	s.Data["password"] = []byte(hapPassword)
	if _, err := core.CoreV1().Secrets("kcp-system").Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	checkInClusterReports(ctx, t, helm, kubectl, kube, bin, objs, secrets)

	// The guide's uninstall: its database part, as written, leaves no trace
	// of the job in KEB's database.
	uninstall := shellBlock(t, "DROP SCHEMA hap CASCADE")
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", uninstall)
	cmd.Env = []string{"PATH=" + filepath.Dir(psql) + ":/usr/bin:/bin", "HOME=" + t.TempDir(),
		"KEB_DATABASE_URL=" + pg.RoleURL(kebRole, kebPassword, "broker")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docs/deployment.md's uninstall: %v\n%s\n---\n%s", err, out, uninstall)
	}
	for _, probe := range []string{"SELECT 1/count(*) FROM pg_roles WHERE rolname = 'hap_reconciler'", "SELECT 1/count(*) FROM pg_namespace WHERE nspname = 'hap'"} {
		if err := pg.Exec(ctx, "broker", probe); err == nil {
			t.Errorf("after the guide's uninstall, %q still finds the job's role or schema", probe)
		}
	}
}

// installTools returns kubectl and psql, which the guide's steps use.
func installTools(t *testing.T) (kubectl, psql string) {
	t.Helper()
	kubectl = ensureTool(t, "kubectl", "install-kubectl.sh")
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Fatalf("psql is needed to run the guide's step 1: %v", err)
	}
	return kubectl, psql
}

// The roles and passwords of KEB's side of an installation.
const kebRole, kebPassword, hapPassword = "keb", "keb-pw-2718", "hap-pw-3141"

// installKEBsSide makes what docs/deployment.md's Install section starts
// from -- KEB's namespaces (kcp-system, the project's garden-kyma-dev),
// KEB's database broker owned by KEB's role, KEB's Secrets kcp-postgresql
// (under the key names of KEB's values, the database at dbAddr, host:port as
// the job reaches it) and gardener-credentials (gardenerKubeconfig) -- then
// runs the guide's steps 1 and 2 exactly as written (psql and kubectl).
func installKEBsSide(ctx context.Context, t *testing.T, kube *testbed.Kube, pg *testbed.Postgres, kubectl, psql, dbAddr string, gardenerKubeconfig []byte) kubernetes.Interface {
	t.Helper()
	dbHost, dbPort, err := net.SplitHostPort(dbAddr)
	if err != nil {
		t.Fatal(err)
	}
	core := kubernetes.NewForConfigOrDie(kube.Config())
	for _, ns := range []string{"kcp-system", "garden-kyma-dev"} {
		if _, err := core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// KEB's database, owned by KEB's role, which may create roles (the
	// guide's precondition for step 1).
	if _, err := pg.NewDatabase(ctx, "broker"); err != nil {
		t.Fatal(err)
	}
	if err := pg.CreateRole(ctx, kebRole, kebPassword); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"ALTER ROLE keb CREATEROLE", "ALTER DATABASE broker OWNER TO keb"} {
		if err := pg.Exec(ctx, "postgres", stmt); err != nil {
			t.Fatal(err)
		}
	}
	// KEB's tables (testbed.KEBInstancesDDL) are KEB's role's, as KEB's
	// migrations leave them: the guide's step 1 grants on them as that role.
	if err := pg.Exec(ctx, "broker", "ALTER SCHEMA public OWNER TO keb; ALTER TABLE instances OWNER TO keb; "+
		"ALTER TABLE operations OWNER TO keb; ALTER TABLE events OWNER TO keb"); err != nil {
		t.Fatal(err)
	}

	// KEB's own Secrets, as KEB's landscape has them: kcp-postgresql under
	// the key names of KEB's values, and the Gardener kubeconfig.
	keys := kebDatabaseKeys(t)
	createSecret(ctx, t, core, keys.SecretName, map[string]string{
		keys.Host: dbHost, keys.Port: dbPort, keys.Name: "broker", keys.SSLMode: "disable",
		keys.User: kebRole, keys.Password: kebPassword,
	})
	createSecret(ctx, t, core, "gardener-credentials", map[string]string{"kubeconfig": string(gardenerKubeconfig)})

	// The guide's steps 1 and 2, as written.
	script := installSteps(t)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = []string{
		"PATH=" + filepath.Dir(psql) + ":" + filepath.Dir(kubectl) + ":/usr/bin:/bin",
		"HOME=" + t.TempDir(),
		"KUBECONFIG=" + kube.KubeconfigPath(),
		"KEB_DATABASE_URL=" + pg.RoleURL(kebRole, kebPassword, "broker"),
		"HAP_PASSWORD=" + hapPassword,
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docs/deployment.md steps 1 and 2: %v\n%s\n---\n%s", err, out, script)
	}
	return core
}

// shellBlock is the sh block of docs/deployment.md that contains marker.
func shellBlock(t *testing.T, marker string) string {
	t.Helper()
	doc, err := os.ReadFile(deploymentDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], marker) {
			return m[1]
		}
	}
	t.Fatalf("%s: no sh block with %q", deploymentDoc, marker)
	return ""
}

// checkInClusterReports runs the runbook's two ways to get a report on the
// landscape. serve: the arguments `kubectl exec` hands the binary, in the
// Deployment's container (its variables and files). cronjob: the runbook's
// pipeline, creating a Job from the CronJob (installed for real, nothing
// runs it here), whose container is then run as a process. Both must print
// the report as JSON on stdout.
func checkInClusterReports(ctx context.Context, t *testing.T, helm, kubectl string, kube *testbed.Kube, bin string,
	objs []*unstructured.Unstructured, secrets secretValue) {
	t.Helper()
	runbook, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(# serve mode.*?)```").FindStringSubmatch(string(runbook))
	if block == nil {
		t.Fatalf("%s: no block with the in-cluster report", runbookFile)
	}
	serveCmd, cronCmd, ok := strings.Cut(block[1], "# cronjob mode")
	if !ok {
		t.Fatalf("%s: the in-cluster report block has no cronjob part", runbookFile)
	}

	// serve: what follows `--` of the kubectl exec line, with $NS.
	flat := strings.ReplaceAll(serveCmd, "\\\n", " ")
	_, execArgs, ok := strings.Cut(flat, " -- ")
	if !ok {
		t.Fatalf("no kubectl exec ... -- in %q", serveCmd)
	}
	fields := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(execArgs, `"$NS"`, "garden-kyma-dev"), "$NS", "garden-kyma-dev"))
	if fields[0] != "/hap-reconciler" {
		t.Fatalf("the exec line runs %q, not the image's /hap-reconciler", fields[0])
	}
	p := materialize(t, workloadPod(t, objs), "hap-reconciler", objs, secrets)
	p.args = p.rebaseAll(fields[1:])
	reportJSON(t, "serve: kubectl exec", p, bin)

	// cronjob: install the CronJob for real, run the runbook's pipeline up
	// to the logs (which would wait for a pod no kubelet starts).
	_, cronObjs := render(t, helm, "kcp-system", "-f", kebValues, "--set", "hapReconciler.mode=cronjob")
	k := kubectlRunner{t: t, bin: kubectl, kubeconfig: kube.KubeconfigPath()}
	k.run("apply", "-f", writeObjects(t, []*unstructured.Unstructured{find(t, cronObjs, "CronJob", releaseName)}))
	var pipeline []string
	for _, line := range strings.Split(cronCmd, "\n") {
		if !strings.Contains(line, " logs -f ") {
			pipeline = append(pipeline, line)
		}
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.Join(pipeline, "\n"))
	cmd.Env = []string{"PATH=" + filepath.Dir(kubectl) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "KUBECONFIG=" + kube.KubeconfigPath()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the runbook's cronjob report commands: %v\n%s", err, out)
	}
	job, err := dynamic.NewForConfigOrDie(kube.Config()).Resource(jobs).Namespace("kcp-system").Get(ctx, "hap-reconciler-report", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the runbook's pipeline created no Job hap-reconciler-report: %v", err)
	}
	jobPod, _, _ := unstructured.NestedMap(job.Object, "spec", "template", "spec")
	reportJSON(t, "cronjob: Job from the CronJob", materialize(t, jobPod, "hap-reconciler", cronObjs, secrets), bin)
}

// reportJSON runs p and wants the report as JSON on stdout.
func reportJSON(t *testing.T, name string, p podProcess, bin string) {
	t.Helper()
	if len(p.args) == 0 || p.args[0] != "report" {
		t.Errorf("%s: args %v, want report first", name, p.args)
		return
	}
	stdout, logs, code := p.runSplit(t, bin)
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Errorf("%s: exit %d, stdout not a JSON report:\n%s\nlogs:\n%s", name, code, stdout, logs)
	}
}

// checkPassedMessage is what hap-reconciler check logs when all holds.
const checkPassedMessage = "check passed: the job can read KEB's database with its role and list the project's bindings and shoots"

// kebDBKeys are the key names of KEB's database Secret, as KEB's values
// give them (global.database.managedGCP.*SecretKey).
type kebDBKeys struct {
	SecretName string `json:"secretName"`
	Host       string `json:"hostSecretKey"`
	Port       string `json:"portSecretKey"`
	Name       string `json:"nameSecretKey"`
	SSLMode    string `json:"sslModeSecretKey"`
	User       string `json:"userNameSecretKey"`
	Password   string `json:"passwordSecretKey"`
}

func kebDatabaseKeys(t *testing.T) kebDBKeys {
	t.Helper()
	var v struct {
		Global struct {
			Database struct {
				ManagedGCP kebDBKeys `json:"managedGCP"`
			} `json:"database"`
		} `json:"global"`
	}
	readYAML(t, kebValues, &v)
	return v.Global.Database.ManagedGCP
}

// installSteps returns the guide's first shell block of its Install
// section: steps 1 and 2.
func installSteps(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(deploymentDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, install, ok := strings.Cut(string(doc), "\n## Install\n")
	if !ok {
		t.Fatalf("%s has no Install section", deploymentDoc)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(install)
	if m == nil || !strings.Contains(m[1], "CREATE ROLE") || !strings.Contains(m[1], "create secret generic") {
		t.Fatalf("%s: the Install section's first sh block is not steps 1 and 2", deploymentDoc)
	}
	return m[1]
}

func createSecret(ctx context.Context, t *testing.T, core kubernetes.Interface, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: data}
	if _, err := core.CoreV1().Secrets("kcp-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s: %v", name, err)
	}
}

type secretRef struct{ where, name, key string }

// secretKeyRefs lists the secretKeyRef of every variable of every container
// of every pod the objects hold.
func secretKeyRefs(t *testing.T, objs []*unstructured.Unstructured) []secretRef {
	t.Helper()
	var refs []secretRef
	for _, p := range podsOf(objs) {
		o, pod := p.obj, p.spec
		for _, list := range []string{"initContainers", "containers"} {
			containers, _ := pod[list].([]any)
			for _, c := range containers {
				c := c.(map[string]any)
				env, _ := c["env"].([]any)
				for _, e := range env {
					ref, _, _ := unstructured.NestedStringMap(e.(map[string]any), "valueFrom", "secretKeyRef")
					if ref != nil {
						refs = append(refs, secretRef{where: fmt.Sprintf("%s %s, container %s", o.GetKind(), o.GetName(), c["name"]), name: ref["name"], key: ref["key"]})
					}
				}
			}
		}
	}
	if len(refs) == 0 {
		t.Fatal("no secretKeyRef in the rendered pods")
	}
	return refs
}

// lastLine is the last JSON line of out.
func lastLine(out string) map[string]any {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	_ = yaml.Unmarshal([]byte(lines[len(lines)-1]), &m)
	return m
}
