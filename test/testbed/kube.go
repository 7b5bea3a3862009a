// Package testbed runs the real parts the project's tests need on one
// machine: an etcd with a kube-apiserver and the real gardener-apiserver
// behind its aggregation layer serving the Gardener kinds (or, where a test
// asks, the kinds as CRDs or no kinds at all), and a throwaway PostgreSQL.
// Its core API does not depend on package testing, so demos and benchmarks
// can use it too.
package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Kube is a running etcd plus kube-apiserver on 127.0.0.1 serving the
// Gardener kinds, and an admin identity: the kinds are gardener-apiserver's
// own on the same etcd unless WithGardenerKinds says otherwise. Stop ends
// every process and removes every file the test bed wrote.
type Kube struct {
	dir            string
	kubeconfigPath string
	etcdURL        string
	readyTimeout   time.Duration
	apiserverBin   string
	apiserverArgs  []string
	gardenerArgs   []string
	apiserverHost  string
	token          string

	mu        sync.Mutex
	etcd      *process
	apiserver *process
	gardener  *gardenerServer // nil when gardener-apiserver does not run
	cfg       *rest.Config
	stopped   bool
}

// KubeOption changes how StartKube sets up the test bed.
type KubeOption func(*kubeOptions)

type kubeOptions struct {
	baseDir       string
	readyTimeout  time.Duration
	apiserverArgs []string
	kinds         GardenerKinds
	gardenerArgs  []string
}

// WithBaseDir puts the test bed's temporary directory under dir instead of
// /dev/shm (or the system temp dir when /dev/shm is unusable).
func WithBaseDir(dir string) KubeOption { return func(o *kubeOptions) { o.baseDir = dir } }

// WithReadyTimeout bounds how long each server may take to become ready
// (default two minutes: a loaded two-core machine is slow to start one).
func WithReadyTimeout(d time.Duration) KubeOption { return func(o *kubeOptions) { o.readyTimeout = d } }

// WithAPIServerArgs appends flags to the kube-apiserver command line; a later
// flag overrides an earlier one.
func WithAPIServerArgs(args ...string) KubeOption {
	return func(o *kubeOptions) { o.apiserverArgs = append(o.apiserverArgs, args...) }
}

// GardenerKinds says what serves the Gardener kinds on a test bed.
type GardenerKinds int

const (
	// KindsFromGardenerAPIServer, the default: Shoots and
	// CredentialsBindings (and Projects, CloudProfiles, SecretBindings) come
	// from the real gardener-apiserver behind the aggregation layer, built
	// from source at the gardener version go.mod requires. Its registry
	// defaults, validates and admits what is created as Gardener does, so
	// fixtures must be what Gardener accepts (landscape.LoadWorld). It
	// answers in protobuf or JSON, as the client asks.
	KindsFromGardenerAPIServer GardenerKinds = iota
	// KindsAsCRDs serves the two kinds the job reads as custom resources of
	// kube-apiserver: a server that answers JSON only and admits anything,
	// for the tests of the job's JSON reading.
	KindsAsCRDs
	// NoGardenerKinds is a plain kube-apiserver: for what the job says when
	// pointed at a cluster that is no garden, and the bed's own tests of
	// kube-apiserver.
	NoGardenerKinds
)

// WithGardenerKinds chooses what serves the Gardener kinds (default: the
// real gardener-apiserver).
func WithGardenerKinds(g GardenerKinds) KubeOption { return func(o *kubeOptions) { o.kinds = g } }

// WithGardenerAPIServerArgs appends flags to gardener-apiserver's command
// line (on a bed whose kinds come from it); a later flag overrides an
// earlier one.
func WithGardenerAPIServerArgs(args ...string) KubeOption {
	return func(o *kubeOptions) { o.gardenerArgs = append(o.gardenerArgs, args...) }
}

// StartKube starts etcd and kube-apiserver in a new temporary directory,
// building either first when it is missing.
// ctx bounds the start only; the servers run until Stop. On failure nothing
// is left running and the error carries the tail of the failing server's log.
func StartKube(ctx context.Context, opts ...KubeOption) (*Kube, error) {
	o := kubeOptions{baseDir: defaultBaseDir(), readyTimeout: 2 * time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	etcdBin, err := etcdBinary(ctx)
	if err != nil {
		return nil, err
	}
	apiserverBin, err := kubeAPIServerBinary(ctx)
	if err != nil {
		return nil, err
	}
	gardenerBin := ""
	if o.kinds == KindsFromGardenerAPIServer {
		if gardenerBin, err = gardenerAPIServerBinary(ctx); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(o.baseDir, "hap-kube-")
	if err != nil {
		return nil, fmt.Errorf("create test bed dir: %w", err)
	}
	k := &Kube{dir: dir, readyTimeout: o.readyTimeout, apiserverBin: apiserverBin,
		kubeconfigPath: filepath.Join(dir, "kubeconfig"), gardenerArgs: o.gardenerArgs}
	if err := k.start(ctx, etcdBin, gardenerBin, o.kinds == KindsAsCRDs, o.apiserverArgs); err != nil {
		return nil, errors.Join(err, k.Stop())
	}
	return k, nil
}

// start brings the servers up: gardener-apiserver when gardenerBin is set,
// the CRDs when crds is.
func (k *Kube) start(ctx context.Context, etcdBin, gardenerBin string, crds bool, extraArgs []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.startEtcd(ctx, etcdBin); err != nil {
		return err
	}
	if gardenerBin != "" {
		aggregation, err := frontProxyArgs(k.dir)
		if err != nil {
			return err
		}
		extraArgs = append(aggregation, extraArgs...)
	}
	if err := k.prepareAPIServer(extraArgs); err != nil {
		return err
	}
	if err := k.startFirstAPIServer(ctx); err != nil {
		return err
	}
	if err := writeKubeconfig(k.kubeconfigPath, k.cfg); err != nil {
		return err
	}
	if gardenerBin != "" {
		if err := k.prepareGardenerAPIServer(gardenerBin); err != nil {
			return err
		}
		return k.startGardenerAPIServer(ctx)
	}
	if !crds {
		return nil
	}
	crdCtx, cancel := context.WithTimeout(ctx, k.readyTimeout)
	defer cancel()
	return installCRDs(crdCtx, k.cfg)
}

// Config returns a copy of the admin's client config.
func (k *Kube) Config() *rest.Config {
	k.mu.Lock()
	defer k.mu.Unlock()
	return rest.CopyConfig(k.cfg)
}

// KubeconfigPath is a kubeconfig file for the admin, valid until Stop.
func (k *Kube) KubeconfigPath() string { return k.kubeconfigPath }

// ServesGardenerAPIServer reports whether the Gardener kinds come from the
// real gardener-apiserver rather than CRDs.
func (k *Kube) ServesGardenerAPIServer() bool { return k.gardener != nil }

// EtcdURL is etcd's client URL.
func (k *Kube) EtcdURL() string { return k.etcdURL }

// PIDs returns the process ids of etcd, kube-apiserver and, when it runs,
// gardener-apiserver, as last started.
func (k *Kube) PIDs() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	var pids []int
	for _, p := range k.processes() {
		pids = append(pids, p.pid())
	}
	return pids
}

// NewNamespace creates a namespace named prefix plus a random suffix, so
// tests sharing one Kube do not see each other's objects.
func (k *Kube) NewNamespace(ctx context.Context, prefix string) (string, error) {
	client, err := kubernetes.NewForConfig(k.Config())
	if err != nil {
		return "", err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	created, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace with prefix %q: %w", prefix, err)
	}
	return created.Name, nil
}

// APIServer names one of the bed's API servers, for the fault controls:
// kube-apiserver, the front door every client talks to, or
// gardener-apiserver behind it, which serves the Gardener kinds.
type APIServer string

const (
	KubeAPIServer     APIServer = "kube-apiserver"
	GardenerAPIServer APIServer = "gardener-apiserver"
)

// StopServer stops one API server alone, leaving etcd, the other server
// and the data, so a test can see how clients cope with it gone: without
// kube-apiserver nothing answers; without gardener-apiserver kube-apiserver
// answers 503 for the Gardener kinds. StartServer brings it back.
func (k *Kube) StopServer(s APIServer) error {
	return k.withRunning(s, func(p *process) error { return p.stop(5 * time.Second) })
}

// KillServer ends one API server with SIGKILL, as a crash would: no
// request in flight is finished. StartServer brings it back.
func (k *Kube) KillServer(s APIServer) error {
	return k.withRunning(s, (*process).kill)
}

// PauseServer freezes one API server with SIGSTOP: connections stay open
// and nothing answers, as on a stalled node. It returns once every thread
// of the server is stopped, which on a busy machine can trail the signal;
// ResumeServer thaws it.
func (k *Kube) PauseServer(s APIServer) error {
	if err := k.signal(s, syscall.SIGSTOP); err != nil {
		return err
	}
	k.mu.Lock()
	p, err := k.server(s)
	k.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	running := ""
	if err := pollUntil(ctx, 10*time.Millisecond, func(context.Context) (bool, error) {
		running = runningThreads(p.pid())
		return running == "", nil
	}); err != nil {
		return fmt.Errorf("%s was sent SIGSTOP, but threads still run: %s", s, running)
	}
	return nil
}

// runningThreads names the threads of process pid that are neither stopped
// nor ended, with their state (/proc/PID/task/TID/stat); "" when none is.
func runningThreads(pid int) string {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err.Error()
	}
	var running []string
	for _, t := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command, which is in parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 0 && !strings.Contains("TtZX", fields[0]) {
			running = append(running, t.Name()+":"+fields[0])
		}
	}
	return strings.Join(running, " ")
}

// ResumeServer continues a paused API server with SIGCONT.
func (k *Kube) ResumeServer(s APIServer) error { return k.signal(s, syscall.SIGCONT) }

func (k *Kube) signal(s APIServer, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, err := k.server(s)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("%s was never started", s)
	}
	if done, _ := p.exited(); done {
		return fmt.Errorf("%s is not running", s)
	}
	if err := syscall.Kill(-p.pid(), sig); err != nil {
		return fmt.Errorf("signal %v to %s: %w", sig, s, err)
	}
	return nil
}

// withRunning calls fn on the server's process when it runs; a server
// already down is left as it is.
func (k *Kube) withRunning(s APIServer, fn func(*process) error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, err := k.server(s)
	if err != nil || p == nil {
		return err
	}
	if done, _ := p.exited(); done {
		return nil
	}
	return fn(p)
}

// StartServer starts an API server again after StopServer or KillServer,
// with the same credentials, and waits until clients can use the bed
// again: on the gardener-apiserver bed, until the Gardener kinds list
// through kube-apiserver, which the aggregation layer takes a moment to
// notice after either server comes back. kube-apiserver keeps its address,
// so configs and kubeconfigs stay valid; gardener-apiserver, which clients
// reach only through kube-apiserver, comes back on a new port, as a new pod
// would (startGardenerAPIServer says why).
func (k *Kube) StartServer(ctx context.Context, s APIServer) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return errors.New("test bed already stopped")
	}
	p, err := k.server(s)
	if err != nil {
		return err
	}
	if p != nil {
		if done, _ := p.exited(); !done {
			return fmt.Errorf("%s is already running", s)
		}
	}
	if s == GardenerAPIServer {
		return k.startGardenerAPIServer(ctx)
	}
	if err := k.startAPIServerLocked(ctx); err != nil || k.gardener == nil {
		return err
	}
	return k.waitGardenerKindsServed(ctx)
}

// server is the process of s, nil when it was never started.
func (k *Kube) server(s APIServer) (*process, error) {
	switch s {
	case KubeAPIServer:
		return k.apiserver, nil
	case GardenerAPIServer:
		if k.gardener == nil {
			return nil, errors.New("this test bed serves the Gardener kinds as CRDs: it runs no gardener-apiserver")
		}
		return k.gardener.proc, nil
	}
	return nil, fmt.Errorf("unknown API server %q", s)
}

// Stop ends kube-apiserver and etcd with their process groups and removes the
// test bed's directory. Calling it again does nothing.
func (k *Kube) Stop() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return nil
	}
	k.stopped = true
	var errs []error
	// The API servers first: etcd going away under them only makes noise.
	for _, p := range slices.Backward(k.processes()) {
		errs = append(errs, p.stop(5*time.Second))
	}
	if err := os.RemoveAll(k.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove test bed dir: %w", err))
	}
	return errors.Join(errs...)
}

// processes are the test bed's processes in start order, those not started
// left out.
func (k *Kube) processes() []*process {
	var ps []*process
	for _, p := range []*process{k.etcd, k.apiserver} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	if k.gardener != nil && k.gardener.proc != nil {
		ps = append(ps, k.gardener.proc)
	}
	return ps
}

// defaultBaseDir prefers memory-backed /dev/shm: etcd syncs every write to
// disk, and on a real disk that dominates the time to load a landscape.
func defaultBaseDir() string {
	const shm = "/dev/shm"
	probe, err := os.MkdirTemp(shm, "hap-probe-")
	if err != nil {
		return ""
	}
	_ = os.Remove(probe)
	return shm
}
