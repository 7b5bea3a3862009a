#!/usr/bin/env bash
# Builds test/kebworkers/testdata/oldmodule, one KEB replica on an older pin of
# the provisioning module, against that module as it stood at COMMIT (the
# first argument), and caches the binary outside the repository, keyed by
# the commit and the program's source. Prints the binary's path on stdout.
# With --cached (the second argument) it only prints the path of a binary
# built before.
#
# The module is taken with git archive (no worktree, nothing written to the
# repository) into a throwaway Go module whose go.mod replaces the module
# path with it, as KEB's go.mod would pin that release. KEB's driver,
# lib/pq, is required at the version this repository's module graph
# resolves, so the build needs nothing the module cache lacks.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib/go-tool.sh"
commit="$(git -C "$root" rev-parse --verify "${1:?usage: build-old-module.sh COMMIT [--cached]}^{commit}")"
src="$root/test/kebworkers/testdata/oldmodule/main.go"
key="$(sha256sum "$src" | cut -c1-12)"
bin="$tool_cache/oldmodule-${commit:0:12}-$key"
use_cached "$bin" "${2:-}"

echo "building the provisioning module of ${commit:0:12} into a KEB-like picker..." >&2
pq="$(cd "$root" && go list -m -f '{{.Version}}' github.com/lib/pq)"
enter_build_module oldmodule
mkdir old
git -C "$root" archive "$commit" provisioning | tar -x -C old
cp "$src" main.go
go mod edit -require="github.com/kyma-project/hap-reconciler/provisioning@v0.0.0" \
  -replace="github.com/kyma-project/hap-reconciler/provisioning=./old/provisioning" \
  -require="github.com/lib/pq@$pq"
grep '^github.com/lib/pq ' "$root/go.sum" > go.sum
GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" . >&2
install_built "$bin" "the picker on the provisioning module of ${commit:0:12}"
