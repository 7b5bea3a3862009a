#!/usr/bin/env bash
# The project's test command: prepares the real test bed's parts (PostgreSQL
# and promtool from Debian; etcd, kube-apiserver, gardener-apiserver and helm
# built from source and cached outside the repository), then checks
# formatting, that go.mod is tidy and golangci-lint is clean, vets and runs
# every test, integration tests included.
set -euo pipefail
cd "$(dirname "$0")/.."

bash hack/ensure-tools.sh
echo "==> etcd"
bash hack/build-etcd.sh >/dev/null
echo "==> kube-apiserver"
bash hack/build-kube-apiserver.sh >/dev/null
echo "==> gardener-apiserver"
bash hack/build-gardener-apiserver.sh >/dev/null
echo "==> helm"
bash hack/install-helm.sh >/dev/null
echo "==> gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt would change these files (run gofmt -w on them):" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo "==> go mod tidy"
# go.mod and go.sum as go mod tidy leaves them, in both modules: a
# dependency marked indirect that the code imports, or a stale checksum,
# fails here rather than in a release scan.
for module in . provisioning; do
	if ! diff=$(cd "$module" && go mod tidy -diff); then
		echo "go mod tidy would change $module/go.mod or go.sum (run go mod tidy there):" >&2
		echo "$diff" >&2
		exit 1
	fi
done
echo "==> golangci-lint"
# KEB's linters (.golangci.yml), on both modules.
golangci_lint=$(bash hack/install-golangci-lint.sh)
"$golangci_lint" run ./...
(cd provisioning && "$golangci_lint" run --config ../.golangci.yml ./...)
echo "==> go vet"
go vet ./...
# The module KEB imports: standard library only, vetted and tested on its own.
echo "==> provisioning module"
(
	cd provisioning
	go vet ./...
	deps=$(go list -m all)
	if [ "$deps" != "github.com/kyma-project/hap-reconciler/provisioning" ]; then
		echo "provisioning must depend on the standard library alone; go list -m all prints:" >&2
		echo "$deps" >&2
		exit 1
	fi
	go test -count=1 ./...
)
echo "==> go test"
# Packages run side by side, TEST_PACKAGES_AT_ONCE (4) at a time. The
# integration packages wait more than they work: gardener-apiserver admits
# each CredentialsBinding with two requests through its own client, which
# client-go holds to 5 a second, so loading a test's landscape is bound by
# that limiter, not by the CPU. Each package starts its own bed (etcd,
# kube-apiserver, gardener-apiserver, PostgreSQL) on free ports, with a
# limiter of its own, so packages side by side overlap their waits. The
# slowest start first, so that none of them starts last (docs/testing.md).
slowest=(./test/reliability ./test/differential ./test/parity ./internal/jobs ./cmd/hap-reconciler ./internal/gardener
	./test/manifests ./test/provisioning ./test/testbed ./test/demo)
mapfile -t first < <(go list "${slowest[@]}")
mapfile -t rest < <(go list ./... | grep -vxF -f <(printf '%s\n' "${first[@]}"))
go test -p "${TEST_PACKAGES_AT_ONCE:-4}" -count=1 -timeout 40m "$@" "${first[@]}" "${rest[@]}"
