#!/usr/bin/env bash
# Migration cost as MigrOS plots it (its Figures 9-11), run by bench/bench.sh
# (or alone: bash bench/migrate.sh).  One "name: value unit" line each on
# stdout, samples on stderr:
#   migrate_ms_qps_{1,16,64,256} POSIX NICs, median of 5: freeze to resumed
#                                  as `mnicctl migrate --pid` reports it
#                                  (epoch_resumed_ms - epoch_freeze_ms: SIGSTOP,
#                                  DUMP_CONTEXT, copy of the process's NIC
#                                  memory, RESTORE_OBJECT(IMAGE), RESUME_CONTEXT)
#   migrate_nic_ms_qps_{...}       the NIC's part of it: checkpoint + restore +
#                                  resume (without the memory copy, which is
#                                  the whole user area: the same for every N)
#   dump_bytes_qps_{...}           the dump image of that context
#   migrate_ms_qps_16_a15, migrate_nic_ms_qps_16_a15, dump_bytes_qps_16_a15
#                                  the same on three QEMU A15 NICs
# How: switch + NICs A, B, C; mnic-traffic (verified RC traffic, every op
# type) between A and B on min(N, 64) QPs (its MAX_QPS is 64); for N > 64
# the other N - 64 QPs are idle QPs made on B with `mnicctl create qp`
# (RESET state, 16-entry rings) before the traffic starts: they are in B's
# context and in the image like any QP.  After 1 s, `mnicctl --json migrate
# --from B --to C --pid <client>`; the run counts only if both sides PASS.
# POSIX NICs get a 64 MiB BAR (64 active QPs need 18 MB of user area), the
# A15 NICs their board's 16 MiB.
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/bench/migrate; rm -rf "$out"; mkdir -p "$out"
M=$MNIC_ROOT/build/host/hostdrv/mnicctl
T=$MNIC_ROOT/build/host/hostdrv/mnic-traffic
# Keyed: unkeyed RESUMEs are refused unless MIG_CONFIG allows them.
KEY=000102030405060708090a0b0c0d0e0f
for f in "$M" "$T" "$MNIC_ROOT/build/posix/mnic-fw"; do
  [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix all hostdrv"
done
SIZES=${BENCH_MIG_QPS:-"1 16 64 256"}
RUNS=${BENCH_MIG_RUNS:-5}
log() { echo "bench: $*" >&2; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
jget() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print($2)" "$1"; }

# one_run BOARD N DIR: writes "migrate_ms nic_ms image_bytes" to DIR/result
one_run() {
  local board=$1 n=$2 d=$3 i=0 nic active idle port ta tb ra rb
  rm -rf "$d"; mkdir -p "$d"
  mnic_switch_start "$d/sw"
  for nic in a b c; do
    i=$((i + 1))
    if [ "$board" = posix ]; then
      "$MNIC_ROOT/build/posix/mnic-fw" --name "mb-$nic" --vde "$d/sw" --mac "52:54:00:6e:00:0$i" \
        --bar "$d/$nic.bar" --bar-size 64M -- run db_min_us=20 db_max_us=1000 >"$d/nic-$nic.log" 2>&1 &
    else
      "$MNIC_ROOT/qemu-board/nic.sh" --board "$board" --name "mb-$nic" --mac "52:54:00:6e:00:0$i" \
        --switch "$d/sw" --bar "$d/$nic.bar" -- run db_min_us=20 db_max_us=1000 >"$d/nic-$nic.log" 2>&1 &
    fi
    mnic_track $!
  done
  for nic in a b c; do
    mnic_wait_line "$d/nic-$nic.log" "^MNIC READY" 60 "" ||
      { log "NIC $nic not READY: $(tail -1 "$d/nic-$nic.log") (see $d)"; mnic_cleanup; return 1; }
  done
  # at most 64 busy QPs (mnic-traffic's limit); the rest of the context's
  # n QPs idle in RESET, in the same process's context (the one that moves)
  active=$(( n < 64 ? n : 64 )); idle=$(( n - active ))
  port=$((23000 + RANDOM % 3000))
  "$T" -d "$d/a.bar" -p $port -q $active -D 3 -t 120 -k $KEY >"$d/traffic-a.log" 2>&1 &
  ta=$!; mnic_track $ta
  "$T" -d "$d/b.bar" -p $port -q $active -I $idle -D 3 -t 120 -k $KEY -N "$d/notify" 127.0.0.1 >"$d/traffic-b.log" 2>&1 &
  tb=$!; mnic_track $tb
  mnic_wait_line "$d/traffic-b.log" "connected" 60 $tb || mnic_die "traffic did not connect (see $d)"
  sleep 1
  "$M" --json migrate --from "$d/b.bar" --to "$d/c.bar" --pid $tb --notify "$d/notify" \
    >"$d/migrate.json" 2>"$d/migrate.log" || mnic_die "mnicctl migrate failed (see $d/migrate.log)"
  mnic_wait_pid $ta 150; ra=$MNIC_RC
  mnic_wait_pid $tb 150; rb=$MNIC_RC
  if ! { [ "$ra" = 0 ] && [ "$rb" = 0 ] && grep -q "^TRAFFIC PASS .*migrations=1 " "$d/traffic-b.log"; }; then
    log "$board $n QPs: the migrated traffic did not PASS: $(grep -h 'error completion' "$d"/traffic-*.log | head -1) (see $d)"
    for nic in a c; do   # for whoever looks into it
      "$M" -d "$d/$nic.bar" counters --engine 2>&1 | awk '$2 != 0' >"$d/counters-$nic.txt" || true
      "$M" -d "$d/$nic.bar" --json qp list >"$d/qps-$nic.json" 2>&1 || true
    done
    mnic_cleanup
    return 1
  fi
  [ "$(jget "$d/migrate.json" "m['objects']['QP']['count']")" = "$n" ] ||
    mnic_die "the image of $d holds $(jget "$d/migrate.json" "m['objects']['QP']['count']") QPs, not $n"
  mnic_cleanup   # this run's NICs and switch
  rm -f "$d"/*.bar   # 64 MiB each, written through: a passing run keeps only its logs
  jget "$d/migrate.json" \
    "'%.3f %.3f %d' % (m['epoch_resumed_ms'] - m['epoch_freeze_ms'], m['checkpoint_ms'] + m['restore_ms'] + m['resume_ms'], m['image_bytes'])" \
    >"$d/result"
}

# A sample counts only if the migrated traffic verified everything; a run
# that did not is logged and retried (at most RUNS extra runs per figure);
# with fewer than RUNS good samples the figure is printed from those and
# the script exits non-zero at the end.
bad=0
series() {   # board n suffix
  local board=$1 n=$2 sfx=$3 r=0 tries=0 ms=() nic=() img=() a b c
  while [ ${#ms[@]} -lt "$RUNS" ] && [ $tries -lt $((2 * RUNS)) ]; do
    tries=$((tries + 1)); r=$((r + 1))
    one_run "$board" "$n" "$out/$board-$n-$r" || continue
    read -r a b c <"$out/$board-$n-$r/result"
    ms+=("$a"); nic+=("$b"); img+=("$c")
  done
  [ ${#ms[@]} = "$RUNS" ] || { bad=1; log "migrate_ms_qps_$n$sfx: only ${#ms[@]} of $tries runs PASSed"; }
  [ ${#ms[@]} -gt 0 ] || return 0
  log "migrate_ms_qps_$n$sfx samples: ${ms[*]} (NIC part: ${nic[*]}; image bytes: ${img[*]})"
  echo "migrate_ms_qps_$n$sfx: $(printf '%s\n' "${ms[@]}" | median) ms"
  echo "migrate_nic_ms_qps_$n$sfx: $(printf '%s\n' "${nic[@]}" | median) ms"
  echo "dump_bytes_qps_$n$sfx: $(printf '%s\n' "${img[@]}" | median) bytes"
}

for n in $SIZES; do series posix "$n" ""; done
if [ "${BENCH_MIG_A15:-1}" = 1 ]; then series qemu-virt-a15 16 _a15; fi
[ $bad = 0 ] || mnic_die "bench/migrate.sh: some migrated runs did not verify (logs in $out)"
