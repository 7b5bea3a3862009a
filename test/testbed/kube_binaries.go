package testbed

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

const modulePath = "github.com/kyma-project/hap-reconciler"

// kubeAPIServerEnv names a kube-apiserver binary to use instead of building
// one, for machines that already have it.
const kubeAPIServerEnv = "HAP_KUBE_APISERVER"

// gardenerAPIServerEnv does the same for gardener-apiserver.
const gardenerAPIServerEnv = "HAP_GARDENER_APISERVER"

// etcdEnv does the same for etcd.
const etcdEnv = "HAP_ETCD"

// aptInstall installs one Debian package, refreshing the package lists once
// when the first attempt fails (a fresh machine has stale or no lists).
func aptInstall(ctx context.Context, pkg string) error {
	install := func() error { return runQuiet(ctx, "apt-get", "install", "-y", "--no-install-recommends", pkg) }
	if err := install(); err == nil {
		return nil
	}
	if err := runQuiet(ctx, "apt-get", "update"); err != nil {
		return err
	}
	return install()
}

func runQuiet(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(out, 20))
	}
	return nil
}

// kubeAPIServerBinary returns a kube-apiserver, built from source and cached
// by the repository's build script on first use.
func kubeAPIServerBinary(ctx context.Context) (string, error) {
	return builtBinary(ctx, kubeAPIServerEnv, "build-kube-apiserver.sh")
}

// etcdBinary returns an etcd of the version the module graph resolves (3.5,
// as production Gardener runs), built and cached the same way. Debian's etcd
// is 3.4, which lacks RequestWatchProgress, so the API servers could never
// serve a consistent list from their watch cache.
func etcdBinary(ctx context.Context) (string, error) {
	return builtBinary(ctx, etcdEnv, "build-etcd.sh")
}

// gardenerAPIServerBinary returns a gardener-apiserver of the gardener
// version go.mod requires, built and cached the same way.
func gardenerAPIServerBinary(ctx context.Context) (string, error) {
	return builtBinary(ctx, gardenerAPIServerEnv, "build-gardener-apiserver.sh")
}

// builtBinary returns the binary named by the environment variable env when
// set, else runs hack/<script>, which builds the binary once, caches it
// outside the repository and prints its path last.
func builtBinary(ctx context.Context, env, script string) (string, error) {
	if path := os.Getenv(env); path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("%s=%q: %w", env, path, err)
		}
		return path, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	scriptPath := filepath.Join(root, "hack", script)
	cmd := exec.CommandContext(ctx, "bash", scriptPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", scriptPath, err, lastLines(stderr.Bytes(), 30))
	}
	path := strings.TrimSpace(string(lastLines(out, 1)))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s printed %q, not a binary: %w", scriptPath, path, err)
	}
	return path, nil
}

// repoRoot finds the module root by walking up from the working directory
// (tests run in their package directory) and, failing that, from this source
// file (a binary run from elsewhere on the machine that built it).
func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		if root, ok := findModuleRoot(start); ok {
			return root, nil
		}
	}
	return "", fmt.Errorf("no go.mod of module %s above %v", modulePath, starts)
}

func findModuleRoot(dir string) (string, bool) {
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == modulePath
		}
	}
	return false
}

func lastLines(out []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}
