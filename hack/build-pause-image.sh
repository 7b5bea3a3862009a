#!/usr/bin/env bash
# Builds the sandbox ("pause") image of the e2e node: test/testbed/pause, a
# static binary that waits for SIGTERM, FROM scratch, as an OCI image archive
# (buildah from Debian, no Docker engine, as hack/build-image.sh). The
# e2e imports it into containerd and names it as containerd's sandbox_image:
# registry.k8s.io is not reachable from CI.
#
# Usage: hack/build-pause-image.sh OUT IMAGE   (prints OUT)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUT IMAGE}
image=${2:?usage: $0 OUT IMAGE}

# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh
command -v buildah >/dev/null 2>&1 || apt_install buildah
work=$(mktemp -d)
ctr=""
bah=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
cleanup() {
	[[ -z $ctr ]] || "${bah[@]}" rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/pause" ./test/testbed/pause
ctr=$("${bah[@]}" from scratch)
"${bah[@]}" copy --quiet --chmod 0755 "$ctr" "$work/pause" /pause
"${bah[@]}" config --entrypoint '["/pause"]' --cmd '' --user 65535:65535 "$ctr"
mkdir -p "$(dirname "$out")"
rm -f "$out"
"${bah[@]}" commit --quiet --format oci "$ctr" "oci-archive:$out:$image" >/dev/null
echo "$out"
