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

source "$(dirname "$0")/lib/go-tool.sh"
version="${KUBECTL_VERSION:-v0.34.4}" # k8s.io/kubectl tag matching kube-apiserver v1.34
bin="$tool_cache/kubectl-$version"
use_cached "$bin"

echo "building kubectl from k8s.io/kubectl $version (first run only, a few minutes)..." >&2
enter_build_module kubectl
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
install_built "$bin" kubectl
