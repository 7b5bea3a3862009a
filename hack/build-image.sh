#!/usr/bin/env bash
# Builds the job's container image without a Docker engine and writes it as
# an OCI image archive (oci-archive, one tar file): buildah from Debian,
# FROM scratch, the static binary `make build` produces as /hap-reconciler
# (the entrypoint), Debian's CA bundle at /etc/ssl/certs/ca-certificates.crt,
# a passwd and group naming the user 65532:65532 (nonroot) the image runs as,
# /tmp and /home/nonroot. No shell, no package manager. The binary is built
# with the FIPS 140-3 module (make build) and the image runs it FIPS-only
# (GODEBUG=fips140=only,tlsmlkem=0), as Kyma's images. The Dockerfile builds
# the same layout on distroless for those with Docker.
#
# Environment (all optional):
#   VERSION, COMMIT  what --version prints (default: git describe, git rev-parse HEAD)
#   OUT              the archive (default bin/hap-reconciler-image.tar)
#   IMAGE            the name recorded in the archive (org.opencontainers.image.ref.name)
#                    (default europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:$VERSION)
#   GOARCH           the image's architecture (default: this machine's)
#
# buildah keeps its storage (vfs driver) in a temporary directory removed on
# exit; only its blob-info cache stays, in /var/lib/containers/cache. Run as
# root (rootless buildah, with subordinate IDs, should work too; not tried).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
OUT=${OUT:-bin/hap-reconciler-image.tar}
IMAGE=${IMAGE:-europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:${VERSION}}
GOARCH=${GOARCH:-$(go env GOARCH)}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
# The image's timestamps: the commit's time, so that the same commit builds
# the same layer (SOURCE_DATE_EPOCH when set).
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
[[ -f $CA_BUNDLE ]] || missing+=(ca-certificates)
apt_install "${missing[@]}"

work=$(mktemp -d)
ctr=""
cleanup() {
	[[ -z $ctr ]] || "${bah[@]}" rm "$ctr" >/dev/null 2>&1 || true
	# vfs leaves read-only directories behind for a rootless user.
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
bah=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)

echo "==> binary (linux/$GOARCH, $VERSION, ${COMMIT:-no commit})" >&2
GOOS=linux GOARCH=$GOARCH make --no-print-directory build OUT="$work/hap-reconciler" VERSION="$VERSION" COMMIT="$COMMIT" >&2

# The files around the binary, as tar files with their owners and modes
# (buildah add unpacks them; buildah copy would not keep a directory's mode).
root=$work/rootfs
mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot"
cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
chmod 0755 "$root/etc" "$root/etc/ssl" "$root/etc/ssl/certs" "$root/home"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 1777 "$root/tmp"
chmod 0700 "$root/home/nonroot"
tarball() { # owner archive paths...
	local owner=$1 archive=$2
	shift 2
	tar -C "$root" --create --file "$archive" --no-recursion --numeric-owner \
		--owner="$owner" --group="$owner" --mtime="@$EPOCH" "$@"
}
tarball 0 "$work/base.tar" etc etc/passwd etc/group etc/ssl etc/ssl/certs etc/ssl/certs/ca-certificates.crt tmp home
tarball 65532 "$work/home.tar" home/nonroot

echo "==> image $IMAGE" >&2
ctr=$("${bah[@]}" from --arch "$GOARCH" --os linux scratch)
"${bah[@]}" add --quiet "$ctr" "$work/base.tar" /
"${bah[@]}" add --quiet "$ctr" "$work/home.tar" /
"${bah[@]}" copy --quiet --chown 0:0 --chmod 0755 "$ctr" "$work/hap-reconciler" /hap-reconciler
"${bah[@]}" config \
	--os linux --arch "$GOARCH" \
	--user 65532:65532 \
	--env GODEBUG=fips140=only,tlsmlkem=0 \
	--workingdir / \
	--entrypoint '["/hap-reconciler"]' --cmd '' \
	--created-by "hack/build-image.sh" \
	--label org.opencontainers.image.title=hap-reconciler \
	--label org.opencontainers.image.source=https://github.com/kyma-project/hap-reconciler \
	--label org.opencontainers.image.version="$VERSION" \
	--label org.opencontainers.image.revision="$COMMIT" \
	"$ctr"

mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
"${bah[@]}" commit --quiet --format oci --disable-compression=false --identity-label=false \
	--timestamp "$EPOCH" "$ctr" "oci-archive:$OUT:$IMAGE" >/dev/null
echo "==> wrote $OUT ($(du -h "$OUT" | cut -f1))" >&2
echo "$OUT"
