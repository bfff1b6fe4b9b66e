#!/usr/bin/env bash
# The Ethernet netdev mnic0 (issue 16 item 2), run by bench/bench.sh (or
# alone: bash bench/netdev.sh).  One "name: value unit" line each on
# stdout, details on stderr:
#   netdev_tcp_rx_mbps_a15   256 KiB over TCP (busybox nc) into mnic0: the
#                            x86 VM's kernel driver, the QEMU A15 NIC's host
#                            Ethernet queues, the switch, the VM's own virtio
#                            NIC in a network namespace as the peer
#   netdev_tcp_tx_mbps_a15   the same out of mnic0
#   netdev_ping_rtt_ms_a15   ping mnic0 -> peer, the average of 10
# The figures come from tests/system/kmod_vm.sh, which prints them (one
# VM boot serves the test and the figures; both VMs emulated: TCG on a
# machine without KVM).  Environment: BENCH_NETDEV_LOG (where the run's
# log goes).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
log=${BENCH_NETDEV_LOG:-$MNIC_ROOT/build/bench/netdev.log}
mkdir -p "$(dirname "$log")"
bash "$MNIC_ROOT/tests/system/kmod_vm.sh" >"$log" 2>&1 || { tail -30 "$log" >&2; mnic_die "kmod_vm.sh failed (see $log)"; }
ms_of() { sed -n "s/.*netdev TCP 256 KiB $1 mnic0: \([0-9]*\) ms.*/\1/p" "$log" | tail -1; }
rx=$(ms_of into); tx=$(ms_of "out of")
rtt=$(grep "round-trip" "$log" | tail -1 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
[ -n "$rx" ] && [ -n "$tx" ] && [ -n "$rtt" ] || mnic_die "no netdev figures in $log"
grep -E "netdev TCP|round-trip|netdev capture" "$log" | sed 's/^/netdev: /' >&2
mbps() { awk -v ms="$1" 'BEGIN { printf "%.2f", (ms > 0 ? 262144 * 8 / (ms * 1000) : 0) }'; }
echo "netdev_tcp_rx_mbps_a15: $(mbps "$rx") Mbit/s"
echo "netdev_tcp_tx_mbps_a15: $(mbps "$tx") Mbit/s"
echo "netdev_ping_rtt_ms_a15: $rtt ms"
