#!/usr/bin/env bash
# The rxe peer recipe on its own: two Linux SoftRoCE VMs (tests/interop/)
# on one vde switch run rdma-core's unmodified ibv_rc_pingpong over RoCEv2
# (GID index 1: ::ffff:<IPv4>).  If this fails, the interop tests against
# our NIC cannot mean anything.  Also checks that tshark decodes the
# captured rxe<->rxe exchange as RoCE (the same check the interop tests
# apply to our NIC's packets), and runs the verified verbs workload
# build/host/tools/ibv-traffic (tests/tools/ibv-traffic.c: SEND,
# WRITE_WITH_IMM, READ and atomics, every byte checked) on the reference,
# the binary tests/system/ibv_rc_pingpong_perftest_vm.sh runs on mnic.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
mnic_init
make -C "$root" --no-print-directory -s ibv-traffic >/dev/null
RXE_OUT=${INTEROP_OUT:-$root/build/test-system/interop-selfcheck}
rm -rf "$RXE_OUT"; mkdir -p "$RXE_OUT"
rxe_build
mnic_switch_start "$RXE_OUT/sw"
RXE_SWITCH=$RXE_OUT/sw

t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
pa=${INTEROP_PORT_BASE:-$(mnic_free_ports 2 17100)} || mnic_die "no free 127.0.0.1 ports"; pb=$((pa + 1))
rxe_vm_start a 52:54:00:00:00:f1 10.0.0.241/24 $pa --pcap "$RXE_OUT/a.pcap"
rxe_vm_start b 52:54:00:00:00:f2 10.0.0.242/24 $pb
rxe_vm_ready a; rxe_vm_ready b
echo "both rxe VMs ready after $(ms) ms (host time)"

n=${ITERS:-200}
t1=$(date +%s%N)
rxe_bg $pa srv "ibv_rc_pingpong -g 1 -n $n -s 4096"
sleep 0.3
rxe_ctl $pb "ibv_rc_pingpong -g 1 -n $n -s 4096 10.0.0.241" 60 | tee "$RXE_OUT/client.out"
rxe_fg $pa srv 60 | tee "$RXE_OUT/server.out"
echo "pingpong $n x 4096 B: $(( ($(date +%s%N) - t1) / 1000000 )) ms (host time)"
for f in client server; do
  grep -q "^$n iters in" "$RXE_OUT/$f.out" || { echo "FAIL: $f did not finish $n iterations"; exit 1; }
done

# ibv-traffic on the reference: both ends PASS, nothing lost, duplicated,
# reordered or damaged, every atomic result right.
tn=${TRAFFIC_N:-400}
rxe_bg $pa tr "ibv-traffic -d rxe0 -g 1 -n $tn -s 8192 -m 1024 -p 18520"
sleep 0.3
rxe_ctl $pb "ibv-traffic -d rxe0 -g 1 -n $tn -s 8192 -m 1024 -p 18520 10.0.0.241" 90 >"$RXE_OUT/traffic.client" 2>&1 || true
rxe_fg $pa tr 90 >"$RXE_OUT/traffic.server" 2>&1 || true
for f in client server; do
  grep -q "^ibv-traffic: PASS ops $tn .* bad_atomic 0 errors 0 peer PASS" "$RXE_OUT/traffic.$f" ||
    { cat "$RXE_OUT/traffic.$f"; echo "FAIL: ibv-traffic $f did not verify rxe <-> rxe"; exit 1; }
done
echo "ibv-traffic rxe <-> rxe: $(grep '^ibv-traffic: PASS' "$RXE_OUT/traffic.client" | cut -d' ' -f3-)"

# The VM must not have logged an rxe error.
rxe_ctl $pa "dmesg | grep -i rxe" | tee "$RXE_OUT/dmesg-a.out"
if grep -qiE 'error|fail|warn' "$RXE_OUT/dmesg-a.out"; then echo "FAIL: rxe complained"; exit 1; fi

# Every RoCE frame decodes, none malformed.  4 KiB at rxe's 1024-byte path
# MTU is SEND FIRST, MIDDLE, MIDDLE, LAST (BTH opcodes 0, 1, 1, 2; IBA
# 9.2.1): at least one SEND LAST per message and direction.
rxe_ctl $pa "poweroff -f" 5 >/dev/null 2>&1 || true
mnic_wait_pid "$RXE_PID_a" 20
rxe_pcap_check "$RXE_OUT/a.pcap" || { echo "FAIL: undecodable RoCE frames in $RXE_OUT/a.pcap"; exit 1; }
sends=$(tshark -r "$RXE_OUT/a.pcap" -Y 'infiniband.bth.opcode == 2' 2>/dev/null | wc -l)
[ "$sends" -ge $((2 * n)) ] || { echo "FAIL: only $sends RC SEND LAST frames in the capture"; exit 1; }
echo "PASS rxe selfcheck: $n x 4096 B both ways, $RXE_PCAP_FRAMES RoCEv2 frames decoded, 0 malformed"
