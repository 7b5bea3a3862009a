#!/usr/bin/env bash
# Makes sure golangci-lint v2 is available and prints its path on stdout: built
# from its Go module (github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
# through the Go module proxy the first time and cached outside the
# repository, as KEB's Makefile installs it with go install. The version is
# the one this project's Go (go.mod) is known to build; KEB pins an older one
# built with an older Go. With --cached it only prints the path of a
# golangci-lint built before, building nothing.
set -euo pipefail

source "$(dirname "$0")/lib/go-tool.sh"
version="${GOLANGCI_LINT_VERSION:-v2.15.0}"
bin="$tool_cache/golangci-lint-$version"
use_cached "$bin" "$@"

echo "building golangci-lint $version (first run only, a few minutes on 2 cores)..." >&2
enter_build_module golangci-lint
GOBIN="$build_dir/bin" CGO_ENABLED=0 go install -trimpath -ldflags="-s -w" \
  "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version" >&2
mv "$build_dir/bin/golangci-lint" "$bin.tmp"
install_built "$bin" golangci-lint
