#!/usr/bin/env bash
# Interop with an unmodified RoCEv2 peer, Linux SoftRoCE (rdma_rxe), on a
# POSIX NIC: rdma-core's ibv_rc_pingpong in the rxe VM against our
# mnic-pingpong (libmnic), both roles, 1 B / 4 KiB / 64 KiB at path MTU 1024
# and 4096; then our NIC RDMA-WRITEs into and RDMA-READs from an rxe MR
# (rdma_rw in the VM, mnic-rw here).  Both ends check their results; our
# error counters and rxe's stay zero; the capture of our port decodes in
# tshark with no malformed frame.  Iterations (kept small for CI, TCG):
# 1 B x 500, 4 KiB x 250, 64 KiB x 50 per run (ITERS_SCALE=k multiplies).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/pingpong.sh"
mnic_init
out=${INTEROP_OUT:-$root/build/test-system/interop-posix}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out IOP_LOG=$out
make -C "$root" --no-print-directory -s hostdrv interop-tools >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
rxe_build
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

base=${INTEROP_PORT_BASE:-17300}
IOP_CTL=$base IOP_PP=$((base + 1)) IOP_RW=$((base + 2)) IOP_SRV=$((base + 3))
IOP_BAR=$out/nic.bar IOP_VM_MAC=52:54:00:00:00:f1
t0=$(date +%s)

# Our NIC: 52:54:00:00:00:01 is 10.0.0.1 (firmware: IPv4 10.<mac3>.<mac4>.<mac5>).
MNIC_PCAP=$out/nic.pcap "$root/qemu-board/nic.sh" --board posix --name iop0 --mac 52:54:00:00:00:01 \
  --switch "$RXE_SWITCH" --bar "$IOP_BAR" -- run >"$out/nic.log" 2>&1 &
mnic_track $!
# The rxe VM: eth0 MTU 9000 so rxe's active_mtu is 4096 (both path MTUs
# usable); our NIC does not answer ARP, hence the static neighbour.
RXE_APPEND="RXE_MTU=9000 RXE_NEIGH=10.0.0.1@52:54:00:00:00:01" \
  rxe_vm_start rxe "$IOP_VM_MAC" 10.0.0.241/24 "$IOP_CTL" \
  --hostfwd "$IOP_PP:18515" --hostfwd "$IOP_RW:18516" --guestfwd "18515:$IOP_SRV" --pcap "$out/rxe.pcap"
for _ in $(seq 100); do "$IOP_MNICCTL" -d "$IOP_BAR" info >/dev/null 2>&1 && break; sleep 0.1; done
"$IOP_MNICCTL" -d "$IOP_BAR" info | grep -E '^(board|port)'
rxe_vm_ready rxe
rxe_ctl "$IOP_CTL" "ibv_devinfo -d rxe0 | grep -E 'active_mtu|state'"
echo "setup: $(( $(date +%s) - t0 )) s"

k=${ITERS_SCALE:-1}
for mtu in 1024 4096; do
  for sz in "1 500" "4096 250" "65536 50"; do
    set -- $sz
    iop_rxe_server "$1" "$mtu" $(($2 * k))
    iop_our_server "$1" "$mtu" $(($2 * k))
  done
  iop_rdma_rw 65536 "$mtu"
done
iop_rdma_rw 1 1024
iop_check_our_counters
iop_check_rxe

# Every RoCEv2 frame our NIC sent decodes in tshark, none malformed.
"$IOP_MNICCTL" -d "$IOP_BAR" health >/dev/null || true
rxe_pcap_check "$out/nic.pcap" "eth.src == 52:54:00:00:00:01" || iop_fail "our frames do not all decode ($out/nic.pcap)"
ours=$RXE_PCAP_FRAMES
rxe_pcap_check "$out/nic.pcap" "eth.src == $IOP_VM_MAC" || iop_fail "rxe's frames do not all decode ($out/nic.pcap)"
[ "$ours" -gt 1000 ] || iop_fail "too few RoCEv2 frames from our NIC in the capture ($ours)"
echo "PASS interop rxe <-> POSIX NIC: $IOP_RUNS runs in $(( $(date +%s) - t0 )) s"
