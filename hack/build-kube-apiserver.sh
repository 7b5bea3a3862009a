#!/usr/bin/env bash
# Builds kube-apiserver from source through the Go module proxy and caches the
# binary outside the repository. Prints the binary's path on stdout. With
# --cached it only prints the path of a binary built before.
#
# The Kubernetes main module replaces every k8s.io staging module with a local
# directory that does not exist in the module zip, so a throwaway module
# requires k8s.io/kubernetes and points each staging module at its published
# v0.Y.Z release instead.
set -euo pipefail

source "$(dirname "$0")/lib/go-tool.sh"
version="${KUBE_APISERVER_VERSION:-v1.34.4}"
# "-v": the binary reports its version (see the ldflags below); an older
# cached build without it answered /version with v0.0.0-master, which Helm
# charts with a kubeVersion refuse.
bin="$tool_cache/kube-apiserver-$version-v"
use_cached "$bin" "$@"

echo "building kube-apiserver $version from source (first run only, about 6 minutes on 2 cores)..." >&2
enter_build_module kube-apiserver
require_kubernetes "$version" kube-apiserver
echo "compiling kube-apiserver..." >&2
CGO_ENABLED=0 go build -trimpath -ldflags="$(kubernetes_ldflags "$version")" -o "$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
install_built "$bin" kube-apiserver
