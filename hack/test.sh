#!/usr/bin/env bash
# The project's test command: prepares the real test bed's parts (PostgreSQL
# and promtool from Debian; etcd, kube-apiserver, gardener-apiserver and helm
# built from source and cached outside the repository), then checks
# formatting, vets and runs every test, integration tests included.
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
# One package at a time: each integration package starts its own etcd,
# kube-apiserver and PostgreSQL, and the machine has two cores.
go test -p 1 -count=1 -timeout 40m "$@" ./...
