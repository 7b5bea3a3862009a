#!/usr/bin/env bash
# Builds gardener-apiserver from source through the Go module proxy and caches
# the binary outside the repository, next to kube-apiserver. Prints the
# binary's path on stdout. With --cached it only prints the path of a binary
# built before.
#
# The version is the gardener module this repository already requires, so the
# API the test bed serves is the one the job's types were generated from.
# A throwaway module `go get`s the command's package with -mod=mod: `go mod
# tidy` would also resolve the test-only imports of gardener's packages, one of
# which does not resolve, while `go get` of the package needs its build graph
# alone.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="${GARDENER_APISERVER_VERSION:-$(cd "$root" && go list -m -f '{{.Version}}' github.com/gardener/gardener)}"
cache="${HAP_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hap-reconciler}"
bin="$cache/gardener-apiserver-$version"

if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi
# --cached only asks: exit 1, building nothing, when the binary is not there.
if [[ "${1:-}" == "--cached" ]]; then
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache"

echo "building gardener-apiserver $version from source (first run only, about 5 minutes on 2 cores)..." >&2
cd "$work"
go mod init hap-reconciler/gardener-apiserver-build >/dev/null 2>&1
GOFLAGS=-mod=mod go get "github.com/gardener/gardener/cmd/gardener-apiserver@$version" >&2
echo "compiling gardener-apiserver..." >&2
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin.tmp" github.com/gardener/gardener/cmd/gardener-apiserver >&2
mv "$bin.tmp" "$bin"
echo "gardener-apiserver cached at $bin" >&2
echo "$bin"
