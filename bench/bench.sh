#!/usr/bin/env bash
# make bench: one "name: value unit" line per figure on stdout; progress and
# details on stderr.  Figures (foundation):
#   boot_ms_<board>      QEMU start -> "MNIC READY" on the console, median of 5
#   text/data/bss_bytes_<board>   section sizes of the firmware ELF
#   idle_cpu_pct_<board> host CPU used by an idle NIC (run mode) over 10 s,
#                        percent of one core (utime+stime from /proc)
#   raw_frame_rate       verified rawx frames/s between two A15 NICs through
#                        the switch (both directions, 5,000 frames each way)
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/bench; rm -rf "$out"; mkdir -p "$out"
BOARDS=${BENCH_BOARDS:-"qemu-virt-a15 qemu-virt-a72"}
IDLE_S=${BENCH_IDLE_S:-10}
log() { echo "bench: $*" >&2; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

mnic_switch_start "$out/switch"

boot_once() {   # board -> ms to READY
  local board=$1 t0 t1 pid f=$out/boot.log
  : > "$f"
  t0=$(date +%s%N)
  "$MNIC_ROOT/qemu-board/nic.sh" --board "$board" --name bench-boot --mac 52:54:00:40:00:01 \
    --switch "$out/switch" --bar "$out/boot.bar" -- run >"$f" 2>&1 &
  pid=$!; mnic_track $pid
  while ! grep -q "^MNIC READY" "$f" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || mnic_die "$board NIC exited before READY (see $f)"
    [ $(( $(date +%s%N) - t0 )) -lt 30000000000 ] || mnic_die "$board NIC not READY in 30 s"
    sleep 0.002
  done
  t1=$(date +%s%N)
  kill $pid; wait $pid 2>/dev/null || true
  echo $(( (t1 - t0) / 1000000 ))
}

idle_pct() {   # board -> percent of one core
  local board=$1 pid f=$out/idle-$1.log a b hz
  hz=$(getconf CLK_TCK)
  "$MNIC_ROOT/qemu-board/nic.sh" --board "$board" --name bench-idle --mac 52:54:00:40:00:02 \
    --switch "$out/switch" --bar "$out/idle.bar" -- run >"$f" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_line "$f" "^MNIC READY" 30 $pid || mnic_die "$board idle NIC not READY (see $f)"
  sleep 1
  a=$(awk '{print $14 + $15}' /proc/$pid/stat)
  sleep "$IDLE_S"
  b=$(awk '{print $14 + $15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  awk -v d=$((b - a)) -v hz="$hz" -v s="$IDLE_S" 'BEGIN { printf "%.1f", d * 100 / hz / s }'
}

for board in $BOARDS; do
  samples=()
  for i in 1 2 3 4 5; do samples+=("$(boot_once "$board")"); done
  log "boot_ms_$board samples: ${samples[*]}"
  echo "boot_ms_$board: $(printf '%s\n' "${samples[@]}" | median) ms"
  read -r text data bss _ < <(tail -1 "$MNIC_ROOT/build/$board/size.txt")
  echo "text_bytes_$board: $text bytes"
  echo "data_bytes_$board: $data bytes"
  echo "bss_bytes_$board: $bss bytes"
  echo "idle_cpu_pct_$board: $(idle_pct "$board") %"
done

# Raw frame rate: two A15 NICs, 5,000 verified frames each way.
if "$MNIC_ROOT/qemu-board/topology.sh" "$MNIC_ROOT/qemu-board/topologies/two-a15.topo" "$out/rawx" \
     --timeout 120 -- rawx peers=@PEERS@ count=5000 linger_ms=500 >&2; then
  grep -h "^RAWX PASS" "$out/rawx"/*.log >&2
  rate=$(grep -h "^RAWX PASS" "$out/rawx"/*.log | sed 's/.*rate_fps=\([0-9]*\).*/\1/' | sort -n | head -1)
  echo "raw_frame_rate: $rate frames/s"
else
  mnic_die "rawx between two A15 NICs failed (logs in $out/rawx)"
fi
