#!/usr/bin/env bash
# Install the Debian 12 packages this project needs, if any is missing.
# Idempotent and quiet when everything is there.  Not root: prints the exact
# apt-get line to run and fails.
set -euo pipefail

PKGS=(
  make gcc libc6-dev python3 procps
  gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
  gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu picolibc-aarch64-linux-gnu
  libcmocka-dev libvdeplug-dev vdeplug
  qemu-system-arm        # every NIC runs with -nic none + explicit netdevs (qemu-board/)
  gnuplot-nox tshark
  clang libclang-rt-14-dev valgrind zlib1g-dev
  libisal-dev            # the ICRC on x86-64 hosts: ISA-L crc32_gzip_refl (rocev2/icrc.c)
  linux-headers-amd64 linux-image-amd64 busybox-static cpio   # make kmod + the x86 VM test
  qemu-system-x86        # tests/vm/vm.sh: -nic none + explicit netdevs
  ibverbs-utils ibverbs-providers libibverbs-dev iproute2 kmod   # rxe peer VM (tests/interop/)
  criu                   # live migration in the test VMs (hostdrv/criu/, its criu-plugin.h)
  perftest               # ib_write_bw, ib_read_bw, ib_send_lat ... in the test VMs (bench/perftest.sh)
  libsodium-dev          # mnicctl image sign/verify (Ed25519, docs/firmware-images.md)
  man-db groff-base bsdextrautils   # man -l of docs/man/ (tests/integration/man_pages.sh)
)

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$st" = "installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages; run as root: apt-get update && $cmd" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -qq && $cmd; } >"$log" 2>&1; then
  tail -20 "$log" >&2
  echo "deps: apt-get failed (log above); fix the package source and re-run" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
