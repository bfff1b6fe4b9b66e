#!/usr/bin/env bash
# Build a gzip'd cpio initramfs for an x86_64 test VM: busybox (static) as
# every command, chosen kernel modules, host binaries with their shared
# libraries, extra files, and the /init script.
#
#   tests/vm/mkinitramfs.sh -o OUT.cpio.gz --init FILE
#        [--kver VER]              kernel version of the modules (default: tests/vm/kver.sh)
#        [--modules "name ..."]    modules from /lib/modules/VER, e.g. "virtio_net virtio_pci";
#                                  their dependencies (modules.dep) come along;
#                                  .ko.xz/.ko.zst/.ko.gz are decompressed
#        [--bins "path ..."]       host executables -> /bin/<basename>, with the
#                                  shared libraries ldd names (and the loader)
#        [--files "src:dst ..."]   any file -> dst (absolute path in the VM)
#
# In the VM: busybox applets in /bin and /sbin, /lib/modules/VER with a
# modules.dep for the copied modules (busybox `modprobe NAME` loads a module
# and its dependencies), and /init (run as pid 1; it mounts what it needs).
# The init should end with `poweroff -f`; tests/vm/vm.sh runs QEMU with
# -no-reboot so a panic ends the VM too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "mkinitramfs: $*" >&2; exit 1; }

out=; init=; kver=; modules=; bins=; files=
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=${2:?-o needs a file}; shift 2 ;;
    --init) init=${2:?--init needs a file}; shift 2 ;;
    --kver) kver=${2:?--kver needs a version}; shift 2 ;;
    --modules) modules=${2?}; shift 2 ;;
    --bins) bins=${2?}; shift 2 ;;
    --files) files=${2?}; shift 2 ;;
    *) die "unknown option '$1' (see the usage at the top of tests/vm/mkinitramfs.sh)" ;;
  esac
done
[ -n "$out" ] || die "-o OUT.cpio.gz is required"
[ -n "$init" ] || die "--init FILE is required"
[ -f "$init" ] || die "no init script $init"
[ -n "$kver" ] || kver=$("$here/kver.sh")
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "busybox not found; run scripts/deps.sh as root (busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' || \
  ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || \
  die "$busybox is not static; install busybox-static (scripts/deps.sh)"
command -v cpio >/dev/null || die "cpio not found; run scripts/deps.sh as root"

stage=$(mktemp -d "${TMPDIR:-/tmp}/mkinitramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lib/modules/"$kver"}
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list-full); do
  # --list-full names bin/sh, sbin/insmod, usr/bin/...: keep it flat in /bin and /sbin.
  # Relative links: a stray write through one stays inside the stage.
  [ "${applet##*/}" = busybox ] && continue
  case $applet in
    sbin/*|usr/sbin/*) ln -sf ../bin/busybox "$stage/sbin/${applet##*/}" ;;
    *) ln -sf busybox "$stage/bin/${applet##*/}" ;;
  esac
done
[ -e "$stage/bin/sh" ] || ln -sf busybox "$stage/bin/sh"

# ---- modules: modules.dep lines are "path: dep1 dep2 ..." (transitive, load
# order is right to left); names compare with '-' and '_' equal.
mdir=/lib/modules/$kver
if [ -n "$modules" ]; then
  [ -f "$mdir/modules.dep" ] || die "no $mdir/modules.dep (linux-image for $kver installed?)"
  declare -A want=()
  for m in $modules; do
    m=${m//-/_}; m=${m%.ko}
    line=$(awk -v m="$m" -F: '{ n = $1; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n);
                                 gsub(/-/, "_", n); if (n == m) { print; exit } }' "$mdir/modules.dep")
    [ -n "$line" ] || die "module '$m' not in $mdir/modules.dep (built-in, or misspelt?)"
    want[${line%%:*}]=1
    for d in ${line#*:}; do want[$d]=1; done
  done
  : > "$stage$mdir/modules.dep"
  for p in "${!want[@]}"; do
    dst=$stage$mdir/${p%.xz}; dst=${dst%.zst}; dst=${dst%.gz}
    mkdir -p "$(dirname "$dst")"
    case $p in
      *.xz) xz -dc "$mdir/$p" > "$dst" ;;
      *.zst) zstd -qdc "$mdir/$p" > "$dst" ;;
      *.gz) gzip -dc "$mdir/$p" > "$dst" ;;
      *) cp "$mdir/$p" "$dst" ;;
    esac
  done
  # The copied modules' own modules.dep, with the decompressed names.
  while IFS= read -r line; do
    key=${line%%:*}
    [ -n "${want[$key]:-}" ] || continue
    echo "$line" | sed -E 's/\.ko\.(xz|zst|gz)/.ko/g' >> "$stage$mdir/modules.dep"
  done < "$mdir/modules.dep"
fi

# ---- binaries and their shared libraries
copy_file() {   # src dst-in-stage
  mkdir -p "$(dirname "$stage$2")"
  # The destination may be a busybox applet link to /bin/busybox: cp would
  # write through it into the HOST's busybox.  Replace the link instead.
  rm -f "$stage$2"
  cp -L "$1" "$stage$2"
}
for b in $bins; do
  [ -x "$b" ] || die "--bins: $b is not an executable file"
  copy_file "$b" "/bin/${b##*/}"
  if ldd "$b" >/dev/null 2>&1; then
    # "libx.so => /lib/x86_64-linux-gnu/libx.so (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
    for lib in $(ldd "$b" | grep -oE '(^|[[:space:]])/[^ ]+' | tr -d ' \t'); do
      [ -e "$stage$lib" ] || copy_file "$lib" "$lib"
    done
  fi
done
for f in $files; do
  src=${f%%:*}; dst=${f#*:}
  if [ "$src" = "$f" ] || [ "${dst:0:1}" != / ]; then die "--files: want src:/abs/dst, got '$f'"; fi
  [ -f "$src" ] || die "--files: no file $src"
  copy_file "$src" "$dst"
done

cp "$init" "$stage/init"
chmod 755 "$stage/init"
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
