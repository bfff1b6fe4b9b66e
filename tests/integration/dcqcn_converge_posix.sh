#!/usr/bin/env bash
# bench/dcqcn_converge.sh (make bench's dcqcn_converge_ms) works here, in a
# short run (one run per mode, 3 s of two flows, 100 ms windows): both
# figures and their _off references are printed with sane values, every
# flow's traffic verified (mnic-traffic PASS, 4 clients and 4 servers), and
# the runs did what they claim: with DCQCN on, the switch marked C's queue,
# C sent CNPs and A and B cut their rates on them; with it off (mnicctl
# dcqcn set enable=0 on A and B), C still sent CNPs for the marks but
# neither A nor B cut its rate.  Then one round of bench/fabric.sh
# --dcqcn-ab (1 MiB WRITEs with DCQCN on and off on an ECN-marking
# mnic-switch): both modes' figures, every run verified.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/dcqcn-converge; rm -rf "$out"; mkdir -p "$out"
DCQCN_RUNS=1 DCQCN_LEAD_S=1 DCQCN_RUN_S=3 DCQCN_WINDOW_MS=100 BENCH_DCQCN_OUT=$out \
  bash "$MNIC_ROOT/bench/dcqcn_converge.sh" >"$out/figures.txt" 2>"$out/bench.log" ||
  { tail -n 30 "$out/bench.log"; mnic_die "bench/dcqcn_converge.sh failed"; }
cat "$out/figures.txt"; grep "^bench:" "$out/bench.log" || true
val() { sed -n "s/^$1: \([-0-9.]*\) .*/\1/p" "$out/figures.txt"; }
for s in "" _off; do
  v=$(val dcqcn_converge_ms$s)
  awk -v v="$v" 'BEGIN { exit !(v != "" && (v == -1 || (v > 0 && v <= 3000))) }' ||
    mnic_die "dcqcn_converge_ms$s: '$v', want -1 or 0 < ms <= 3000 (the run)"
  v=$(val dcqcn_fair_window_frac$s)
  awk -v v="$v" 'BEGIN { exit !(v != "" && v >= 0 && v <= 1) }' ||
    mnic_die "dcqcn_fair_window_frac$s: '$v', want 0..1"
  v=$(val dcqcn_bottleneck_drops$s)
  [[ $v =~ ^[0-9]+$ ]] || mnic_die "dcqcn_bottleneck_drops$s: '$v', want a count"
done
n=$(grep -l "^TRAFFIC PASS .* lost=0 dup=0 ooo=0 bad=0 errors=0 " "$out"/{on,off}-1/{client,server}?.log | wc -l)
[ "$n" = 8 ] || mnic_die "$n of 8 mnic-traffic runs verified everything"
ctr() { awk -v k="$2" '$1 == k { print $2 }' "$out/$1"; }
for m in on off; do
  marked=$(python3 -c 'import json,sys; print(sum(p["ecn_marked"] for p in json.load(open(sys.argv[1]))["ports"]))' \
    "$out/$m-1/switch.stats.json")
  cnp=$(ctr $m-1/counters-C.txt cnp_sent)
  echo "$m: switch ecn_marked=$marked, C cnp_sent=$cnp, rate_cuts A=$(ctr $m-1/counters-A.txt rate_cuts)" \
       "B=$(ctr $m-1/counters-B.txt rate_cuts), cnp_received A=$(ctr $m-1/counters-A.txt cnp_received)" \
       "B=$(ctr $m-1/counters-B.txt cnp_received)"
  [ "${marked:-0}" -gt 0 ] && [ "${cnp:-0}" -gt 0 ] || mnic_die "$m: no congestion signalled (marks $marked, CNPs $cnp)"
  for n in A B; do
    cuts=$(ctr $m-1/counters-$n.txt rate_cuts); got=$(ctr $m-1/counters-$n.txt cnp_received)
    if [ $m = on ]; then
      [ "${got:-0}" -gt 0 ] && [ "${cuts:-0}" -gt 0 ] || mnic_die "on: $n got ${got:-0} CNPs, cut ${cuts:-0} times"
    else
      [ "${cuts:-1}" = 0 ] || mnic_die "off: $n cut its rate ${cuts} times with DCQCN disabled"
    fi
  done
done
# bench/fabric.sh --dcqcn-ab: one round of the on/off A/B, both modes'
# figures there and sane (a mode whose run failed says so: -1 and a failed
# run counted, with its RCX FAIL line in the log; a run that passed
# verified every message).
BENCH_FABRIC_OUT=$out/fabric bash "$MNIC_ROOT/bench/fabric.sh" --dcqcn-ab 1 >"$out/ab.txt" 2>"$out/ab.log" ||
  { tail -n 20 "$out/ab.log"; mnic_die "bench/fabric.sh --dcqcn-ab failed"; }
cat "$out/ab.txt"; grep "^dcqcn-ab" "$out/ab.log" || true
for m in on off; do
  en=1; [ $m = off ] && en=0
  g=$(sed -n "s/^goodput_1MiB_gbps_ecn_dcqcn_$m: \([-0-9.]*\) .*/\1/p" "$out/ab.txt")
  q=$(sed -n "s/^switch_queue_drop_frac_ecn_dcqcn_$m: \([-0-9.]*\) .*/\1/p" "$out/ab.txt")
  f=$(sed -n "s/^dcqcn_ab_failed_runs_$m: \([0-9]*\) .*/\1/p" "$out/ab.txt")
  case $f in
    0) awk -v g="$g" -v q="$q" 'BEGIN { exit !(g > 0 && q != "" && q >= 0 && q < 1) }' ||
         mnic_die "dcqcn $m: goodput '$g', drop fraction '$q'"
       [ "$(grep -l "^RCX PASS qps=2 msgs=100 " "$out"/fabric/dcqcn-ab/n?-1-$en.log | wc -l)" = 2 ] ||
         mnic_die "dcqcn $m: a run passed without both NICs verifying every message" ;;
    1) [ "$g" = -1 ] && [ "$q" = -1 ] || mnic_die "dcqcn $m: the run failed but the figures say '$g' '$q'"
       grep -q "^RCX FAIL" "$out"/fabric/dcqcn-ab/n?-1-$en.log || mnic_die "dcqcn $m: failed without RCX FAIL" ;;
    *) mnic_die "dcqcn_ab_failed_runs_$m: '$f', want 0 or 1" ;;
  esac
done
echo "dcqcn_converge_posix: PASS"
