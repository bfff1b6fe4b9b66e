#!/usr/bin/env bash
# Doorbells and interrupts on POSIX NICs (issue 15), run by bench/bench.sh
# (or alone: bash bench/doorbell.sh).  One "name: value unit" line each on
# stdout, details on stderr:
#   doorbell_to_wire_us_posix   median host doorbell -> first frame on the
#                               wire: mnic-db-bench (bench/doorbell_bench.c)
#                               posts one 64-byte SEND every 3 ms and finds it
#                               in the NIC's own capture (MNIC_PCAP stamps a
#                               frame as the NIC hands it to the switch)
#   cmd_rtt_us_posix            median command round trip (QUERY_DEVICE)
#   *_posix_nochannel           the in-run peer: the same on NICs started with
#                               --doorbell off (the firmware polls the BAR on
#                               its adaptive timer, as before issue 15)
#   idle_cpu_pct_posix, idle_cpu_pct_posix_nochannel   host CPU of an idle
#                               NIC over BENCH_IDLE_S s (default 5), percent
#                               of one core (utime+stime from /proc)
#   doorbell_to_wire_us_a15     the same from a QEMU A15 NIC whose BAR is an
#                               ivshmem-doorbell (MSI-X -> GICv2m), found in
#                               the capture of its POSIX peer B: QEMU's
#                               filter-dump stamps frames with the guest's
#                               virtual clock, so the A15's own capture cannot
#                               be compared with the host's; this adds one
#                               switch hop, which doorbell_to_peer_us_posix
#                               (A -> B found in B's capture) shows for POSIX
#   cmd_rtt_us_a15              its command round trip
#   *_a15_plain                 the in-run peer: an A15 NIC with an
#                               ivshmem-plain BAR (nic.sh --bar-kind plain),
#                               polled on the adaptive timer
#   idle_cpu_pct_a15, idle_cpu_pct_a15_plain   the QEMU process of an idle
#                               A15 NIC, both kinds, same seconds
# Every NIC runs the firmware's default poll (db_min_us=500 db_max_us=10000).
# Environment: BENCH_DB_TOOL (default the plain build's mnic-db-bench),
# BENCH_DB_N (samples, default 200), BENCH_DB_OUT (work folder).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=${BENCH_DB_OUT:-$MNIC_ROOT/build/bench/doorbell}; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tool=${BENCH_DB_TOOL:-$MNIC_ROOT/build/host/hostdrv/mnic-db-bench}
for f in "$fw" "$tool"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix all hostdrv"; done
n=${BENCH_DB_N:-200}
idle_s=${BENCH_IDLE_S:-5}

mnic_switch_start "$out/switch"
start_nic() {   # name mac platform-args...  (sets NIC_PID)
  local name=$1 mac=$2; shift 2
  MNIC_PCAP=$out/$name.pcap "$fw" --name "db-$name" --vde "$out/switch" --mac "$mac" \
    --bar "$out/$name.bar" "$@" -- run >"$out/$name.log" 2>&1 &
  NIC_PID=$!; mnic_track $NIC_PID
  mnic_wait_line "$out/$name.log" "^MNIC READY" 20 $NIC_PID || mnic_die "NIC $name not READY (see $out/$name.log)"
}
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
start_nic a 52:54:00:7b:00:01; pa=$NIC_PID
start_nic b 52:54:00:7b:00:02
start_nic c 52:54:00:7b:00:03 --doorbell off; pc=$NIC_PID
start_nic d 52:54:00:7b:00:04 --doorbell off
start_a15() {   # name mac bar-kind  (sets NIC_PID)
  "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name "db-$1" --mac "$2" --switch "$out/switch" \
    --bar "$out/$1.bar" --bar-kind "$3" -- run >"$out/$1.log" 2>&1 &
  NIC_PID=$!; mnic_track $NIC_PID
  mnic_wait_line "$out/$1.log" "^MNIC READY" 60 $NIC_PID || mnic_die "NIC $1 not READY (see $out/$1.log)"
}
start_a15 e 52:54:00:7b:00:05 doorbell; pe=$NIC_PID
start_a15 f 52:54:00:7b:00:06 plain; pf=$NIC_PID
# both idle NICs over the same seconds
sleep 1
a0=$(cpu_ticks $pa); c0=$(cpu_ticks $pc); e0=$(cpu_ticks $pe); f0=$(cpu_ticks $pf)
sleep "$idle_s"
a1=$(cpu_ticks $pa); c1=$(cpu_ticks $pc); e1=$(cpu_ticks $pe); f1=$(cpu_ticks $pf)
pct() { awk -v d=$(($2 - $1)) -v hz="$(getconf CLK_TCK)" -v s="$idle_s" 'BEGIN { printf "%.1f", d * 100 / hz / s }'; }
echo "idle_cpu_pct_posix: $(pct $a0 $a1) %"
echo "idle_cpu_pct_posix_nochannel: $(pct $c0 $c1) %"
echo "idle_cpu_pct_a15: $(pct $e0 $e1) %"
echo "idle_cpu_pct_a15_plain: $(pct $f0 $f1) %"
"$tool" -n "$n" -t posix "$out/a.bar" "$out/b.bar" "$out/a.pcap"
"$tool" -n "$n" -t posix_nochannel "$out/c.bar" "$out/d.bar" "$out/c.pcap"
# the same measuring point as the A15's: B's capture (cmd_rtt is A's again)
"$tool" -n "$n" -t posix "$out/a.bar" "$out/b.bar" "$out/b.pcap" |
  sed -n 's/^doorbell_to_wire_us_posix:/doorbell_to_peer_us_posix:/p'
"$tool" -n "$n" -t a15 "$out/e.bar" "$out/b.bar" "$out/b.pcap"
"$tool" -n "$n" -t a15_plain "$out/f.bar" "$out/b.bar" "$out/b.pcap"
