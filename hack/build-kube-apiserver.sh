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

staging_version="v0.${version#v1.}"
echo "building kube-apiserver $version from source (first run only, about 6 minutes on 2 cores)..." >&2
enter_build_module kube-apiserver
gomod="$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
{
  echo "require k8s.io/kubernetes $version"
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging_version"'#p' "$gomod"
} >> go.mod
echo 'package main' > tools.go
echo 'import _ "k8s.io/kubernetes/cmd/kube-apiserver"' >> tools.go
GOFLAGS=-mod=mod go mod tidy >&2
echo "compiling kube-apiserver..." >&2
# The version /version reports, as Kubernetes' own release build stamps it:
# helm install checks a chart's kubeVersion against it.
minor="${version#v1.}"
minor="${minor%%.*}"
stamp="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
stamp="$stamp -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w $stamp" -o "$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
install_built "$bin" kube-apiserver
