#!/usr/bin/env bash
# Builds etcd from source through the Go module proxy and caches the binary
# outside the repository, next to kube-apiserver. Prints the binary's path on
# stdout. With --cached it only prints the path of a binary built before.
#
# The version is the etcd server module this repository's module graph already
# resolves: etcd 3.5, as production Gardener runs, and since 3.5.13 it answers
# RequestWatchProgress, which the API servers need to serve consistent lists
# from their watch cache (Debian's etcd 3.4 cannot). A throwaway module whose
# main is etcd's own etcdmain.Main `go get`s the server module with -mod=mod.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib/go-tool.sh"
version="${ETCD_VERSION:-$(cd "$root" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)}"
bin="$tool_cache/etcd-$version"
use_cached "$bin" "$@"

echo "building etcd $version from source (first run only, about 80 s of CPU time)..." >&2
enter_build_module etcd
cat > main.go <<'GO'
// Command etcd is etcd's server, as etcd's own main starts it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$version" >&2
echo "compiling etcd..." >&2
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin.tmp" . >&2
install_built "$bin" etcd
