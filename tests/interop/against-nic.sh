#!/usr/bin/env bash
# Interop with an unmodified RoCEv2 peer, Linux SoftRoCE (rdma_rxe), on one
# of our NICs: rdma-core's ibv_rc_pingpong in the rxe VM against our
# mnic-pingpong (libmnic), both roles, 1 B / 4 KiB / 64 KiB at path MTU 1024
# and 4096; then our NIC RDMA-WRITEs into and RDMA-READs from an rxe MR
# (rdma_rw in the VM, mnic-rw here).  Both ends check their results; our
# error counters and rxe's stay zero; the capture of our port decodes in
# tshark with no malformed frame.
#
#   tests/interop/against-nic.sh BOARD NAME PORT_BASE ITERS_1B ITERS_4K ITERS_64K
#     BOARD      posix | qemu-virt-a15 | qemu-virt-a72 (built)
#     NAME       output directory build/test-system/interop-NAME (INTEROP_OUT overrides)
#     PORT_BASE  4 consecutive 127.0.0.1 ports (INTEROP_PORT_BASE overrides)
# Run by tests/system/interop_rxe_posix.sh and interop_rxe_a15.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/pingpong.sh"
[ $# = 6 ] || mnic_die "usage: against-nic.sh BOARD NAME PORT_BASE ITERS_1B ITERS_4K ITERS_64K"
board=$1 name=$2 iters_1=$4 iters_4k=$5 iters_64k=$6
mnic_init
# the given base if its 4 ports are free, else the next free ones
base=${INTEROP_PORT_BASE:-$(mnic_free_ports 4 "$3")} || mnic_die "no free 127.0.0.1 ports"
out=${INTEROP_OUT:-$root/build/test-system/interop-$name}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out IOP_LOG=$out
make -C "$root" --no-print-directory -s hostdrv interop-tools >/dev/null
if [ "$board" = posix ]; then elf=$root/build/posix/mnic-fw; else elf=$root/build/$board/mnic-fw.elf; fi
[ -e "$elf" ] || mnic_die "$elf not built; run: make BOARD=$board"
rxe_build
# mnic-switch, not vdeplug4's: a frame a port's socket refuses waits in
# its egress queue instead of being lost (an emulated A15 NIC reads its
# socket far slower than rxe bursts a 64 KiB message), and every frame it
# does drop is counted, which iop_check_our_counters weighs.
MNIC_SWITCH=${MNIC_SWITCH:-mnic} mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw IOP_SWITCH=$out/sw

IOP_CTL=$base IOP_PP=$((base + 1)) IOP_RW=$((base + 2)) IOP_SRV=$((base + 3))
IOP_BAR=$out/nic.bar IOP_VM_MAC=52:54:00:00:00:f1
our_mac=52:54:00:00:00:01
t0=$(date +%s)

# Our NIC: 52:54:00:00:00:01 is 10.0.0.1 (firmware: IPv4 10.<mac3>.<mac4>.<mac5>).
# The POSIX NIC captures with MNIC_PCAP (written through stdio: the last
# few frames may be missing when it is killed), a QEMU NIC with filter-dump.
pcap=()
[ "$board" = posix ] || pcap=(--pcap "$out/nic.pcap")
MNIC_PCAP=$out/nic.pcap "$root/qemu-board/nic.sh" --board "$board" --name "iop-$name" --mac $our_mac \
  --switch "$RXE_SWITCH" --bar "$IOP_BAR" "${pcap[@]}" -- run >"$out/nic.log" 2>&1 &
mnic_track $!
# The rxe VM: eth0 MTU 9000 so rxe's active_mtu is 4096 (both path MTUs
# usable); our NIC does not answer ARP, hence the static neighbour.
RXE_APPEND="RXE_MTU=9000 RXE_NEIGH=10.0.0.1@$our_mac" \
  rxe_vm_start rxe "$IOP_VM_MAC" 10.0.0.241/24 "$IOP_CTL" \
  --hostfwd "$IOP_PP:18515" --hostfwd "$IOP_RW:18516" --guestfwd "18515:$IOP_SRV" --pcap "$out/rxe.pcap"
for _ in $(seq 300); do "$IOP_MNICCTL" -d "$IOP_BAR" info >/dev/null 2>&1 && break; sleep 0.1; done
"$IOP_MNICCTL" -d "$IOP_BAR" info | grep -E '^(board|port)' || iop_fail "our NIC did not come up ($out/nic.log)"
rxe_vm_ready rxe
rxe_ctl "$IOP_CTL" "ibv_devinfo -d rxe0 | grep -E 'active_mtu|state'"
echo "setup: $(( $(date +%s) - t0 )) s; iterations: 1 B x $iters_1, 4 KiB x $iters_4k, 64 KiB x $iters_64k"

for mtu in 1024 4096; do
  for sz in "1 $iters_1" "4096 $iters_4k" "65536 $iters_64k"; do
    set -- $sz
    iop_rxe_server "$1" "$mtu" "$2"
    iop_our_server "$1" "$mtu" "$2"
  done
  iop_rdma_rw 65536 "$mtu"
done
iop_rdma_rw 1 1024
iop_check_our_counters
iop_check_rxe

# Every RoCEv2 frame either side sent decodes in tshark, none malformed.
rxe_pcap_check "$out/nic.pcap" "eth.src == $our_mac" || iop_fail "our frames do not all decode ($out/nic.pcap)"
ours=$RXE_PCAP_FRAMES
rxe_pcap_check "$out/nic.pcap" "eth.src == $IOP_VM_MAC" || iop_fail "rxe's frames do not all decode ($out/nic.pcap)"
[ "$ours" -gt 1000 ] || iop_fail "too few RoCEv2 frames from our NIC in the capture ($ours)"
echo "PASS interop rxe <-> $board NIC: $IOP_RUNS runs in $(( $(date +%s) - t0 )) s"
