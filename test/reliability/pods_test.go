package reliability

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The jobs of a race trial: two in-process pods and the built binary, all
// reaching the API server and PostgreSQL through the trial's proxies, all
// running every job back to back while the actor works and faults hit.

// inProcessPod runs every job over and over until stopped.
type inProcessPod struct {
	env *app.Env
}

func (p *inProcessPod) loop(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		// Failures are the faults' doing; what counts is what the runs
		// leave behind, checked when the trial ends.
		_ = runAll(ctx, p.env)
	}
}

// binaryPod runs the built binary's `run` over and over until stopped; the
// fault injector kills it with SIGKILL whenever it likes.
type binaryPod struct {
	s          *scene
	kubeconfig string
	dbURL      string

	mu    sync.Mutex
	cmd   *exec.Cmd
	runs  int
	kills int
}

func newBinaryPod(t *testing.T, s *scene, db *tcpProxy) *binaryPod {
	t.Helper()
	u, err := url.Parse(s.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = db.addr()
	return &binaryPod{s: s, dbURL: u.String()}
}

// pointAt writes a kubeconfig that reaches the API server through the
// proxy (plain HTTP; the proxy holds the credentials).
func (p *binaryPod) pointAt(t *testing.T, api *apiProxy) {
	t.Helper()
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "` + api.srv.URL + `"}}]
users: [{name: job, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: job}}]
current-context: proxy
`
	if err := os.WriteFile(p.kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *binaryPod) loop(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		_, _ = p.run(ctx)
	}
}

// run runs the binary once to its end and returns its exit code and output.
func (p *binaryPod) run(ctx context.Context) (int, string) {
	cmd := exec.CommandContext(ctx, binary, "run", "--config", p.s.ConfigPath, "--namespace", p.s.World.Namespace,
		"--kubeconfig", p.kubeconfig, "--database-url", p.dbURL)
	var out testbed.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	p.mu.Lock()
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return -1, err.Error()
	}
	p.cmd = cmd
	p.runs++
	p.mu.Unlock()
	err := cmd.Wait()
	p.mu.Lock()
	p.cmd = nil
	p.mu.Unlock()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return -1, err.Error()
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// kill ends the running binary, if one runs, with SIGKILL.
func (p *binaryPod) kill() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return false
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return false
	}
	p.kills++
	return true
}

// startPods starts the pods and returns a function that stops them and
// waits until each has finished its current run.
func startPods(ctx context.Context, in []*inProcessPod, bin *binaryPod) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range in {
		wg.Add(1)
		go func() { defer wg.Done(); p.loop(ctx, stop) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); bin.loop(ctx, stop) }()
	return func() {
		close(stop)
		wg.Wait()
	}
}
