#!/usr/bin/env bash
# Builds the job's release as it stood at COMMIT (the first argument) for
# make e2e-upgrade: the image, by that commit's own hack/build-image.sh, and
# that commit's chart, both taken with git archive (no worktree, nothing
# written to the repository), and caches them outside the repository keyed
# by the commit and this script. Prints the directory on stdout:
#   image.tar   the OCI image archive, named IMAGE:TAG
#   chart/      that commit's manifests/hap-reconciler
#   tag         the image's tag, <appVersion>-<commit12>: its chart's
#               appVersion may be this tree's, whose image is another
# With --cached (the second argument) it only prints the directory of a
# release built before.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib/go-tool.sh"
commit="$(git -C "$root" rev-parse --verify "${1:?usage: build-old-release.sh COMMIT [--cached]}^{commit}")"
key="$(sha256sum "$root/hack/build-old-release.sh" | cut -c1-12)"
dir="$tool_cache/release-${commit:0:12}-$key"
if [[ -f $dir/tag ]]; then
  echo "$dir"
  exit 0
fi
[[ ${2:-} != --cached ]] || exit 1

echo "building the release of ${commit:0:12} (image and chart)..." >&2
mkdir -p "$tool_cache"
tmp="$(mktemp -d "$tool_cache/release-build.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/src" "$tmp/out"
git -C "$root" archive "$commit" | tar -x -C "$tmp/src"
app="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmp/src/manifests/hap-reconciler/Chart.yaml")"
tag="$app-${commit:0:12}"
# The archive has no .git: the commit's own script is told its version,
# commit and time.
(cd "$tmp/src" && VERSION="$tag" COMMIT="$commit" OUT="$tmp/out/image.tar" \
  IMAGE="europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:$tag" \
  SOURCE_DATE_EPOCH="$(git -C "$root" log -1 --format=%ct "$commit")" \
  bash hack/build-image.sh >/dev/null)
cp -r "$tmp/src/manifests/hap-reconciler" "$tmp/out/chart"
echo "$tag" > "$tmp/out/tag"
rm -rf "$dir"
mv "$tmp/out" "$dir"
echo "the release of ${commit:0:12} cached at $dir" >&2
echo "$dir"
