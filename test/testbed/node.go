package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The e2e node's fixed places on the machine. They are fixed, not random,
// so that a run killed before its cleanup is swept by the next one (and by
// hack/e2e.sh); the lock keeps two nodes from sharing them.
const (
	// NodeDir holds everything the node writes: configs, containerd's and
	// the kubelet's state, logs.
	NodeDir = "/run/hap-reconciler-e2e"
	// NodeGateway is the host's address on the pod network: a pod reaches
	// the host, and so the test bed's servers, here.
	NodeGateway = "10.244.0.1"
	// SandboxImage is containerd's sandbox_image: the pause image
	// hack/build-pause-image.sh builds, imported before the first pod.
	SandboxImage = "localhost/hap-reconciler-e2e/pause:1"

	nodeLock   = "/run/hap-reconciler-e2e.lock"
	nodeBridge = "hape2e0"
	podSubnet  = "10.244.0.0/24"
	nodeName   = "hap-e2e-node"
	// nodeCgroup is the kubelet's cgroupRoot in every cgroup hierarchy:
	// the pods' cgroups live below it and go with it.
	nodeCgroup = "hap-reconciler-e2e"
)

// WithKubeletAccess is the KubeOption of a Kube a Node joins: the API
// server reaches the kubelet (pod logs) at the node's InternalIP, as the
// node's name resolves nowhere.
func WithKubeletAccess() KubeOption {
	return WithAPIServerArgs("--kubelet-preferred-address-types=InternalIP")
}

// Node is one machine's Kubernetes node beside a Kube: containerd and runc
// from Debian with the CNI bridge plugin, and the kubelet,
// kube-controller-manager and kube-scheduler of hack/build-kube-node.sh, so
// that the Kube runs pods (Deployments, Jobs, CronJobs) for real. It needs
// root. Stop removes every process, mount, network link, cgroup and file it
// made.
type Node struct {
	kube   *Kube
	socket string
	lock   *os.File

	mu        sync.Mutex
	processes []*process // in start order
	relays    []*relay
	stopped   bool
}

// StartNode starts a node that registers with kube (started with
// WithKubeletAccess) and waits until it is Ready. ctx bounds the start.
func StartNode(ctx context.Context, kube *Kube) (*Node, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the e2e node runs containers: it needs root")
	}
	binDir, err := builtBinary(ctx, kubeNodeEnv, "build-kube-node.sh")
	if err != nil {
		return nil, err
	}
	if err := ensureNodePackages(ctx); err != nil {
		return nil, err
	}
	lock, err := lockNode()
	if err != nil {
		return nil, err
	}
	// What a killed run left behind.
	if err := sweepNode(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("sweep a previous e2e node: %w", err)
	}
	n := &Node{kube: kube, socket: filepath.Join(NodeDir, "containerd.sock"), lock: lock}
	if err := n.start(ctx, binDir); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// kubeNodeEnv names a directory with kubelet, kube-controller-manager and
// kube-scheduler to use instead of building them.
const kubeNodeEnv = "HAP_KUBE_NODE_DIR"

func (n *Node) start(ctx context.Context, binDir string) error {
	if err := os.MkdirAll(NodeDir, 0o700); err != nil {
		return err
	}
	if err := setUpPodNetwork(ctx); err != nil {
		return err
	}
	if err := makeNodeCgroups(); err != nil {
		return err
	}
	files, err := writeNodeConfigs(n.socket)
	if err != nil {
		return err
	}
	if err := n.startContainerd(ctx, files.containerd); err != nil {
		return err
	}
	kubeconfig := n.kube.KubeconfigPath()
	kubeletPort, err := freePort()
	if err != nil {
		return err
	}
	if err := writeKubeletConfig(files.kubelet, n.socket, kubeletPort); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false",
			"--secure-port=0", "--controllers=*"}},
		{"kube-scheduler", []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0"}},
		{"kubelet", []string{"--config=" + files.kubelet, "--kubeconfig=" + kubeconfig,
			"--root-dir=" + filepath.Join(NodeDir, "kubelet"), "--cert-dir=" + filepath.Join(NodeDir, "kubelet-pki"),
			"--hostname-override=" + nodeName, "--node-ip=" + NodeGateway}},
	} {
		p, err := startProcess(c.name, filepath.Join(NodeDir, c.name+".log"), filepath.Join(binDir, c.name), c.args...)
		if err != nil {
			return err
		}
		n.processes = append(n.processes, p)
	}
	return n.waitReady(ctx)
}

func (n *Node) startContainerd(ctx context.Context, config string) error {
	p, err := startProcess("containerd", filepath.Join(NodeDir, "containerd.log"), "containerd", "--config", config)
	if err != nil {
		return err
	}
	n.processes = append(n.processes, p)
	return pollUntil(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if done, err := p.exited(); done {
			return false, fmt.Errorf("containerd exited: %v\n%s", err, p.logTail())
		}
		return exec.CommandContext(ctx, "ctr", "--address", n.socket, "version").Run() == nil, nil
	})
}

// waitReady waits for the node object to say Ready: the kubelet runs and
// containerd has loaded the pod network.
func (n *Node) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(n.kube.Config())
	if err != nil {
		return err
	}
	err = pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		for _, p := range n.processes {
			if done, err := p.exited(); done {
				return false, fmt.Errorf("%s exited: %v\n%s", p.name, err, p.logTail())
			}
		}
		node, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not ready: %w\nkubelet: %s", nodeName, err, tailFile(filepath.Join(NodeDir, "kubelet.log"), 20))
	}
	return nil
}

// ImportImage imports an OCI image archive into containerd's k8s.io
// namespace, where the kubelet finds images, and names it ref too (the
// archive's own name stays).
func (n *Node) ImportImage(ctx context.Context, archive, ref string) error {
	name, err := ociArchiveName(archive)
	if err != nil {
		return err
	}
	ctr := []string{"--address", n.socket, "--namespace", "k8s.io", "images"}
	if out, err := exec.CommandContext(ctx, "ctr", append(ctr, "import", archive)...).CombinedOutput(); err != nil {
		return fmt.Errorf("ctr images import %s: %w\n%s", archive, err, out)
	}
	if name == ref {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "ctr", append(ctr, "tag", "--force", name, ref)...).CombinedOutput(); err != nil {
		return fmt.Errorf("ctr images tag %s %s: %w\n%s", name, ref, err, out)
	}
	return nil
}

// Expose makes the host's TCP address target (a test bed server on
// 127.0.0.1) reachable from pods and returns the address they use, on
// NodeGateway: the test bed's servers listen on 127.0.0.1 alone.
func (n *Node) Expose(target string) (string, error) {
	r, err := startRelay(NodeGateway+":0", target)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.relays = append(n.relays, r)
	return r.addr(), nil
}

// KubeletLog is the path of the kubelet's log, for failure messages.
func (n *Node) KubeletLog() string { return filepath.Join(NodeDir, "kubelet.log") }

// Stop ends the node: no new pods (the controllers and the scheduler stop
// first), every pod deleted and its containers, sandboxes and network gone
// through the kubelet, then the kubelet and containerd, then whatever is left
// (sweepNode). Calling it again does nothing.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	var errs []error
	for _, r := range n.relays {
		r.close()
	}
	byName := map[string]*process{}
	for _, p := range n.processes {
		byName[p.name] = p
	}
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		if p := byName[name]; p != nil {
			errs = append(errs, p.stop(5*time.Second))
		}
	}
	if byName["kubelet"] != nil {
		errs = append(errs, n.drain())
	}
	for _, name := range []string{"kubelet", "containerd"} {
		if p := byName[name]; p != nil {
			errs = append(errs, p.stop(10*time.Second))
		}
	}
	errs = append(errs, sweepNode())
	errs = append(errs, os.Remove(nodeLock), n.lock.Close())
	return errors.Join(errs...)
}

// drain deletes every pod and waits until containerd runs no task: the
// kubelet stops each sandbox, which tears down its network namespace and
// mounts the way they were made.
func (n *Node) drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := kubernetes.NewForConfig(n.kube.Config())
	if err != nil {
		return err
	}
	grace := int64(1)
	err = client.CoreV1().Pods(metav1.NamespaceAll).DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{})
	if err != nil {
		// Not every namespace's collection may be deletable at once; one
		// by one then.
		pods, lerr := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if lerr != nil {
			return fmt.Errorf("drain the node: %w", errors.Join(err, lerr))
		}
		for _, p := range pods.Items {
			_ = client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		}
	}
	// The kubelet removes a pod object once its containers are gone.
	err = pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) > 0 {
			return false, nil
		}
		out, err := exec.CommandContext(ctx, "ctr", "--address", n.socket, "--namespace", "k8s.io", "tasks", "list", "--quiet").Output()
		return err == nil && len(out) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("drain the node: containers still run: %w", err)
	}
	return nil
}

// lockNode takes the machine's e2e node lock, without waiting.
func lockNode() (*os.File, error) {
	f, err := os.OpenFile(nodeLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("another e2e node runs on this machine (%s is locked): %w", nodeLock, err)
	}
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return f, nil
}
