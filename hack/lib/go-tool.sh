# shellcheck shell=bash
# Sourced by the hack/ scripts that build a tool from the Go module proxy and
# cache it outside the repository: where the cache is, the --cached
# question, and the throwaway module a build happens in.

tool_cache="${HAP_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hap-reconciler}"

# use_cached BIN [--cached]: prints BIN and exits 0 when it is built. With
# --cached it only asks: exit 1, building nothing, when it is not. Otherwise
# it returns, and the caller builds BIN.
use_cached() {
  if [[ -x "$1" ]]; then
    echo "$1"
    exit 0
  fi
  if [[ "${2:-}" == "--cached" ]]; then
    exit 1
  fi
}

# enter_build_module NAME: changes into a throwaway Go module for building
# NAME, removed when the script exits.
enter_build_module() {
  build_dir="$(mktemp -d)"
  trap 'rm -rf "$build_dir"' EXIT
  mkdir -p "$tool_cache"
  cd "$build_dir" || exit
  go mod init "hap-reconciler/$1-build" >/dev/null 2>&1
}

# install_built BIN NAME: puts the build written to BIN.tmp in place and
# prints BIN.
install_built() {
  mv "$1.tmp" "$1"
  echo "$2 cached at $1" >&2
  echo "$1"
}

# require_kubernetes VERSION COMMAND...: in the throwaway module, requires
# k8s.io/kubernetes at VERSION, its staging modules at their published
# versions (the main module's go.mod replaces them with ./staging paths), and
# imports cmd/COMMAND for each command, so that go mod tidy resolves them.
require_kubernetes() {
  local version="$1" gomod c
  shift
  gomod="$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  {
    echo "require k8s.io/kubernetes $version"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 v0.'"${version#v1.}"'#p' "$gomod"
  } >> go.mod
  {
    echo 'package main'
    for c in "$@"; do echo "import _ \"k8s.io/kubernetes/cmd/$c\""; done
  } > tools.go
  GOFLAGS=-mod=mod go mod tidy >&2
}

# kubernetes_ldflags VERSION: strips the binary and stamps the version as
# Kubernetes' own release build does; a build without it reports
# v0.0.0-master, and helm install checks a chart's kubeVersion against the
# API server's /version.
kubernetes_ldflags() {
  local minor="${1#v1.}"
  minor="${minor%%.*}"
  echo "-s -w -X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/component-base/version.gitMajor=1" \
    "-X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
}
