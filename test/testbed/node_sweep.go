package testbed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sweepNode removes whatever a node left on the machine, after Stop or
// after a run killed before its cleanup: the processes in the node's
// cgroups (containers whose shim is gone) and those started with NodeDir on
// their command line (containerd, its shims, the kubelet), every mount under
// NodeDir (overlay root filesystems, network namespaces, the kubelet's
// volumes), the pods' bridge, the node's cgroups and NodeDir itself. Each
// process is ended by its id. hack/e2e.sh checks that nothing is left.
func sweepNode() error {
	var errs []error
	pids, err := nodeProcesses()
	errs = append(errs, err)
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
		}
	}
	errs = append(errs, waitGone(pids))
	mounts, err := mountsUnder(NodeDir)
	errs = append(errs, err)
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	if out, err := exec.Command("ip", "link", "del", nodeBridge).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("Cannot find device")) {
		errs = append(errs, fmt.Errorf("delete bridge %s: %w\n%s", nodeBridge, err, out))
	}
	errs = append(errs, removeNodeCgroups())
	if err := os.RemoveAll(NodeDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// nodeDaemons are the programs a node starts with NodeDir on their command
// line; anyone else's process that happens to name NodeDir (a tail of a log)
// is left alone.
var nodeDaemons = []string{"containerd", "containerd-shim-runc-v2", "kubelet", "kube-controller-manager", "kube-scheduler"}

// nodeProcesses lists the processes in the node's cgroups and the node's
// daemons.
func nodeProcesses() ([]int, error) {
	var pids []int
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cgroups, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		daemon := slices.Contains(nodeDaemons, filepath.Base(string(argv0))) && bytes.Contains(cmdline, []byte(NodeDir))
		if daemon || bytes.Contains(cgroups, []byte(":/"+nodeCgroup+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// waitGone waits until the killed processes have been reaped, which their
// cgroups must be empty for.
func waitGone(pids []int) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d outlived SIGKILL for 30 s", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// mountsUnder lists the mount points under dir, dir itself included,
// deepest first.
func mountsUnder(dir string) ([]string, error) {
	var mounts []string
	err := eachMount(func(point, _ string) {
		if point == dir || strings.HasPrefix(point, dir+"/") {
			mounts = append(mounts, point)
		}
	})
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	return mounts, err
}

// cgroupMounts lists the mounted cgroup hierarchies.
func cgroupMounts() ([]string, error) {
	var roots []string
	err := eachMount(func(point, fstype string) {
		if fstype == "cgroup" || fstype == "cgroup2" {
			roots = append(roots, point)
		}
	})
	return roots, err
}

// eachMount calls fn with each mount point of this mount namespace and its
// file system type.
func eachMount(fn func(point, fstype string)) error {
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		// id parent major:minor root point options [optional...] - fstype source super
		before, after, ok := strings.Cut(s.Text(), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 1 {
			continue
		}
		fn(unescapeMount(fields[4]), tail[0])
	}
	return s.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	if u, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`); err == nil {
		return u
	}
	return s
}

// removeNodeCgroups removes nodeCgroup and everything below it from every
// hierarchy, deepest first (a cgroup goes only once it is empty).
func removeNodeCgroups() error {
	roots, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(root, nodeCgroup), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
