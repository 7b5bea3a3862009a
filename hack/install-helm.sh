#!/usr/bin/env bash
# Makes sure helm is available and prints its path on stdout. An installed
# helm is used as it is. Otherwise helm is built from its Go module
# (helm.sh/helm/v3/cmd/helm) through the Go module proxy and cached outside the
# repository, like kube-apiserver: Debian has no helm package. With --cached it
# only prints the path of a helm found before, building nothing.
set -euo pipefail

if path="$(command -v helm)"; then
  echo "$path"
  exit 0
fi

source "$(dirname "$0")/lib/go-tool.sh"
version="${HELM_VERSION:-v3.22.0}"
bin="$tool_cache/helm-$version"
use_cached "$bin" "$@"

echo "building helm $version from helm.sh/helm/v3 (first run only, a few minutes on 2 cores)..." >&2
enter_build_module helm
echo 'package main' > tools.go
echo 'import _ "helm.sh/helm/v3/cmd/helm"' >> tools.go
go get "helm.sh/helm/v3@$version" >&2
GOFLAGS=-mod=mod go mod tidy >&2
CGO_ENABLED=0 go build -trimpath \
  -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
  -o "$bin.tmp" helm.sh/helm/v3/cmd/helm >&2
install_built "$bin" helm
