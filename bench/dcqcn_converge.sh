#!/usr/bin/env bash
# dcqcn_converge_ms (issue 18): two flows sharing one bottleneck under DCQCN,
# how long until they share it fairly.
#
# Fabric: three POSIX NICs on mnic-switch (fabric/), which marks CE on the
# egress queue towards C (--impair C:ecn_queue=K, K = DCQCN_K frames,
# default 8; queue --queue DCQCN_QUEUE, default 256).  C serves two
# mnic-traffic contexts (hostdrv/tools/mnic-traffic.c: verified SEND,
# WRITE_IMM, READ and atomics, every byte checked); flow 1 is A's client,
# flow 2 B's, both towards C, so A->C and B->C meet in the switch's queue
# for C's port, a link of DCQCN_RATE_MBPS (default 100 Mbit/s: mnic-switch
# rate_mbps=, below what the POSIX NICs carry, so the bottleneck is the
# link and not C's CPU; 0 = unshaped, the old fabric, where it is how fast
# C takes frames).  A and B run DCQCN with line_rate_mbps = DCQCN_LINE_MBPS
# (default 1000, what dcqcn_cnp_posix.sh uses: the POSIX NICs carry a few
# hundred Mbit/s, so 10 Gbit/s would leave DCQCN nothing to regulate) and
# every other parameter at its default (rocev2/cc.c), or as DCQCN_SET gives
# them (mnicctl dcqcn set KEY=VALUE..., e.g. "rai_mbps=2 rate_timer_us=1000":
# the defaults are the DCQCN paper's, for 40 Gbit/s links and 10 us RTTs).
#
# Flow 1 runs alone for DCQCN_LEAD_S (default 2 s), then flow 2 starts; both
# run for DCQCN_RUN_S (default 8 s) after flow 2's start (DCQCN_QPS QPs
# each, default 4, messages up to DCQCN_SIZE bytes, default 65536, MTU
# 4096).  Each client's --timeline gives its own sending rate (tx_bytes_s:
# the bytes of its SEND and WRITE_IMM messages completed, per window) in
# windows of DCQCN_WINDOW_MS (default 200 ms), stamped in wall-clock
# (epoch) time, so the two flows' windows can be matched.
#
# Definition: t0 = the start of flow 2's first window.  A window of flow 2
# is fair when it and flow 1's window that overlaps it most both lie within
# 10 % of their mean (|r1 - r2| <= 0.1 (r1 + r2), both > 0).
#   dcqcn_converge_ms       the end of the first window of the first run of
#                           3 consecutive fair windows, minus t0; -1 = "did
#                           not converge" (no such run before flow 2 ended).
#                           Median of DCQCN_RUNS runs (default 5; a run
#                           that did not converge counts as +infinity, so
#                           the figure is -1 when the median run did not)
#   dcqcn_fair_window_frac  the fraction of flow 2's windows that are fair
#                           (median of the runs): how well the share holds
#   dcqcn_bottleneck_drops  frames the switch dropped at the bottleneck, its
#                           queue for C full (median of the runs)
# and both again with suffix _off: DCQCN disabled on A and B (mnicctl dcqcn
# set enable=0), the reference: the fabric's own fairness (C takes both
# flows' frames in turn).  stderr (and DIR/<on|off>-N/) has per run each
# flow's mean rate after convergence, the switch's marks and queue drops,
# C's CNPs and A's + B's rate cuts.
#
#   bench/dcqcn_converge.sh            the figures, one "name: value unit" line each
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=${BENCH_DCQCN_OUT:-$MNIC_ROOT/build/bench/dcqcn}
fw=$MNIC_ROOT/build/posix/mnic-fw
M=$MNIC_ROOT/build/host/hostdrv/mnicctl
T=$MNIC_ROOT/build/host/hostdrv/mnic-traffic
for f in "$fw" "$M" "$T" "$MNIC_ROOT/build/host/fabric/mnic-switch"; do
  [ -x "$f" ] || mnic_die "$f missing: make BOARD=posix all hostdrv mnic-switch"
done
K=${DCQCN_K:-8} QUEUE=${DCQCN_QUEUE:-256} LINE=${DCQCN_LINE_MBPS:-1000} RATE=${DCQCN_RATE_MBPS:-100}
LEAD=${DCQCN_LEAD_S:-2} RUN=${DCQCN_RUN_S:-8} WIN=${DCQCN_WINDOW_MS:-200}
RUNS=${DCQCN_RUNS:-5} QPS=${DCQCN_QPS:-4} SIZE=${DCQCN_SIZE:-65536}
macA=52:54:00:74:00:01 macB=52:54:00:74:00:02 macC=52:54:00:74:00:03

log() { echo "bench: $*" >&2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# one_run DIR ENABLE: writes DIR/result, "converge_ms share1_mbps share2_mbps marked"
one_run() {
  local d=$1 en=$2 n pids=() port1 port2 s1 s2 c1 c2 i
  rm -rf "$d"; mkdir -p "$d"
  local shape=; [ "$RATE" = 0 ] || shape=,rate_mbps=$RATE
  MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue $QUEUE --impair $macC:ecn_queue=$K$shape" mnic_switch_start "$d/switch"
  pids+=("$MNIC_SWITCH_PID")
  for n in A B C; do
    local mac=macC; [ $n = A ] && mac=macA; [ $n = B ] && mac=macB
    "$fw" --name "$n" --vde "$d/switch" --mac "${!mac}" --bar "$d/$n.bar" --bar-size $([ $n = C ] && echo 256M || echo 64M) \
      -- run db_min_us=20 db_max_us=1000 >"$d/$n.log" 2>&1 &
    pids+=($!); mnic_track $!
    mnic_wait_line "$d/$n.log" "^MNIC READY" 20 $! || { cat "$d/$n.log"; mnic_die "NIC $n not ready"; }
  done
  for n in A B; do
    # shellcheck disable=SC2086
    "$M" -d "$d/$n.bar" dcqcn set line_rate_mbps="$LINE" enable="$en" ${DCQCN_SET:-} >"$d/dcqcn-$n.txt" ||
      mnic_die "mnicctl dcqcn set on $n failed"
  done
  port1=$((20000 + RANDOM % 5000)); port2=$((port1 + 1))
  for i in 1 2; do
    local p=port$i
    "$T" -d "$d/C.bar" -p "${!p}" -q "$QPS" -s "$SIZE" -m 5 -t 60 -D $((RUN + (i == 1 ? LEAD : 0))) \
      >"$d/server$i.log" 2>&1 &
    pids+=($!); mnic_track $!
  done
  sleep 0.3
  "$T" -d "$d/A.bar" -p "$port1" -q "$QPS" -s "$SIZE" -m 5 -t 60 -D $((RUN + LEAD)) -i "$WIN" \
    -T "$d/flow1.csv" 127.0.0.1 >"$d/client1.log" 2>&1 &
  c1=$!; mnic_track $c1
  sleep "$LEAD"
  "$T" -d "$d/B.bar" -p "$port2" -q "$QPS" -s "$SIZE" -m 5 -t 60 -D "$RUN" -i "$WIN" \
    -T "$d/flow2.csv" 127.0.0.1 >"$d/client2.log" 2>&1 &
  c2=$!; mnic_track $c2
  mnic_wait_pid $c1 $((RUN + LEAD + 60)); s1=$MNIC_RC
  mnic_wait_pid $c2 $((RUN + 60)); s2=$MNIC_RC
  [ "$s1" = 0 ] && [ "$s2" = 0 ] || { tail -n 5 "$d"/client*.log "$d"/server*.log >&2; mnic_die "a flow failed (see $d)"; }
  mnic_switch_stats "$d/switch"
  for n in A B C; do "$M" -d "$d/$n.bar" counters --engine >"$d/counters-$n.txt" 2>&1 || true; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  python3 - "$d/flow1.csv" "$d/flow2.csv" "$d/switch.stats.json" "$WIN" \
    "$d/counters-A.txt" "$d/counters-B.txt" "$d/counters-C.txt" >"$d/result" <<'PY'
import csv, json, sys
f1, f2, stats, win = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def load(p):   # [(start_epoch_ms, bytes/s)]: epoch_ms stamps a window's end
    return [(float(r["epoch_ms"]) - win, float(r["tx_bytes_s"])) for r in csv.DictReader(open(p))]
a, b = load(f1), load(f2)
def overlap(s):   # flow 1's window overlapping [s, s + win) most, and by how much
    if not a:
        return 0.0, 0.0
    w = max(a, key=lambda w: min(w[0] + win, s + win) - max(w[0], s))
    return w[1], min(w[0] + win, s + win) - max(w[0], s)
t0 = b[0][0] if b else 0
fair, pairs = [], []
for s, r2 in b:
    r1, ov = overlap(s)
    pairs.append((r1, r2))
    fair.append(ov > 0 and r1 > 0 and r2 > 0 and abs(r1 - r2) <= 0.1 * (r1 + r2))
conv, first = -1, len(b)
for i in range(len(fair) - 2):
    if fair[i] and fair[i + 1] and fair[i + 2]:
        conv, first = b[i][0] + win - t0, i
        break
after = pairs[first:] if conv >= 0 else []
m1 = sum(x for x, _ in after) / len(after) * 8 / 1e6 if after else 0
m2 = sum(y for _, y in after) / len(after) * 8 / 1e6 if after else 0
frac = sum(fair) / len(fair) if fair else 0
sw = json.load(open(stats))["ports"]
marked = sum(p.get("ecn_marked", 0) for p in sw)
qdrop = sum(p.get("dropped_queue_full", 0) for p in sw)
def ctr(path, k):
    for line in open(path):
        f = line.split()
        if len(f) == 2 and f[0] == k:
            return int(f[1])
    return 0
cnp_sent = ctr(sys.argv[7], "cnp_sent")
cuts = ctr(sys.argv[5], "rate_cuts") + ctr(sys.argv[6], "rate_cuts")
print("%.0f %.3f %.1f %.1f %d %d %d %d" % (conv, frac, m1, m2, marked, qdrop, cnp_sent, cuts))
PY
}

median_conv() {   # values (-1 = not converged: +infinity) -> the median, -1 if not converged
  printf '%s\n' "$@" | awk '{ print ($1 < 0 ? 1e18 : $1) }' | sort -g |
    awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; if (m >= 1e18) print -1; else printf "%.0f\n", m }'
}

for mode in on off; do
  en=1; [ $mode = off ] && en=0
  convs=() fracs=() drops=()
  for r in $(seq 1 "$RUNS"); do
    one_run "$out/$mode-$r" $en
    read -r conv frac m1 m2 marked qdrop cnps cuts <"$out/$mode-$r/result"
    log "dcqcn $mode run $r: converge_ms=$conv fair_windows=$frac after: flow1=$m1 flow2=$m2 Mbit/s;" \
        "switch: ecn_marked=$marked dropped_queue_full=$qdrop; C cnp_sent=$cnps, A+B rate_cuts=$cuts"
    convs+=("$conv") fracs+=("$frac") drops+=("$qdrop")
  done
  sfx=; [ $mode = off ] && sfx=_off
  echo "dcqcn_converge_ms$sfx: $(median_conv "${convs[@]}") ms"
  echo "dcqcn_fair_window_frac$sfx: $(printf '%s\n' "${fracs[@]}" | median) fraction"
  echo "dcqcn_bottleneck_drops$sfx: $(printf '%s\n' "${drops[@]}" | median) frames"
done
