# shellcheck shell=bash
# Sourced by the hack/ scripts that build a tool from the Go module proxy and
# cache it outside the repository: where the cache is, the --cached
# question, and the throwaway module a build happens in.

tool_cache="${HAP_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hap-reconciler}"

# use_cached BIN [--cached]: prints BIN and exits 0 when it is built. With
# --cached it only asks: exit 1, building nothing, when it is not. Otherwise
# it returns, and the caller builds BIN.
use_cached() {
  if [[ -x "$1" ]]; then
    echo "$1"
    exit 0
  fi
  if [[ "${2:-}" == "--cached" ]]; then
    exit 1
  fi
}

# enter_build_module NAME: changes into a throwaway Go module for building
# NAME, removed when the script exits.
enter_build_module() {
  build_dir="$(mktemp -d)"
  trap 'rm -rf "$build_dir"' EXIT
  mkdir -p "$tool_cache"
  cd "$build_dir" || exit
  go mod init "hap-reconciler/$1-build" >/dev/null 2>&1
}

# install_built BIN NAME: puts the build written to BIN.tmp in place and
# prints BIN.
install_built() {
  mv "$1.tmp" "$1"
  echo "$2 cached at $1" >&2
  echo "$1"
}
