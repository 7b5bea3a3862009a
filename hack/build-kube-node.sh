#!/usr/bin/env bash
# Builds the node and control-plane binaries the e2e (docs/e2e.md) needs
# beside the test bed's kube-apiserver -- kubelet, kube-controller-manager and
# kube-scheduler -- from k8s.io/kubernetes through the Go module proxy, the same
# version and the same way as hack/build-kube-apiserver.sh, and caches them
# outside the repository. Prints the directory holding them on stdout. With
# --cached it only prints the directory of a build made before.
set -euo pipefail

# shellcheck source=hack/lib/go-tool.sh
source "$(dirname "$0")/lib/go-tool.sh"
version="${KUBE_NODE_VERSION:-${KUBE_APISERVER_VERSION:-v1.34.4}}"
dir="$tool_cache/kube-node-$version"
# No kube-proxy: no pod of the chart reaches another through a Service, and
# the e2e reads /metrics on the pod's address.
components=(kubelet kube-controller-manager kube-scheduler)
# The directory counts as built once its last binary is in place.
if [[ -x "$dir/${components[-1]}" ]]; then
  echo "$dir"
  exit 0
fi
[[ "${1:-}" != "--cached" ]] || exit 1

echo "building ${components[*]} $version from source (first run only, about 7 minutes on 2 cores)..." >&2
enter_build_module kube-node
require_kubernetes "$version" "${components[@]}"
mkdir -p "$dir"
for c in "${components[@]}"; do
  echo "compiling $c..." >&2
  CGO_ENABLED=0 go build -trimpath -ldflags="$(kubernetes_ldflags "$version")" -o "$dir/$c.tmp" "k8s.io/kubernetes/cmd/$c" >&2
  mv "$dir/$c.tmp" "$dir/$c"
done
echo "${components[*]} cached in $dir" >&2
echo "$dir"
