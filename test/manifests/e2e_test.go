package manifests_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// make e2e sets these; plain go test skips the e2e.
var (
	e2e             = flag.Bool("e2e", false, "run TestChartOnARealKubelet (make e2e: root, containerd, the node binaries)")
	e2eImageArchive = flag.String("e2e.image", "", "the job's OCI image archive (make image)")
	e2ePauseArchive = flag.String("e2e.pause", "", "the sandbox image's OCI archive (hack/build-pause-image.sh)")
)

// TestChartOnARealKubelet installs the chart with KEB's values.yaml as it is
// on a cluster that runs pods -- the test bed's kube-apiserver and
// gardener-apiserver, and a node of containerd, runc and a kubelet
// (testbed.Node) -- with the job's image from make image, and follows a
// release through its life: the migrate hook Job completes, the serve pod
// becomes Ready once its first run has finished and answers /metrics on its
// address, helm test passes, the CronJob mode runs a scheduled Job to
// completion, an upgrade back to serve rolls out, and helm uninstall leaves
// no object of the release in any namespaced kind. Each step is timed.
// docs/e2e.md describes the set-up.
func TestChartOnARealKubelet(t *testing.T) {
	if !*e2e {
		t.Skip("the e2e on a real kubelet runs with make e2e")
	}
	steps := newStepTimer(t)
	ctx := testbed.Context(t, 40*time.Minute)
	e, _ := startE2E(t, ctx, steps)
	before := e.namespacedObjects()

	steps.run("helm install (the migrate hook Job completes)", func() {
		migrated := e.watchJobComplete(releaseName + "-migrate")
		e.release("install")
		e.wantDone(migrated, "the migrate hook Job")
	})
	var podIP string
	steps.run("the serve pod is Ready", func() { podIP = e.waitServeReady() })
	steps.run("its first run's metrics on /metrics at the pod's address", func() { e.wantMetrics(podIP) })
	steps.run("helm test", func() {
		out := e.helmCmd("test", releaseName, "--namespace", "kcp-system", "--logs", "--timeout", "5m")
		if !strings.Contains(out, checkPassedMessage) {
			t.Fatalf("helm test passed without the check's %q:\n%s", checkPassedMessage, out)
		}
	})
	steps.run("helm upgrade to the CronJob mode", func() {
		e.release("upgrade", "--set", "hapReconciler.mode=cronjob", "--set", "hapReconciler.schedule=* * * * *")
	})
	steps.run("a scheduled run completes", e.waitScheduledJobComplete)
	steps.run("helm upgrade back to serve, Ready again", func() {
		e.release("upgrade")
		e.waitServeReady()
	})
	steps.run("the guide's uninstall leaves nothing behind", func() {
		e.guideUninstall()
		e.waitNothingLeft(before)
	})
}

// startE2E starts the cluster of the e2e tests -- the test bed's etcd,
// kube-apiserver, gardener-apiserver and PostgreSQL, and the node --
// imports the sandbox image and the job's image under the reference the
// chart asks for with KEB's values, and makes KEB's side of an install
// (installKEBsSide) with a project of one binding and one shoot.
func startE2E(t *testing.T, ctx context.Context, steps *stepTimer) (*e2eRelease, *testbed.Postgres) {
	t.Helper()
	if *e2eImageArchive == "" || *e2ePauseArchive == "" {
		t.Fatal("-e2e.image and -e2e.pause name the image archives")
	}
	helm := helmBin(t)
	kubectl, psql := installTools(t)

	var kube *testbed.Kube
	var pg *testbed.Postgres
	steps.run("start the test bed (etcd, kube-apiserver, gardener-apiserver, PostgreSQL)", func() {
		kube = testbed.KubeForTest(t, testbed.WithKubeletAccess())
		var err error
		if pg, err = testbed.StartPostgres(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pg.Stop() })
	})
	var node *testbed.Node
	steps.run("start the node (containerd, kubelet, kube-controller-manager, kube-scheduler)", func() {
		var err error
		if node, err = testbed.StartNode(ctx, kube); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			steps.run("stop the node", func() {
				if err := node.Stop(); err != nil {
					t.Errorf("stop the node: %v", err)
				}
			})
		})
	})
	e := &e2eRelease{t: t, ctx: ctx, helm: helm, kubectl: kubectl, kube: kube, node: node,
		core: kubernetes.NewForConfigOrDie(kube.Config())}
	steps.run("import the pause and job images into containerd", func() {
		if err := node.ImportImage(ctx, *e2ePauseArchive, testbed.SandboxImage); err != nil {
			t.Fatal(err)
		}
		// The reference the chart asks for with KEB's values: the archive
		// is tagged with it, as a registry would serve it.
		if err := node.ImportImage(ctx, *e2eImageArchive, e.chartImage()); err != nil {
			t.Fatal(err)
		}
	})
	steps.run("KEB's side: database, Secrets, the guide's steps 1 and 2, a project", func() {
		dbAddr, err := node.Expose(fmt.Sprintf("127.0.0.1:%d", pg.Port()))
		if err != nil {
			t.Fatal(err)
		}
		apiAddr, err := node.Expose(strings.TrimPrefix(kube.Config().Host, "https://"))
		if err != nil {
			t.Fatal(err)
		}
		installKEBsSide(ctx, t, kube, pg, kubectl, psql, dbAddr, e.podKubeconfig(apiAddr))
		loadProject(ctx, t, kube, "garden-kyma-dev")
	})
	return e, pg
}

// guideUninstall runs docs/deployment.md's uninstall block as written.
func (e *e2eRelease) guideUninstall() { e.guideBlock("helm uninstall") }

// guideBlock runs the sh block of docs/deployment.md that contains marker,
// as written, with helm and kubectl on the PATH, the cluster's KUBECONFIG
// and env.
func (e *e2eRelease) guideBlock(marker string, env ...string) {
	e.t.Helper()
	block := shellBlock(e.t, marker)
	// The guide calls helm and kubectl by name.
	bin := e.t.TempDir()
	for name, path := range map[string]string{"helm": e.helm, "kubectl": e.kubectl} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			e.t.Fatal(err)
		}
	}
	cmd := e.command("bash", "-euo", "pipefail", "-c", block)
	cmd.Env = append(append(e.helmEnv(), "PATH="+bin+":/usr/bin:/bin", "KUBECONFIG="+e.kube.KubeconfigPath()), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("docs/deployment.md's block with %q: %v\n%s\n---\n%s%s", marker, err, out, block, e.podStates())
	}
}

// e2eRelease is the release under test and the ways to look at it.
type e2eRelease struct {
	t             *testing.T
	ctx           context.Context
	helm, kubectl string
	kube          *testbed.Kube
	node          *testbed.Node
	core          kubernetes.Interface
}

// release installs or upgrades the release with KEB's values.yaml and args.
func (e *e2eRelease) release(verb string, args ...string) {
	e.t.Helper()
	e.helmCmd(append([]string{verb, releaseName, chartDir, "--namespace", "kcp-system", "-f", kebValues, "--timeout", "5m"}, args...)...)
}

func (e *e2eRelease) helmCmd(args ...string) string {
	e.t.Helper()
	cmd := e.command(e.helm, append(args, "--kubeconfig", e.kube.KubeconfigPath())...)
	cmd.Env = append(e.helmEnv(), "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, e.podStates())
	}
	return string(out)
}

// command is a helm, kubectl or shell command of the test's that dies with
// the test: a killed run leaves no helm waiting for a dead API server.
func (e *e2eRelease) command(name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(e.ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// helmEnv is a fresh home for helm: no repositories or plugins of the
// machine's.
func (e *e2eRelease) helmEnv() []string {
	home := e.t.TempDir()
	return []string{"HOME=" + home, "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
}

// chartImage is the job's image the chart asks for with KEB's values.
func (e *e2eRelease) chartImage() string {
	e.t.Helper()
	_, objs := render(e.t, e.helm, "kcp-system", "-f", kebValues)
	image, _ := mainContainer(e.t, objs)["image"].(string)
	if image == "" {
		e.t.Fatal("the rendered Deployment's container has no image")
	}
	return image
}

// podKubeconfig is the admin kubeconfig with the API server at apiAddr,
// where pods reach it: the Gardener kubeconfig of KEB's
// gardener-credentials. The server's certificate names it "kubernetes",
// not the relay's address.
func (e *e2eRelease) podKubeconfig(apiAddr string) []byte {
	e.t.Helper()
	cfg, err := clientcmd.LoadFromFile(e.kube.KubeconfigPath())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + apiAddr
		c.TLSServerName = "kubernetes"
	}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return raw
}

// watchJobComplete starts watching for Job name to complete and returns
// what the watch found: nil once the Job is Complete, an error when it
// failed or the watch ended first. Helm deletes the migrate hook Job once it
// succeeded, so it is watched from before the install.
func (e *e2eRelease) watchJobComplete(name string) <-chan error {
	e.t.Helper()
	found := make(chan error, 1)
	w, err := e.core.BatchV1().Jobs("kcp-system").Watch(e.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			job, ok := ev.Object.(*batchv1.Job)
			switch {
			case !ok:
			case jobHas(job, batchv1.JobComplete):
				found <- nil
				return
			case jobHas(job, batchv1.JobFailed):
				found <- fmt.Errorf("Job %s failed: %+v", name, job.Status)
				return
			}
		}
		found <- fmt.Errorf("the watch of Job %s ended before it completed", name)
	}()
	return found
}

// wantDone waits for what a watch found.
func (e *e2eRelease) wantDone(found <-chan error, what string) {
	e.t.Helper()
	select {
	case err := <-found:
		if err != nil {
			e.t.Fatalf("%s: %v%s", what, err, e.podStates())
		}
	case <-e.ctx.Done():
		e.t.Fatalf("%s: %v", what, e.ctx.Err())
	}
}

// waitServeReady waits, watching, until the Deployment's rollout is done
// and its pod Ready, and returns the pod's address.
func (e *e2eRelease) waitServeReady() string {
	e.t.Helper()
	e.kubectlCmd("rollout", "status", "deployment/"+releaseName, "--timeout=5m")
	pods, err := e.core.CoreV1().Pods("kcp-system").List(e.ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + releaseName + ",app.kubernetes.io/name=hap-reconciler",
		FieldSelector: fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning)).String(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) && ownedBy(p.OwnerReferences, "ReplicaSet", "") {
			return p.Status.PodIP
		}
	}
	e.t.Fatalf("rollout done, but no Ready serve pod:%s", e.podStates())
	return ""
}

// wantMetrics reads /metrics on the pod's own address, from the host as a
// scraper on the pod network would, until the first run's metrics are
// there: serve is Ready once it holds Gardener's first picture, and that
// picture's arrival starts a candidates run (app's changeSettle after it).
func (e *e2eRelease) wantMetrics(podIP string) {
	e.t.Helper()
	if body, ok := e.firstRun(podIP); !ok {
		e.t.Fatalf("the first candidates run failed:\n%s%s", body, e.podStates())
	}
}

// The series a candidates run sets: the table's snapshot time when it
// succeeded, the job's failures when it failed.
const (
	firstRunSucceeded = "hap_reconciler_candidate_table_snapshot_timestamp_seconds"
	firstRunFailed    = `hap_reconciler_job_failures_total{job_name="candidates"}`
)

// firstRun waits, reading /metrics on the pod's address, until the pod's
// first candidates run has ended, and says whether it succeeded, with the
// metrics read.
func (e *e2eRelease) firstRun(podIP string) (string, bool) {
	e.t.Helper()
	url := "http://" + net.JoinHostPort(podIP, "8080") + "/metrics"
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	for {
		body, err := getOK(ctx, url)
		if err != nil {
			e.t.Fatalf("GET %s: %v", url, err)
		}
		switch text := "\n" + string(body); {
		case strings.Contains(text, "\n"+firstRunSucceeded+" "):
			return text, true
		case strings.Contains(text, "\n"+firstRunFailed+" "):
			return text, false
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("GET %s: no %s or %s, which the first run sets, after 2 minutes:\n%s%s", url, firstRunSucceeded, firstRunFailed, body, e.podStates())
		case <-time.After(time.Second): // the next scrape
		}
	}
}

func getOK(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return body, err
}

// waitScheduledJobComplete watches the namespace's Jobs until one the
// CronJob scheduled is Complete; one that fails ends the wait at once.
func (e *e2eRelease) waitScheduledJobComplete() {
	e.t.Helper()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return e.core.BatchV1().Jobs("kcp-system").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return e.core.BatchV1().Jobs("kcp-system").Watch(ctx, o)
		},
	}
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Minute)
	defer cancel()
	var failed *batchv1.Job
	_, err := watchtools.UntilWithSync(ctx, lw, &batchv1.Job{}, nil, func(ev watch.Event) (bool, error) {
		job, ok := ev.Object.(*batchv1.Job)
		if !ok || !ownedBy(job.OwnerReferences, "CronJob", releaseName) {
			return false, nil
		}
		if jobHas(job, batchv1.JobFailed) {
			failed = job
			return true, nil
		}
		return jobHas(job, batchv1.JobComplete), nil
	})
	if err != nil {
		e.t.Fatalf("no scheduled Job completed: %v%s", err, e.podStates())
	}
	if failed != nil {
		e.t.Fatalf("the scheduled Job %s failed: %+v%s", failed.Name, failed.Status, e.podStates())
	}
}

// objectKey names one object of one kind.
type objectKey struct{ resource, namespace, name string }

// namespacedObjects lists every object of every namespaced kind the API
// server lists (Events aside: they record, they do not run anything).
func (e *e2eRelease) namespacedObjects() map[objectKey]bool {
	e.t.Helper()
	out := strings.TrimSpace(e.kubectlCmd("api-resources", "--namespaced=true", "--verbs=list", "-o", "name"))
	objs := map[objectKey]bool{}
	for _, resource := range strings.Fields(out) {
		if resource == "events" || resource == "events.events.k8s.io" {
			continue
		}
		list := e.kubectlCmd("get", resource, "--all-namespaces", "--ignore-not-found",
			"-o", `jsonpath={range .items[*]}{.metadata.namespace}{"/"}{.metadata.name}{"\n"}{end}`)
		for _, line := range strings.Fields(list) {
			ns, name, _ := strings.Cut(line, "/")
			objs[objectKey{resource, ns, name}] = true
		}
	}
	return objs
}

// waitNothingLeft waits until every namespaced object there is now was
// there before the install: the garbage collector removes the Jobs' pods
// after helm uninstall returns. What is left after a minute is reported.
// The check is on what is new, so the guide's Secret, made before the
// install and deleted by the uninstall, does not count either way.
func (e *e2eRelease) waitNothingLeft(before map[objectKey]bool) {
	e.t.Helper()
	var left []objectKey
	deadline := time.Now().Add(time.Minute)
	for {
		left = left[:0]
		for k := range e.namespacedObjects() {
			if !before[k] && k.namespace != "kube-node-lease" { // the node's heartbeat, not the release's
				left = append(left, k)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second) // polling the API server, not a wait for a guess
	}
	for _, k := range left {
		e.t.Errorf("helm uninstall left %s %s/%s behind", k.resource, k.namespace, k.name)
	}
}

func (e *e2eRelease) kubectlCmd(args ...string) string {
	e.t.Helper()
	cmd := e.command(e.kubectl, append([]string{"--kubeconfig", e.kube.KubeconfigPath(), "--namespace", "kcp-system"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, e.podStates())
	}
	return string(out)
}

// podStates describes the namespace's pods with their containers' last
// log lines, for failure messages.
func (e *e2eRelease) podStates() string {
	var b strings.Builder
	pods, err := e.core.CoreV1().Pods("kcp-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return "\n(listing pods: " + err.Error() + ")"
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "\npod %s: %s", p.Name, p.Status.Phase)
		for _, c := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "\n  container %s ready=%v state=%+v", c.Name, c.Ready, c.State)
		}
		tail := int64(20)
		logs, err := e.core.CoreV1().Pods("kcp-system").GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(context.Background())
		if err == nil {
			fmt.Fprintf(&b, "\n  log:\n%s", logs)
		}
	}
	fmt.Fprintf(&b, "\nkubelet log: %s", e.node.KubeletLog())
	return b.String()
}

func jobHas(job *batchv1.Job, c batchv1.JobConditionType) bool {
	for _, cond := range job.Status.Conditions {
		if cond.Type == c && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// ownedBy reports whether refs name an owner of kind called name (any name
// when name is empty).
func ownedBy(refs []metav1.OwnerReference, kind, name string) bool {
	for _, r := range refs {
		if r.Kind == kind && (name == "" || r.Name == name) {
			return true
		}
	}
	return false
}

// stepTimer runs the e2e's steps, logs each as it starts and ends, and
// prints every step's time when the test ends, failed or not.
type stepTimer struct {
	t     *testing.T
	start time.Time
	done  []stepTime
}

type stepTime struct {
	name string
	took time.Duration
}

func newStepTimer(t *testing.T) *stepTimer {
	s := &stepTimer{t: t, start: time.Now()}
	t.Cleanup(s.print)
	return s
}

func (s *stepTimer) run(name string, fn func()) {
	s.t.Helper()
	fmt.Fprintf(os.Stdout, "==> %s\n", name)
	start, failedBefore := time.Now(), s.t.Failed()
	defer func() {
		took := time.Since(start).Round(100 * time.Millisecond)
		s.done = append(s.done, stepTime{name, took})
		status := "done"
		if s.t.Failed() && !failedBefore {
			status = "failed"
		}
		fmt.Fprintf(os.Stdout, "    %s (%s)\n", status, took)
	}()
	fn()
}

func (s *stepTimer) print() {
	fmt.Fprintln(os.Stdout, "e2e step timings:")
	for _, st := range s.done {
		fmt.Fprintf(os.Stdout, "  %8s  %s\n", st.took, st.name)
	}
	fmt.Fprintf(os.Stdout, "  %8s  total\n", time.Since(s.start).Round(100*time.Millisecond))
}
