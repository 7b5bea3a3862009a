package testbed

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// nodePackages are the Debian packages the node runs on, by a file each
// installs.
var nodePackages = []struct{ file, pkg string }{
	{"/usr/bin/containerd", "containerd"},
	{"/usr/sbin/runc", "runc"},
	{"/usr/lib/cni/bridge", "containernetworking-plugins"},
}

func ensureNodePackages(ctx context.Context) error {
	for _, p := range nodePackages {
		if _, err := os.Stat(p.file); err == nil {
			continue
		}
		if err := aptInstall(ctx, p.pkg); err != nil {
			return fmt.Errorf("install %s: %w", p.pkg, err)
		}
	}
	return nil
}

type nodeConfigFiles struct{ containerd, kubelet string }

// writeNodeConfigs writes containerd's configuration and the pod network's
// CNI configuration under NodeDir.
func writeNodeConfigs(socket string) (nodeConfigFiles, error) {
	files := nodeConfigFiles{
		containerd: filepath.Join(NodeDir, "containerd.toml"),
		kubelet:    filepath.Join(NodeDir, "kubelet.yaml"),
	}
	cniDir := filepath.Join(NodeDir, "cni")
	if err := os.MkdirAll(cniDir, 0o700); err != nil {
		return files, err
	}
	// Everything containerd and runc keep lives under NodeDir, network
	// namespaces included (netns_mounts_under_state_dir), so the sweep
	// finds it. restrict_oom_score_adj: this machine withholds
	// CAP_SYS_RESOURCE even from root, so the kubelet's -998 for the
	// sandbox would make runc fail ("can't get final child's PID from
	// pipe"); containerd then keeps pods at its own score instead.
	containerd := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[5]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
`, filepath.Join(NodeDir, "containerd", "root"), filepath.Join(NodeDir, "containerd", "state"), socket,
		SandboxImage, filepath.Join(NodeDir, "runc"), cniDir)
	if err := os.WriteFile(files.containerd, []byte(containerd), 0o600); err != nil {
		return files, err
	}
	// The bridge plugin on the bridge setUpPodNetwork made; no masquerade
	// (pods talk to the host only), so the node adds no iptables rules.
	cni := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "hap-e2e",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": nodeBridge, "isGateway": true, "ipMasq": false,
			"ipam": map[string]any{
				"type":    "host-local",
				"dataDir": filepath.Join(NodeDir, "cni-ipam"),
				"ranges":  []any{[]any{map[string]any{"subnet": podSubnet, "gateway": NodeGateway}}},
				"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
			},
		}},
	}
	raw, err := json.Marshal(cni)
	if err != nil {
		return files, err
	}
	return files, os.WriteFile(filepath.Join(cniDir, "10-hap-e2e.conflist"), raw, 0o600)
}

// writeKubeletConfig writes the kubelet's configuration: containerd over
// socket, cgroupfs under nodeCgroup, serving on NodeGateway:port (the API
// server reaches it there for logs), anonymous and allowed as a test node
// on a private address may be, and no eviction or image garbage
// collection, which a shared CI disk would trigger at random.
func writeKubeletConfig(path, socket string, port int) error {
	cfg := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://` + socket + `
cgroupDriver: cgroupfs
cgroupRoot: /` + nodeCgroup + `
failSwapOn: false
address: ` + NodeGateway + `
port: ` + strconv.Itoa(port) + `
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
enforceNodeAllocatable: []
evictionHard: {}
imageGCHighThresholdPercent: 100
resolvConf: /etc/resolv.conf
`
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// setUpPodNetwork makes the pods' bridge with the host's address on it
// before any pod exists, so that the API server and the relays can listen
// there from the start.
func setUpPodNetwork(ctx context.Context) error {
	for _, args := range [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", NodeGateway + "/24", "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
	} {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %w\n%s", args, err, out)
		}
	}
	return nil
}

// makeNodeCgroups creates the kubelet's cgroupRoot in every mounted cgroup
// hierarchy (v1 has one per controller, v2 one in all).
func makeNodeCgroups() error {
	roots, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, root := range roots {
		if err := os.Mkdir(filepath.Join(root, nodeCgroup), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create the node's cgroup: %w", err)
		}
	}
	return nil
}

// ociArchiveName is the image name an OCI image archive records
// (org.opencontainers.image.ref.name of its index), which ctr import gives
// the image.
func ociArchiveName(archive string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s: no index.json, not an OCI image archive", archive)
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", archive, err)
		}
		if filepath.Clean(h.Name) != "index.json" {
			continue
		}
		var index struct {
			Manifests []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&index); err != nil {
			return "", fmt.Errorf("%s: index.json: %w", archive, err)
		}
		if len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" {
			return "", fmt.Errorf("%s: want one named image, index.json has %d manifests", archive, len(index.Manifests))
		}
		return index.Manifests[0].Annotations["org.opencontainers.image.ref.name"], nil
	}
}
