#!/usr/bin/env bash
# Installs, from Debian's packages, what the test bed runs when it is missing:
# PostgreSQL 15's server binaries, promtool and Pushgateway. etcd is not among
# them: Debian's is 3.4, and hack/build-etcd.sh builds 3.5 instead.
set -euo pipefail
# shellcheck source=hack/lib/apt.sh
source "$(dirname "$0")/lib/apt.sh"

missing=()
[[ -x /usr/lib/postgresql/15/bin/initdb ]] || missing+=(postgresql-15)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-pushgateway >/dev/null 2>&1 || [[ -x /usr/bin/prometheus-pushgateway ]] || missing+=(prometheus-pushgateway)
# The collation tests create a cluster in a locale whose text order is not
# byte order (testbed.CollatingLocale); localedef needs the locales' sources.
[[ -f /usr/share/i18n/locales/en_US ]] || missing+=(locales)
apt_install "${missing[@]}"

if ! locale -a 2>/dev/null | grep -qix 'en_US.utf8'; then
  echo "==> generating the en_US.UTF-8 locale"
  as_root localedef -i en_US -c -f UTF-8 en_US.UTF-8
fi
