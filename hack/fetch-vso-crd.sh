#!/usr/bin/env bash
# Makes sure the Vault Secrets Operator's VaultStaticSecret CRD is cached
# outside the repository and prints its path on stdout; the chart tests
# validate the chart's VaultStaticSecret against it on a real kube-apiserver.
# The CRD comes from the operator's Go module (github.com/hashicorp/vault-secrets-operator,
# whose zip holds config/crd/bases/) through the Go module proxy, at
# VSO_VERSION: v0.8.1 by default, the newest release the proxy serves here
# (it refuses v0.9 and v1.x), whose VaultStaticSecret v1beta1 has every field
# the chart writes. Where the proxy does not serve the version asked for,
# VSO_GIT_DIR may name a git directory of the operator's repository holding
# its tag (VSO_VERSION=v1.4.1 VSO_CRD_SHA256=6c4d9c3b1a6bebb1dc19681d32985b66bece3a8288bb7b1812c14196a1ae97bd
# was checked so). Either way the file must have the sha256 pinned: the test
# checks against the CRD of exactly that release. With --cached it only prints a path cached
# before. The file is the operator's (BUSL-1.1) and is never copied into this
# repository.
set -euo pipefail

source "$(dirname "$0")/lib/go-tool.sh"
version="${VSO_VERSION:-v0.8.1}"
want_sha256="${VSO_CRD_SHA256:-1eaf706e5bd0a9735503832ad93b30b3daa9d88de75e3be7f95c67f57cf629d3}"
crd_path="config/crd/bases/secrets.hashicorp.com_vaultstaticsecrets.yaml"
out="$tool_cache/vault-secrets-operator-$version/$(basename "$crd_path")"

if [[ -s "$out" ]]; then
  echo "$out"
  exit 0
fi
if [[ "${1:-}" == "--cached" ]]; then
  exit 1
fi

mkdir -p "$(dirname "$out")"
tmp="$out.tmp"
if zip="$(go mod download -json "github.com/hashicorp/vault-secrets-operator@$version" 2>/dev/null | sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p')" && [[ -n "$zip" ]]; then
  unzip -p "$zip" "github.com/hashicorp/vault-secrets-operator@$version/$crd_path" >"$tmp"
elif [[ -n "${VSO_GIT_DIR:-}" ]]; then
  git --git-dir="$VSO_GIT_DIR" show "$version:$crd_path" >"$tmp"
else
  echo "the Go module proxy does not serve github.com/hashicorp/vault-secrets-operator@$version; set VSO_GIT_DIR to a git directory of the operator's repository" >&2
  exit 1
fi
got="$(sha256sum "$tmp" | cut -d' ' -f1)"
if [[ "$got" != "$want_sha256" ]]; then
  rm -f "$tmp"
  echo "$crd_path of vault-secrets-operator $version has sha256 $got, want $want_sha256" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "VaultStaticSecret CRD of vault-secrets-operator $version cached at $out" >&2
echo "$out"
