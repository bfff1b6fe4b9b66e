#!/usr/bin/env bash
# Loss recovery under impairment (issue 18 item 5), run by bench/bench.sh
# (or alone: bash bench/impaired.sh).  Two POSIX NICs through the switch,
# each impairing its port with rc_posix_impaired's spec (5 % drop, 1 %
# duplicate, 5 % reorder, 0.1 % corrupt; both directions), verified RC
# traffic (firmware/rcx.c: every opcode, log-uniform sizes up to 64 KiB,
# MTU 1024), 8 QPs.  One "name: value unit" line each on stdout:
#   impaired_msg_rate           verified messages/s each way (the slower NIC)
#   impaired_timeouts_per_loss  retransmit timeouts of both NICs over the
#                               frames both impairments dropped
# plus, on stderr, how the two engines recovered (their recovery counters).
# The issue's run is 100,000 messages each way; the bench sends
# BENCH_IMPAIRED_MSGS per QP (default 1,000: 8,000 each way) so that it
# stays short; the rates are per second and the ratio per loss either way.
# Environment: BENCH_IMPAIRED_MSGS, BENCH_IMPAIRED_OUT (work folder),
# BENCH_IMPAIRED_RCX_ARGS (more rcx keys, e.g. ack_coalesce=0).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=${BENCH_IMPAIRED_OUT:-$MNIC_ROOT/build/bench/impaired}; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
[ -x "$fw" ] || mnic_die "$fw missing: run make BOARD=posix"
msgs=${BENCH_IMPAIRED_MSGS:-1000}
qps=8
spec="drop=0.05,dup=0.01,reorder=0.05,corrupt=0.001"

mnic_switch_start "$out/switch"
pids=()
for i in 1 2; do
  "$fw" --name imp$i --vde "$out/switch" --mac 52:54:00:42:00:0$i --bar "$out/n$i.bar" \
    --bar-size 64M --impair "$spec,seed=$((i * 101))" \
    -- rcx peer=52:54:00:42:00:0$((3 - i)) qps=$qps msgs="$msgs" timeout_ms=1200000 \
    ${BENCH_IMPAIRED_RCX_ARGS:-} \
    >"$out/n$i.log" 2>&1 &
  pids+=($!); mnic_track $!
done
for i in 0 1; do
  mnic_wait_pid "${pids[$i]}" 1300
  [ "$MNIC_RC" = 0 ] || { tail -n 20 "$out/n$((i + 1)).log" >&2; mnic_die "impaired pair failed (see $out)"; }
done
for i in 1 2; do
  grep -q "^RCX PASS qps=$qps msgs=$msgs ops=$((qps * msgs)) " "$out/n$i.log" \
    || mnic_die "nic$i: not every operation completed (see $out/n$i.log)"
done

rate=$(grep -h '^RCX PASS' "$out"/n?.log | sed 's/.*msg_rate=\([0-9]*\).*/\1/' | sort -n | head -1)
timeouts=$(grep -h '^RCX PASS' "$out"/n?.log | sed 's/.* timeouts=\([0-9]*\).*/\1/' | awk '{s += $1} END {print s}')
dropped=$(grep -h '^posix: .* impair [rt]x: ' "$out"/n?.log | sed 's/.* dropped=\([0-9]*\).*/\1/' \
  | awk '{s += $1} END {print s}')
[ "${dropped:-0}" -gt 0 ] || mnic_die "the impairment dropped nothing (see $out)"
for i in 1 2; do
  echo "nic$i: $(grep -h '^RCX PASS' "$out/n$i.log" | cut -d' ' -f8-)" >&2
  grep -h '^RCX COUNTER \(comp_\|req_retransmits\|req_head_repeats\|resp_out_of_seq\|resp_seq_nak\)' "$out/n$i.log" \
    | sed 's/^RCX COUNTER /  /' | tr '\n' ' ' >&2
  echo >&2
done
echo "frames dropped by the impairments: $dropped, retransmit timeouts: $timeouts" >&2
echo "impaired_msg_rate: $rate messages/s"
echo "impaired_timeouts_per_loss: $(awk -v t="$timeouts" -v d="$dropped" 'BEGIN {printf "%.4f", t / d}') timeouts/loss"
