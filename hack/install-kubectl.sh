#!/usr/bin/env bash
# Makes sure kubectl is available and prints its path on stdout. An installed
# kubectl is used as it is. Otherwise one is built from the k8s.io/kubectl
# module through the Go module proxy and cached outside the repository:
# Debian's kubernetes-client is too old for the test bed's API server and for
# the server-side dry runs the chart's tests do.
set -euo pipefail

if path="$(command -v kubectl)"; then
  echo "$path"
  exit 0
fi

version="${KUBECTL_VERSION:-v0.34.4}" # k8s.io/kubectl tag matching kube-apiserver v1.34
cache="${HAP_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hap-reconciler}"
bin="$cache/kubectl-$version"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache"
echo "building kubectl from k8s.io/kubectl $version (first run only, a few minutes)..." >&2
cd "$work"
go mod init hap-reconciler/kubectl-build >/dev/null 2>&1
# The same entry point as Kubernetes' cmd/kubectl, which lives in a module
# that cannot be required directly.
cat > main.go <<'GO'
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
GO
go get "k8s.io/kubectl@$version" >&2
GOFLAGS=-mod=mod go mod tidy >&2
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin.tmp" . >&2
mv "$bin.tmp" "$bin"
echo "kubectl cached at $bin" >&2
echo "$bin"
