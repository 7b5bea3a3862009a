#!/usr/bin/env bash
# make e2e: the chart on a real kubelet (docs/e2e.md). Prepares the parts --
# the test bed's tools, the node's binaries (hack/build-kube-node.sh) and
# Debian packages (containerd, runc, CNI plugins), the pause image -- timing
# each, then runs TestChartOnARealKubelet (or E2E_TEST, make e2e-upgrade's
# TestChartUpgradeAndRollbackWhileKEBProvisions), which prints its own step
# timings. Whatever way the test ends, the trap then checks that the node
# left no process, mount, link or cgroup behind, removes any it finds and
# fails when there was one.
#
# Usage: [E2E_TEST=Name] hack/e2e.sh IMAGE_ARCHIVE   (the job's image, from make image)
# Runs as root: containerd and the kubelet need it.
set -euo pipefail
cd "$(dirname "$0")/.."
image=$(realpath "${1:?usage: $0 IMAGE_ARCHIVE (make image writes it)}")
[[ $(id -u) -eq 0 ]] || { echo "make e2e runs containers: run it as root" >&2; exit 1; }

# testbed.NodeDir, the node's bridge and its cgroup root (test/testbed/node.go).
node_dir=/run/hap-reconciler-e2e
node_bridge=hape2e0
node_cgroup=hap-reconciler-e2e

# testbed's node lock: while another e2e holds it, this one neither runs nor
# sweeps.
node_lock=/run/hap-reconciler-e2e.lock
exec 9>>"$node_lock"
if ! flock -n 9; then
	echo "another make e2e runs on this machine ($node_lock is locked)" >&2
	exit 1
fi
flock -u 9

work=$(mktemp -d)
leftovers() {
	local found=0 proc pid cmd exe
	for proc in /proc/[0-9]*; do
		pid=${proc#/proc/}
		cmd=$(tr '\0' ' ' 2>/dev/null <"$proc/cmdline") || continue
		exe=${cmd%% *}
		case ${exe##*/} in containerd | containerd-shim-runc-v2 | kubelet | kube-controller-manager | kube-scheduler) ;; *) continue ;; esac
		if [[ $cmd == *"$node_dir"* ]]; then
			echo "left behind: process $pid ($exe)" >&2
			kill -KILL "$pid" 2>/dev/null || true
			found=1
		fi
	done
	for pid in $(find /sys/fs/cgroup -path "*/$node_cgroup*" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
		echo "left behind: process $pid in the node's cgroups" >&2
		kill -KILL "$pid" 2>/dev/null || true
		found=1
	done
	local m
	while read -r m; do
		echo "left behind: mount $m" >&2
		umount -l "$m" || true
		found=1
	done < <(awk -v d="$node_dir" '$5 == d || index($5, d "/") == 1 {print length($5), $5}' /proc/self/mountinfo | sort -rn | cut -d' ' -f2)
	if ip link show "$node_bridge" >/dev/null 2>&1; then
		echo "left behind: link $node_bridge" >&2
		ip link del "$node_bridge" || true
		found=1
	fi
	local cg
	while read -r cg; do
		echo "left behind: cgroup $cg" >&2
		find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		found=1
	done < <(find /sys/fs/cgroup -maxdepth 2 -type d -name "$node_cgroup" 2>/dev/null)
	if [[ -e $node_dir ]]; then
		echo "left behind: $node_dir" >&2
		rm -rf "$node_dir" || true
		found=1
	fi
	return $found
}
finish() {
	local rc=$?
	rm -rf "$work"
	if ! flock -n 9; then
		echo "==> another make e2e took the node lock; not sweeping" >&2
		exit 1
	fi
	if ! leftovers; then
		echo "FAIL: the e2e node left the above behind (now removed)" >&2
		rc=1
	else
		echo "==> nothing left behind (processes, mounts, links, cgroups)"
	fi
	rm -f "$node_lock"
	echo "==> make e2e: $((SECONDS - e2e_start)) s in all (exit $rc)"
	exit "$rc"
}
e2e_start=$SECONDS
trap finish EXIT
trap 'exit 130' INT TERM

timed() { # name command...
	local name=$1 start=$SECONDS
	shift
	echo "==> $name"
	"$@" >/dev/null
	echo "    $name: $((SECONDS - start)) s"
}
timed "test bed packages" bash hack/ensure-tools.sh
timed "etcd" bash hack/build-etcd.sh
timed "kube-apiserver" bash hack/build-kube-apiserver.sh
timed "gardener-apiserver" bash hack/build-gardener-apiserver.sh
timed "helm" bash hack/install-helm.sh
timed "kubelet, kube-controller-manager, kube-scheduler" bash hack/build-kube-node.sh
timed "pause image" bash hack/build-pause-image.sh "$work/pause.tar" localhost/hap-reconciler-e2e/pause:1

test=${E2E_TEST:-TestChartOnARealKubelet}
echo "==> $test"
go test -count=1 -timeout 60m -v -run "^$test\$" ./test/manifests/ \
	-args -e2e -e2e.image="$image" -e2e.pause="$work/pause.tar"
