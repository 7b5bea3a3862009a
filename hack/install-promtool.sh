#!/usr/bin/env bash
# Makes sure promtool is installed and prints its path on stdout. promtool
# ships in Debian's prometheus package; a fresh machine may have stale or no
# package lists, so a failed install is retried once after apt-get update.
set -euo pipefail

if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool is missing, installing Debian package prometheus..." >&2
  export DEBIAN_FRONTEND=noninteractive
  install() { apt-get install -y --no-install-recommends prometheus >&2; }
  install || { apt-get update >&2 && install; }
fi
command -v promtool
