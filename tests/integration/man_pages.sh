#!/usr/bin/env bash
# The man pages mnicctl(8) and mnic(4) (docs/man/), as `make install` puts
# them next to the tools:
#   1. make install DESTDIR=... PREFIX=/usr: the tools in sbin/bin, the
#      pages in share/man/man8 and man4
#   2. each page renders with `man -l` (MANWIDTH=80) with no groff warning
#      at all (the check itself is proven on a page with a bad macro) and
#      has NAME, SYNOPSIS, DESCRIPTION and SEE ALSO
#   3. the pages describe what exists: mnicctl(8) names every command of
#      `mnicctl --help` and every `image` verb; mnic(4) every module
#      parameter, sysfs health file, driver counter and ioctl of the driver
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/man-pages; rm -rf "$out"; mkdir -p "$out"
command -v man >/dev/null || mnic_die "man missing: run scripts/deps.sh (man-db, groff-base)"
cd "$MNIC_ROOT"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- 1. install
make --no-print-directory -s install DESTDIR="$out/root" PREFIX=/usr >"$out/install.log" 2>&1 ||
  { cat "$out/install.log"; mnic_die "make install failed"; }
for f in sbin/mnicctl bin/mnic-pingpong bin/mnic-traffic; do
  [ -x "$out/root/usr/$f" ] || bad "make install: no executable usr/$f"
done
m8=$out/root/usr/share/man/man8/mnicctl.8; m4=$out/root/usr/share/man/man4/mnic.4
for f in "$m8" "$m4"; do [ -f "$f" ] || mnic_die "make install: no ${f#"$out"/root/}"; done
echo "ok: make install: mnicctl, mnic-pingpong, mnic-traffic, mnicctl.8, mnic.4"

# ---- 2. render without warnings
warnings() { MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null; }
printf '.TH BAD 1\n.SH NAME\nbad \\- a page with an undefined macro\n.XX\n' > "$out/bad.1"
[ -n "$(warnings "$out/bad.1")" ] || mnic_die "man --warnings reports nothing for an undefined macro: the check cannot work"
for f in "$m8" "$m4"; do
  w=$(warnings "$f")
  [ -z "$w" ] || bad "${f##*/}: groff warnings: $w"
  MANWIDTH=80 man -l "$f" 2>/dev/null | col -b > "$out/${f##*/}.txt"
  for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    grep -q "^$s" "$out/${f##*/}.txt" || bad "${f##*/}: no $s section"
  done
  echo "ok: ${f##*/}: $(wc -l < "$out/${f##*/}.txt") lines at 80 columns, no warnings"
done

# ---- 3. the pages name what the code has
# word: the rendered page holds it as a whole word (the pages turn
# hyphenation off: .nh).
word() { grep -qE "(^|[^A-Za-z0-9_.-])$2([^A-Za-z0-9_-]|$)" "$out/$1.txt" || bad "$1 does not mention '$2'"; }
help=$(build/host/hostdrv/mnicctl --help)
cmds=$(printf '%s\n' "$help" | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | sort -u)
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || mnic_die "cannot read the commands of mnicctl --help"
for c in $cmds; do word mnicctl.8 "$c"; done
verbs=$(printf '%s\n' "$help" | grep -oE '(^ +|\| )image [a-z-]+' | awk '{print $NF}' | sort -u)
for v in $verbs; do grep -qE "image $v( |$)" "$out/mnicctl.8.txt" || bad "mnicctl.8 does not describe 'image $v'"; done
echo "ok: mnicctl.8 names $(echo "$cmds" | wc -w) commands and $(echo "$verbs" | wc -w) image verbs"

params=$(sed -n 's/^module_param(\([a-z_]*\),.*/\1/p' hostdrv/kernel/*.c | sort -u)
counters=$(sed -n 's/^[[:space:]]*X(\([a-z_]*\)).*/\1/p' hostdrv/kernel/mnic.h)
health=$(sed -n -e 's/^SEG_ATTR(\([a-z_]*\),.*/\1/p' -e 's/^DB_ATTR(\([a-z_]*\),.*/\1/p' \
  -e 's/^static DEVICE_ATTR_RO(\([a-z_]*\));/\1/p' hostdrv/kernel/mnic_sysfs.c)
ioctls=$(sed -n 's/^#define \(MNIC_IOC_[A-Z_]*\) *_IO.*/\1/p' abi/include/mnic/ioctl.h)
[ "$(echo $params | wc -w)" -ge 4 ] && [ "$(echo $counters | wc -w)" -ge 20 ] &&
  [ "$(echo $health | wc -w)" -ge 15 ] && [ "$(echo $ioctls | wc -w)" -ge 3 ] ||
  mnic_die "cannot read the driver's parameters, counters, sysfs files or ioctls"
for n in $params $counters $health $ioctls; do word mnic.4 "$n"; done
for n in "devlink dev info" "devlink dev flash" "reporter fw"; do
  grep -q "$n" "$out/mnic.4.txt" || bad "mnic.4 does not describe '$n'"
done
echo "ok: mnic.4 names $(echo $params | wc -w) parameters, $(echo $health | wc -w) health files," \
  "$(echo $counters | wc -w) counters, $(echo $ioctls | wc -w) ioctls, devlink info/flash/health"

[ $fail = 0 ] || exit 1
echo "man_pages: PASS"
