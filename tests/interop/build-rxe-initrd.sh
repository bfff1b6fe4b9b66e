#!/usr/bin/env bash
# Build the rxe peer VM's initramfs: busybox, Linux SoftRoCE (rdma_rxe) and
# its dependencies from the installed Debian kernel, rdma-core's libibverbs
# with the rxe provider, iproute2's `rdma`, the rdma-core example programs,
# perftest (if installed), tests/interop/rdma_rw and build/host/tools/ibv-traffic
# (if built).
#
#   tests/interop/build-rxe-initrd.sh [OUT]    default build/interop/rxe-initrd.cpio.gz
#
# Takes about a second; the tests rebuild it every run.  Boot it with
# tests/vm/vm.sh (see docs/interop.md and tests/interop/lib.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/interop/rxe-initrd.cpio.gz}
die() { echo "build-rxe-initrd: $*" >&2; exit 1; }

libdir=/usr/lib/x86_64-linux-gnu
provider=$libdir/libibverbs/librxe-rdmav34.so
[ -f "$provider" ] || provider=$(ls "$libdir"/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
[ -n "$provider" ] && [ -f "$provider" ] || \
  die "no rxe provider in $libdir/libibverbs; run scripts/deps.sh as root (ibverbs-providers)"
[ -f /etc/libibverbs.d/rxe.driver ] || die "no /etc/libibverbs.d/rxe.driver (ibverbs-providers)"

bins=()
for b in rdma ibv_rc_pingpong ibv_devinfo ibv_devices; do
  p=$(command -v "$b") || die "$b not found; run scripts/deps.sh as root (iproute2, ibverbs-utils)"
  bins+=("$p")
done
# Optional: the perftest programs, for users (docs/interop.md).
for b in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat; do
  p=$(command -v "$b" 2>/dev/null) && bins+=("$p")
done
[ -x "$root/build/interop/rdma_rw" ] && bins+=("$root/build/interop/rdma_rw")
[ -x "$root/build/host/tools/ibv-traffic" ] && bins+=("$root/build/host/tools/ibv-traffic")

# The provider is dlopen'ed (ldd of the programs does not name it); its own
# libraries (libibverbs, libc) come with the programs.
files=("$provider:$provider" /etc/libibverbs.d/rxe.driver:/etc/libibverbs.d/rxe.driver
       "$root/tests/interop/ctl:/bin/ctl")

"$root/tests/vm/mkinitramfs.sh" -o "$out" --init "$root/tests/interop/rxe-init" \
  --modules "virtio_pci virtio_net crc32_generic rdma_rxe ib_uverbs" \
  --bins "${bins[*]}" --files "${files[*]}"
echo "$out"
