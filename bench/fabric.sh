#!/usr/bin/env bash
# The POSIX test fabric's limits, made explicit (issue 18 item 3), for make
# bench: the same three runs between two POSIX NICs on the default fabric,
# on a tuned one, and on the project's own switch (mnic-switch, fabric/).
#
# The vde switch and the NICs talk over unix datagram sockets; a socket's
# queue is the limit of the network namespace it was created in
# (net.unix.max_dgram_qlen, 10 on this machine), and the switch drops a
# frame when the receiving port's queue is full.  The tuned fabric runs the
# switch and both NICs in a network namespace of their own (unshare -n, as
# root) whose limit is raised to TUNED_QLEN; nothing else changes.
#
# The third run, suffix "_mnicswitch", is the default namespace with
# mnic-switch in place of vdeplug4's switch (MNIC_SWITCH=mnic): a queue of
# MNIC_SWITCH_QUEUE frames per port (default 256) instead of a silent drop
# when a port's socket is full, and counters that say where frames went.
#
# Figures, suffix "" (default fabric), "_tuned" and "_mnicswitch":
#   fabric_dgram_qlen      the namespace's net.unix.max_dgram_qlen
#   raw_frame_rate_posix   verified rawx frames/s (firmware/rawx.c; per NIC,
#                          data frames sent and received, slower NIC)
#   msg_rate_64B           64 B SENDs/s (4 QPs)
#   goodput_1MiB_gbps      1 MiB RDMA WRITE goodput (2 QPs each way)
#   goodput_frac_of_raw    goodput_1MiB over what the raw frame rate carries in
#                          4 KiB payloads (the WRITE run's MTU): per NIC, both
#                          directions, as rate_fps and goodput_mbps count
#   switch_drop_frac       frames lost in the fabric during the WRITE run:
#                          1 - (frames both NICs received) / (packets both sent)
#   msg_rate_64B_ack_each, goodput_1MiB_gbps_ack_each  the two runs again
#                          with one ACK per request (rcx ack_coalesce=0; the
#                          firmware coalesces them, rocev2_set_ack_coalesce)
# and, _mnicswitch only, that loss split by where it happened (fractions of
# the packets both NICs sent in the WRITE run, from the switch's counters):
#   fabric_loss_nic_to_switch_frac   sent by a NIC, never read by the switch
#   switch_queue_drop_frac           dropped by the switch, its queue full
#   switch_send_error_frac           dropped by the switch, a send error
#   fabric_loss_switch_to_nic_frac   sent by the switch, never received by a NIC
#   switch_queue_max                 the deepest a port's queue got (frames)
#   switch_waited_frac               frames that waited in the switch's queue
#                                    for a full socket (vdeplug4 drops these)
#
#   bench/fabric.sh              all three fabrics (FABRIC_QUICK=1: a tenth of the
#                                traffic, for tests/integration/fabric_posix.sh)
#   bench/fabric.sh --inside SUFFIX   one fabric, in the current namespace
#   bench/fabric.sh --dcqcn-ab [ROUNDS]   DCQCN on against off (not in make
#                                bench): the 1 MiB WRITE run on mnic-switch
#                                marking CE on both NICs' queues (ecn_queue=
#                                DCQCN_AB_K, default 8), rcx dcqcn=1 and
#                                dcqcn=0 alternated ROUNDS times (default 3)
#                                so that a shared host's load weighs on both
#                                alike; per mode the median of
#                                goodput_1MiB_gbps_ecn_dcqcn_{on,off} and of
#                                switch_queue_drop_frac_ecn_dcqcn_{on,off},
#                                and dcqcn_ab_failed_runs_{on,off}
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
TUNED_QLEN=${TUNED_QLEN:-512}
out=${BENCH_FABRIC_OUT:-$MNIC_ROOT/build/bench/fabric}
fw=$MNIC_ROOT/build/posix/mnic-fw
[ -x "$fw" ] || mnic_die "$fw missing: run make BOARD=posix"

if [ "${1:-}" = --dcqcn-ab ]; then
  rounds=${2:-3} k=${DCQCN_AB_K:-8}
  d=$out/dcqcn-ab; rm -rf "$d"; mkdir -p "$d"
  m1=52:54:00:41:00:01 m2=52:54:00:41:00:02
  MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue ${MNIC_SWITCH_QUEUE:-256} --impair $m1:ecn_queue=$k --impair $m2:ecn_queue=$k" \
    mnic_switch_start "$d/switch"
  for r in $(seq 1 "$rounds"); do
    for en in 1 0; do
      mnic_switch_stats "$d/switch"; cp "$d/switch.stats.json" "$d/before-$r-$en.json"
      pids=()
      for i in 1 2; do
        mi=m$i mj=m$((3 - i))
        "$fw" --vde "$d/switch" --mac "${!mi}" --bar "$d/n$i-$r-$en.bar" --bar-size 64M \
          -- rcx peer="${!mj}" qps=2 msgs=100 size=1048576 ops=write mtu=5 dcqcn=$en \
          >"$d/n$i-$r-$en.log" 2>&1 &
        pids+=($!); mnic_track $!
      done
      ok=1
      for p in "${pids[@]}"; do mnic_wait_pid "$p" 300; [ "$MNIC_RC" = 0 ] || ok=0; done
      mnic_switch_stats "$d/switch"; cp "$d/switch.stats.json" "$d/after-$r-$en.json"
      if [ $ok = 0 ]; then
        echo "$en fail" >>"$d/samples"
        echo "dcqcn-ab: round $r dcqcn=$en: FAILED: $(grep -h "^RCX FAIL\|E: rcx" "$d"/n?-$r-$en.log | head -2 | tr '\n' ' ')" >&2
        continue
      fi
      gp=$(grep -h "^RCX PASS" "$d"/n?-$r-$en.log | sed 's/.* goodput_mbps=\([0-9]*\).*/\1/' | sort -n | head -1)
      tx=$(grep -h "^RCX PASS" "$d"/n?-$r-$en.log | sed 's/.* tx_packets=\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s }')
      drops=$(python3 -c 'import json,sys
b, a = (json.load(open(f))["ports"] for f in sys.argv[1:3])
q = lambda ps: sum(p["dropped_queue_full"] for p in ps)
print(q(a) - q(b))' "$d/before-$r-$en.json" "$d/after-$r-$en.json")
      echo "$en $gp $tx $drops" >>"$d/samples"
      echo "dcqcn-ab: round $r dcqcn=$en: goodput ${gp} Mbit/s, queue drops $drops of $tx packets" >&2
    done
  done
  # A run that failed (an error completion: rcx gives up after 7 ACK
  # timeouts of 67 ms in a row) is counted and left out of the medians; -1
  # when no run of a mode passed.
  for en in 1 0; do
    m=on; [ $en = 0 ] && m=off
    awk -v e=$en '$1 == e && $2 != "fail" { print $2 }' "$d/samples" | sort -n |
      awk -v m=$m '{ v[NR] = $1 } END { printf "goodput_1MiB_gbps_ecn_dcqcn_%s: %s Gbit/s\n", m,
        NR ? sprintf("%.3f", v[int((NR + 1) / 2)] / 1000) : -1 }'
    awk -v e=$en '$1 == e && $2 != "fail" { printf "%.4f\n", $3 ? $4 / $3 : 0 }' "$d/samples" | sort -g |
      awk -v m=$m '{ v[NR] = $1 } END { printf "switch_queue_drop_frac_ecn_dcqcn_%s: %s fraction\n", m,
        NR ? v[int((NR + 1) / 2)] : -1 }'
    echo "dcqcn_ab_failed_runs_$m: $(awk -v e=$en '$1 == e && $2 == "fail"' "$d/samples" | wc -l) runs"
  done
  exit 0
fi

if [ "${1:-}" != --inside ]; then
  bash "$0" --inside ""
  MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue ${MNIC_SWITCH_QUEUE:-256}" bash "$0" --inside _mnicswitch
  if [ "$(id -u)" != 0 ]; then
    mnic_die "the tuned fabric needs root (unshare -n, a namespace's sysctl)"
  fi
  # shellcheck disable=SC2016
  unshare -n -- bash -c 'sysctl -qw net.unix.max_dgram_qlen="$1" && ip link set lo up && \
    exec bash "$2" --inside _tuned' _ "$TUNED_QLEN" "$0"
  exit 0
fi

sfx=$2
q=1; [ "${FABRIC_QUICK:-0}" = 1 ] && q=10
d=$out/fabric${sfx:-_default}; rm -rf "$d"; mkdir -p "$d"
mnic_switch_start "$d/switch"
# Two NICs run firmware-args; every line of both logs is kept.
pair() {   # name firmware-args...
  local r=$d/$1 pids=() i; shift
  mkdir -p "$r"
  for i in 1 2; do
    "$fw" --vde "$d/switch" --mac 52:54:00:41:00:0$i --bar "$r/n$i.bar" --bar-size 64M \
      -- "${@//@PEER@/52:54:00:41:00:0$((3 - i))}" >"$r/n$i.log" 2>&1 &
    pids+=($!); mnic_track $!
  done
  for i in 0 1; do
    mnic_wait_pid "${pids[$i]}" 300
    [ "$MNIC_RC" = 0 ] || mnic_die "POSIX pair $r failed (see $r)"
  done
}
field() {   # run key: the key's value on each NIC's PASS line, smallest first
  grep -h "^R[A-Z]* PASS" "$d/$1"/n*.log | sed "s/.* $2=\([0-9]*\).*/\1/" | sort -n
}

echo "fabric_dgram_qlen$sfx: $(cat /proc/sys/net/unix/max_dgram_qlen) datagrams"
pair rawx rawx peers=@PEER@ count=$((20000 / q)) linger_ms=500
raw=$(field rawx rate_fps | head -1)
echo "raw_frame_rate_posix$sfx: $raw frames/s"
pair msg64 rcx peer=@PEER@ qps=4 msgs=$((10000 / q)) size=64 ops=send mtu=5
echo "msg_rate_64B$sfx: $(field msg64 msg_rate | head -1) messages/s"
# The same with one ACK per request (the firmware coalesces ACKs, rocev2.h
# rocev2_set_ack_coalesce): the peer in the same run.
pair msg64e rcx peer=@PEER@ qps=4 msgs=$((10000 / q)) size=64 ops=send mtu=5 ack_coalesce=0
echo "msg_rate_64B_ack_each${sfx}: $(field msg64e msg_rate | head -1) messages/s"
if [ "${MNIC_SWITCH:-vde}" = mnic ]; then
  mnic_switch_stats "$d/switch"; cp "$d/switch.stats.json" "$d/before-write1m.json"
fi
pair write1m rcx peer=@PEER@ qps=2 msgs=$((100 / q)) size=1048576 ops=write mtu=5
gp=$(field write1m goodput_mbps | head -1)
echo "goodput_1MiB_gbps$sfx: $(awk -v g="$gp" 'BEGIN { printf "%.3f", g / 1000 }') Gbit/s"
echo "goodput_frac_of_raw$sfx: $(awk -v g="$gp" -v r="$raw" \
  'BEGIN { printf "%.3f", r ? g * 1e6 / (r * 4096 * 8) : 0 }') fraction"
tx=$(field write1m tx_packets | awk '{ s += $1 } END { print s + 0 }')
rx=$(field write1m rx_frames | awk '{ s += $1 } END { print s + 0 }')
echo "switch_drop_frac$sfx: $(awk -v t="$tx" -v r="$rx" 'BEGIN { printf "%.4f", t ? 1 - r / t : 0 }') fraction"
if [ "${MNIC_SWITCH:-vde}" = mnic ]; then
  mnic_switch_stats "$d/switch"
  # The WRITE run's two ports are the ones that joined after the snapshot.
  # rcx's start hellos (firmware/rcx.c: hellos=TX/RX/BAD) pass the switch
  # too, outside the engine's tx_packets and rx_frames
  hellos=$(grep -h "^RCX PASS" "$d/write1m"/n*.log | grep -o " hellos=[0-9]*/[0-9]*/[0-9]*" | cut -d= -f2)
  htx=$(echo "$hellos" | awk -F/ '{ s += $1 } END { print s + 0 }')
  hrx=$(echo "$hellos" | awk -F/ '{ s += $2 + $3 } END { print s + 0 }')
  python3 - "$d/before-write1m.json" "$d/switch.stats.json" "$tx" "$rx" "$sfx" "$htx" "$hrx" <<'PY'
import json, sys
before, after = (json.load(open(f)) for f in sys.argv[1:3])
tx, rx, sfx = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
htx, hrx = int(sys.argv[6]), int(sys.argv[7])
last = max((p["port"] for p in before["ports"]), default=0)
ports = [p for p in after["ports"] if p["port"] > last]
s = lambda k: sum(p[k] for p in ports)
frac = lambda v: "%.4f" % (v / tx if tx else 0)
print(f"fabric_loss_nic_to_switch_frac{sfx}: {frac(tx + htx - s('rx') + 2)} fraction")  # + 2 announce frames
print(f"switch_queue_drop_frac{sfx}: {frac(s('dropped_queue_full'))} fraction")
print(f"switch_send_error_frac{sfx}: {frac(s('dropped_send_error'))} fraction")
print(f"fabric_loss_switch_to_nic_frac{sfx}: {frac(s('tx') - rx - hrx)} fraction")
print(f"switch_queue_max{sfx}: {max((p['queue_max'] for p in ports), default=0)} frames")
print(f"switch_waited_frac{sfx}: {frac(s('waited'))} fraction")
PY
fi
# The WRITE run again with one ACK per request (rcx ack_coalesce=0), after
# the switch figures above, which are the first run's.
pair write1me rcx peer=@PEER@ qps=2 msgs=$((100 / q)) size=1048576 ops=write mtu=5 ack_coalesce=0
echo "goodput_1MiB_gbps_ack_each${sfx}: $(field write1me goodput_mbps | head -1 |
  awk '{ printf "%.3f", $1 / 1000 }') Gbit/s"
