# shellcheck shell=bash
# Sourced by the hack/ scripts that install what they miss from Debian's
# packages.

# as_root CMD...: runs CMD as root, through sudo unless this is root already.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  else
    sudo "$@"
  fi
}

# apt_install PKG...: installs the packages without their recommended ones,
# quietly; when that fails (an old or never fetched package index), it
# fetches the index and tries once more, showing the errors. Nothing to do
# without packages. DEBIAN_FRONTEND goes on apt-get's command line, as sudo
# drops the caller's environment.
apt_install() {
  (($#)) || return 0
  echo "==> installing $*" >&2
  local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@")
  as_root "${install[@]}" >/dev/null 2>&1 || {
    as_root apt-get update >/dev/null
    as_root "${install[@]}" >/dev/null
  }
}
