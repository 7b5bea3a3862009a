// Package testbed runs the real parts the project's tests need on one
// machine: an etcd with a kube-apiserver serving the Gardener kinds, as CRDs
// or, WithGardenerAPIServer, from the real gardener-apiserver behind the
// aggregation layer, and a throwaway PostgreSQL. Its core API does not depend on package testing,
// so demos and benchmarks can use it too.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Kube is a running etcd plus kube-apiserver on 127.0.0.1 serving the
// Gardener kinds, and an admin identity: the kinds are CRDs, or, started
// WithGardenerAPIServer, gardener-apiserver's own on the same etcd. Stop ends
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
	gardener  *gardenerServer // nil when the kinds are CRDs
	cfg       *rest.Config
	stopped   bool
}

// KubeOption changes how StartKube sets up the test bed.
type KubeOption func(*kubeOptions)

type kubeOptions struct {
	baseDir           string
	readyTimeout      time.Duration
	apiserverArgs     []string
	gardenerAPIServer bool
	gardenerArgs      []string
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

// WithGardenerAPIServer serves Shoots and CredentialsBindings (and Projects,
// CloudProfiles, SecretBindings) from the real gardener-apiserver, built from
// source at the gardener version go.mod requires, instead of as CRDs. Its
// registry defaults, validates and admits what is created as Gardener does,
// so fixtures must be what Gardener accepts: see landscape.LoadGardener.
func WithGardenerAPIServer() KubeOption { return func(o *kubeOptions) { o.gardenerAPIServer = true } }

// WithGardenerAPIServerArgs appends flags to gardener-apiserver's command
// line (with WithGardenerAPIServer); a later flag overrides an earlier one.
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
	if o.gardenerAPIServer {
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
	if err := k.start(ctx, etcdBin, gardenerBin, o.apiserverArgs); err != nil {
		return nil, errors.Join(err, k.Stop())
	}
	return k, nil
}

// start brings the servers up; gardenerBin empty means the CRD bed.
func (k *Kube) start(ctx context.Context, etcdBin, gardenerBin string, extraArgs []string) error {
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

// StopAPIServer stops kube-apiserver alone, leaving etcd and the data, so a
// test can see how clients cope with an unreachable API.
func (k *Kube) StopAPIServer() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.apiserver == nil {
		return nil
	}
	if done, _ := k.apiserver.exited(); done {
		return nil
	}
	return k.apiserver.stop(5 * time.Second)
}

// KillAPIServer ends kube-apiserver with SIGKILL, as a crash would: no
// request in flight is finished. StartAPIServer brings it back.
func (k *Kube) KillAPIServer() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.apiserver == nil {
		return nil
	}
	if done, _ := k.apiserver.exited(); done {
		return nil
	}
	return k.apiserver.kill()
}

// PauseAPIServer freezes kube-apiserver with SIGSTOP: connections stay
// open and nothing answers, as on a stalled node. ResumeAPIServer thaws it.
func (k *Kube) PauseAPIServer() error { return k.signalAPIServer(syscall.SIGSTOP) }

// ResumeAPIServer continues a paused kube-apiserver with SIGCONT.
func (k *Kube) ResumeAPIServer() error { return k.signalAPIServer(syscall.SIGCONT) }

func (k *Kube) signalAPIServer(sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.apiserver == nil {
		return errors.New("kube-apiserver was never started")
	}
	if done, _ := k.apiserver.exited(); done {
		return errors.New("kube-apiserver is not running")
	}
	if err := syscall.Kill(-k.apiserver.pid(), sig); err != nil {
		return fmt.Errorf("signal %v to kube-apiserver: %w", sig, err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same
// address and with the same credentials, and waits until it is ready.
func (k *Kube) StartAPIServer(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return errors.New("test bed already stopped")
	}
	if k.apiserver != nil {
		if done, _ := k.apiserver.exited(); !done {
			return errors.New("kube-apiserver is already running")
		}
	}
	return k.startAPIServerLocked(ctx)
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
