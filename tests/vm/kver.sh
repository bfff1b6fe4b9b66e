#!/usr/bin/env bash
# Print the version of the installed Debian kernel (e.g. 6.1.0-57-amd64):
# the one the linux-image-amd64 meta-package points at, else the newest
# /lib/modules/*-amd64 that has /boot/vmlinuz-<ver>.  Never `uname -r`: the
# machine building the module may run another kernel (a container, a sandbox).
#   tests/vm/kver.sh            the version
#   tests/vm/kver.sh --headers  the same, and fail unless its headers
#                               (/lib/modules/<ver>/build) are installed
set -euo pipefail
want_headers=0
[ "${1:-}" = --headers ] && want_headers=1

ver=
dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null || true)
if [[ $dep =~ linux-image-([0-9][^ ,]*-amd64) ]]; then
  ver=${BASH_REMATCH[1]}
  [ -f "/boot/vmlinuz-$ver" ] && [ -d "/lib/modules/$ver" ] || ver=
fi
if [ -z "$ver" ]; then
  for d in $(printf "%s\n" /lib/modules/*-amd64 | sort -V -r); do
    v=${d##*/}
    if [ -f "/boot/vmlinuz-$v" ]; then ver=$v; break; fi
  done
fi
if [ -z "$ver" ]; then
  echo "error: no Debian kernel installed (want /boot/vmlinuz-<ver>-amd64 and /lib/modules/<ver>);" \
       "run scripts/deps.sh as root (linux-image-amd64)" >&2
  exit 1
fi
if [ $want_headers = 1 ] && [ ! -e "/lib/modules/$ver/build/Makefile" ]; then
  echo "error: no headers for kernel $ver (/lib/modules/$ver/build);" \
       "run scripts/deps.sh as root (linux-headers-amd64)" >&2
  exit 1
fi
echo "$ver"
