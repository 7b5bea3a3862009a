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
source "$root/hack/lib/go-tool.sh"
version="${GARDENER_APISERVER_VERSION:-$(cd "$root" && go list -m -f '{{.Version}}' github.com/gardener/gardener)}"
bin="$tool_cache/gardener-apiserver-$version"
use_cached "$bin" "$@"

echo "building gardener-apiserver $version from source (first run only, about 5 minutes on 2 cores)..." >&2
enter_build_module gardener-apiserver
GOFLAGS=-mod=mod go get "github.com/gardener/gardener/cmd/gardener-apiserver@$version" >&2
echo "compiling gardener-apiserver..." >&2
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin.tmp" github.com/gardener/gardener/cmd/gardener-apiserver >&2
install_built "$bin" gardener-apiserver
