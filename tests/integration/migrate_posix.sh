#!/usr/bin/env bash
# Live migration of a running RDMA application between POSIX NICs (issue 4,
# "Integration"): a switch, NICs A, B, C (and D) with seeded impairment
# (2 % drop, 1 % duplicate, 2 % reorder on every NIC), mnic-traffic between
# host A/NIC A and host B/NIC B on 8 QPs (SEND, WRITE_WITH_IMM, READ,
# FETCH_ADD, CMP_SWAP both ways, sequence number + CRC32C in every message),
# and `mnicctl migrate --pid` moving a process's NIC context and user area
# mid-stream (docs/migration-howto.md).  Scenarios, one PASS/FAIL line each:
#   single      B -> C: nothing lost, duplicated or reordered on any QP, no
#               error completion, atomics exactly once (both sides judge),
#               A's QPs now address C, C sent RESUMEs and had them ACKed;
#               meanwhile a second application (X on NIC B, Y on NIC C, each
#               a context of its own) carries traffic through the whole
#               migration: between dump and restore its context runs and its
#               QPs are neither stopped nor paused, and it PASSes (its
#               longest gap during the migration is reported)
#   host_dma    NICs with host memory (translation): B -> C onto other page
#               frames (MTTs refilled), after a refused move to a NIC without
#               host memory (aborted, B resumes); the checks of "single", and
#               every page back in both host-memory files
#   both_ends   A -> D and B -> C in the same window (peer-address
#               overrides derived by mnicctl): the same checks
#   forged      a shared migration key; while A is paused RESUMEs with a
#               wrong MAC and without a MAC are injected on the wire as if
#               from C (tests/tools/mnic-inject.py, 3 copies each: A's link
#               drops 2 %): dropped and counted (mig_resume_forged), A's
#               paused QPs stay paused at B's address; then the real
#               restore on C, and the traffic checks of "single"
#   no_restore  B is frozen and dumped, never restored: A's QPs reach the
#               pause timeout (MIG_CONFIG 1500 ms), go to ERR, every
#               outstanding WQE completes with an error, the app ends
#   abort       B dumped mid-stream, then ABORT_DUMP: B resumes in place,
#               all traffic verified
#   source_killed  B dumped, then NIC B killed: every one of A's QPs errors
#               out within the pause bound or retry_cnt 7 (finite), no hang
#   resume_replay  B -> C with every NIC captured (MNIC_PCAP); C's RESUMEs
#               taken from its capture and injected again on the wire
#               (mnic-inject.py --replay): as captured and with only their
#               Ethernet source rewritten, A ACKs them again and changes
#               nothing (mig_resume_repeats); with the payload's address
#               rewritten (ICRC recomputed), A drops them (mig_resume_forged);
#               A's QPs stay at C's address, the traffic checks of "single"
# SAN=1 runs the ASan+UBSan firmware (tools are always the ASan builds).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/migrate-posix; rm -rf "$out"; mkdir -p "$out"
if [ "${SAN:-0}" = 1 ]; then fw=$MNIC_ROOT/build/posix-asan/mnic-fw; else fw=$MNIC_ROOT/build/posix/mnic-fw; fi
tools=${MIG_TOOLS:-$MNIC_ROOT/build/host-asan/hostdrv}
M=$tools/mnicctl
T=$tools/mnic-traffic
INJ=$MNIC_ROOT/tests/tools/mnic-inject.py
for f in "$fw" "$M" "$T"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
command -v python3 >/dev/null || mnic_die "python3 missing"
IMPAIR=${IMPAIR:-drop=0.02,dup=0.01,reorder=0.02}
DUR=${MIG_DURATION:-6}
QPS=${MIG_QPS:-8}
KEY=000102030405060708090a0b0c0d0e0f
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
failed=0

# ---- NICs ---------------------------------------------------------------------
NIC_PIDS=()
start_nics() {   # scenario names...
  local dir=$1 i=0 n; shift
  mkdir -p "$dir"
  mnic_switch_start "$dir/switch"
  NIC_PIDS=("$MNIC_SWITCH_PID")
  for n in "$@"; do
    i=$((i + 1))
    local hm=()   # HOSTMEM_NICS: these get a host-memory aperture, <bar>.hostmem
    case " ${HOSTMEM_NICS:-} " in *" $n "*) hm=(--hostmem "$dir/$n.bar.hostmem" --hostmem-size 64M) ;; esac
    MNIC_PCAP="${CAPTURE:+$dir/$n.pcap}" \
    "$fw" --name "$n" --vde "$dir/switch" --mac "52:54:00:73:00:0$i" --bar "$dir/$n.bar" "${hm[@]}" \
      --impair "$IMPAIR,seed=$((i * 7919 + RANDOM % 1000))" \
      -- run db_min_us=20 db_max_us=1000 >"$dir/$n.log" 2>&1 &
    NIC_PIDS+=($!); mnic_track $!
    mnic_wait_line "$dir/$n.log" "^MNIC READY" 20 $! || { cat "$dir/$n.log"; mnic_die "$n not ready"; }
  done
}
stop_nics() {
  local p
  for p in "${NIC_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${NIC_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  NIC_PIDS=()
}
ip_of() { echo "10.115.0.$1"; }    # NIC i: MAC 52:54:00:73:00:0i <-> 10.115.0.i

# ---- traffic ---------------------------------------------------------------------
# start_traffic DIR [server args] -- [client args]: A serves, B connects
start_traffic() {
  local dir=$1 sargs=() cargs=(); shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  cargs=("$@")
  PORT=$((20000 + RANDOM % 5000))
  # Keyed, as the tools should connect: an unkeyed RESUME is refused
  # unless MIG_CONFIG allows it (rocev2/migrate.c).
  "$T" -d "$dir/a.bar" -p $PORT -q "$QPS" -t 40 -T "$dir/timeline-a.csv" -k $KEY "${sargs[@]}" \
    >"$dir/traffic-a.log" 2>&1 &
  TA=$!; mnic_track $TA
  "$T" -d "$dir/b.bar" -p $PORT -q "$QPS" -t 40 -T "$dir/timeline-b.csv" -k $KEY "${cargs[@]}" 127.0.0.1 \
    >"$dir/traffic-b.log" 2>&1 &
  TB=$!; mnic_track $TB
  mnic_wait_line "$dir/traffic-a.log" "connected" 20 $TA || { cat "$dir"/traffic-*.log; return 1; }
  mnic_wait_line "$dir/traffic-b.log" "connected" 20 $TB || { cat "$dir"/traffic-*.log; return 1; }
}
# wait_traffic DIR: both must PASS
wait_traffic() {
  local dir=$1 ra rb
  mnic_wait_pid $TA 90; ra=$MNIC_RC
  mnic_wait_pid $TB 90; rb=$MNIC_RC
  grep -h "^TRAFFIC" "$dir"/traffic-*.log || true
  if [ "$ra" != 0 ] || [ "$rb" != 0 ]; then
    grep -hv "^TRAFFIC\|^ops" "$dir"/traffic-*.log | head -20
    echo "traffic: A exit $ra, B exit $rb"
    diag "$dir"; return 1
  fi
  grep -q "^TRAFFIC PASS .* lost=0 dup=0 ooo=0 bad=0 errors=0 .*read_bad=0 .*atomic_bad=0" "$dir/traffic-a.log" &&
  grep -q "^TRAFFIC PASS .* lost=0 dup=0 ooo=0 bad=0 errors=0 .*read_bad=0 .*atomic_bad=0" "$dir/traffic-b.log" ||
    { echo "traffic: not a clean PASS"; return 1; }
}
# the state of every NIC of a failed scenario, into its log
diag() {
  local bar
  for bar in "$1"/*.bar; do
    echo "--- $(basename "$bar"): QPs and non-zero engine counters"
    "$M" -d "$bar" qp list 2>&1 || true
    "$M" -d "$bar" counters --engine 2>&1 | awk '$2 != 0' | tr -s ' ' | paste -sd' ' || true
  done
}
counter() {   # DEV NAME
  "$M" -d "$1" --json counters --engine | json "d['engine']['$2']"
}
# every QP of DEV addresses IP, and none is paused or stopped
qps_address() {   # DEV IP
  local got
  got=$("$M" -d "$1" --json qp list | json "sorted(set((q['dgid'], q['paused'], q['stopped'], q['state']) for q in d))")
  [ "$got" = "[('$2', 0, 0, 'RTS')]" ] || { echo "QPs of $1: $got, want all RTS at $2"; return 1; }
}
result() {   # name rc
  if [ "$2" = 0 ]; then echo "[ PASS ] migrate_posix/$1"; else echo "[ FAIL ] migrate_posix/$1"; failed=1; fi
}

# ---- 1. single end: B -> C ------------------------------------------------------------
sc_single() {
  local d=$out/single x_ctx bport hook=()
  start_nics "$d" a b c
  # MIG_BYSTANDER=0 (bench: downtime_ms): without the bystander and its check
  if [ "${MIG_BYSTANDER:-1}" = 1 ]; then
  # The bystander first: X takes the lowest range on B, Y the same range on
  # C, so B's migrating context (above X's on B) finds its range free on C
  # (ranges keep their window addresses: not translated yet)
  bport=$((21000 + RANDOM % 5000))
  "$T" -d "$d/b.bar" -p $bport -q 2 -t 60 -D $((DUR + 12)) -g "$d/gaps-x.csv" >"$d/traffic-x.log" 2>&1 &
  TX=$!; mnic_track $TX
  "$T" -d "$d/c.bar" -p $bport -q 2 -t 60 -D $((DUR + 12)) 127.0.0.1 >"$d/traffic-y.log" 2>&1 &
  TY=$!; mnic_track $TY
  mnic_wait_line "$d/traffic-x.log" "connected" 20 $TX && mnic_wait_line "$d/traffic-y.log" "connected" 20 $TY ||
    { cat "$d"/traffic-[xy].log; return 1; }
  fi
  # A waits up to 60 s in pause (MIG_CONFIG): the check between dump and
  # restore runs mnicctl and python, seconds on a loaded machine
  start_traffic "$d" -D "$DUR" -P 60000 -g "$d/gaps-a.csv" -- -D "$DUR" -N "$d/notify" || return 1
  if [ "${MIG_BYSTANDER:-1}" = 1 ]; then
  x_ctx=$("$M" -d "$d/b.bar" --json ctx list | json "[c['ctx'] for c in d if c['owner'] == $TX][0]")
  # between B's dump and the restore on C: the bystander runs on both NICs
  cat >"$d/bystander.sh" <<EOF
set -e
x=\$("$M" -d "$d/b.bar" --json ctx show $x_ctx)
b=\$("$M" -d "$d/b.bar" --json ctx list)
c=\$("$M" -d "$d/c.bar" --json qp list)
python3 - "\$x" "\$b" "\$c" <<'PY'
import json, sys
x, b, c = (json.loads(a) for a in sys.argv[1:])
if x['state'] != 'running':
    sys.exit('bystander: X context on B is %s' % x['state'])
if not any(k['owner'] == $TB and k['state'] == 'stopped' for k in b):
    sys.exit('bystander: the migrating context is not stopped: %s' % b)
if len(c) != 2 or any(q['paused'] or q['stopped'] or q['state'] != 'RTS' for q in c):
    sys.exit('bystander: QPs on C: %s' % [(q['qpn'], q['state'], q['paused'], q['stopped']) for q in c])
print('bystander: running on B and C while the migrating context is stopped')
PY
EOF
  hook=(--after-dump "bash $d/bystander.sh")
  fi
  sleep 2
  "$M" migrate --from "$d/b.bar" --to "$d/c.bar" --pid $TB --notify "$d/notify" \
    "${hook[@]}" >"$d/migrate.log" 2>&1 ||
    { cat "$d/migrate.log"; return 1; }
  cat "$d/migrate.log"
  wait_traffic "$d" || return 1
  if [ "${MIG_BYSTANDER:-1}" = 1 ]; then
  grep -q "^bystander: running" "$d/migrate.log" || { echo "bystander check did not run"; return 1; }
  mnic_wait_pid $TX 60; local rx=$MNIC_RC; mnic_wait_pid $TY 60; local ry=$MNIC_RC
  grep -h "^TRAFFIC" "$d"/traffic-[xy].log || true
  [ "$rx" = 0 ] && [ "$ry" = 0 ] &&
    grep -q "^TRAFFIC PASS .* lost=0 dup=0 ooo=0 bad=0 errors=0 " "$d/traffic-x.log" ||
    { echo "bystander: not a clean PASS (exit $rx/$ry)"; return 1; }
  local gx ga
  gx=$("$MNIC_ROOT/tests/tools/mig-downtime.py" "$d/migrate.log" "$d/gaps-x.csv")
  ga=$("$MNIC_ROOT/tests/tools/mig-downtime.py" "$d/migrate.log" "$d/gaps-a.csv")
  # reported, not judged: on lossy links a tail loss waits for the ACK
  # timeout (mnic-traffic: 268 ms) whether a migration runs or not; that
  # the bystander was neither stopped nor paused is checked above
  echo "longest gap during the migration: bystander X $gx ms, migrating connection (A) $ga ms"
  fi
  # The gap A saw across the freeze..thaw window (bench: downtime_ms).
  echo "migration downtime seen by A: $("$MNIC_ROOT/tests/tools/mig-downtime.py" "$d/migrate.log" \
    "$d/gaps-a.csv") ms"
  grep -q "^TRAFFIC PASS role=client .* migrations=1 .*device=$d/c.bar" "$d/traffic-b.log" ||
    { echo "B's process did not end on C"; return 1; }
  qps_address "$d/a.bar" "$(ip_of 3)" || return 1
  local sent acked resumes
  sent=$(counter "$d/c.bar" mig_resumes_sent); acked=$(counter "$d/c.bar" mig_resumes_acked)
  resumes=$(counter "$d/a.bar" resp_resumes)
  echo "C: mig_resumes_sent=$sent mig_resumes_acked=$acked; A: resp_resumes=$resumes"
  [ "$sent" -ge "$QPS" ] && [ "$acked" -ge "$QPS" ] && [ "$resumes" -ge "$QPS" ] ||
    { echo "RESUME not sent/acked on every QP"; return 1; }
  grep -h "max_gap_ms" "$d/traffic-a.log" | sed 's/.*max_gap_ms=\([0-9.]*\).*/downtime seen by A: \1 ms/'
  cp "$d/traffic-a.log" "$out/single-traffic-a.log"
  stop_nics
}

# ---- 1b. host memory: B -> C onto other page frames -------------------------------
# Every NIC but D has a host-memory aperture (issue 14): B's process keeps
# its rings and buffers in pages of B's file, reached through MTTs.  A
# bystander holds 8 MiB on B below it, another 24 MiB on C, and the target's
# pages are taken shuffled, so no page lands at the frame it had.  First a
# migration to D (no host memory) is refused after the dump and aborted:
# B resumes in place, the traffic goes on.  Then B -> C: the pages are
# copied onto C's, the restored MTTs refilled with them, the process maps
# them at the same VAs; nothing lost, and both files get every page back.
sc_host_dma() {
  local d=$out/host_dma bport freeb freec n
  HOSTMEM_NICS="a b c" start_nics "$d" a b c d
  bport=$((21000 + RANDOM % 5000))
  "$T" -d "$d/b.bar" -p $bport -q 1 -t 60 -D $((DUR + 14)) >"$d/traffic-x.log" 2>&1 &
  TX=$!; mnic_track $TX
  "$T" -d "$d/c.bar" -p $bport -q 1 -t 60 -D $((DUR + 14)) 127.0.0.1 >"$d/traffic-y.log" 2>&1 &
  TY=$!; mnic_track $TY
  mnic_wait_line "$d/traffic-x.log" "connected" 20 $TX && mnic_wait_line "$d/traffic-y.log" "connected" 20 $TY ||
    { cat "$d"/traffic-[xy].log; return 1; }
  # Holders: 256 KiB on B, 4 MiB on C, so B's process finds no frame it
  # had on B; the same objects on both, so its handles are free on C (a
  # restore keeps handles: issue 19 virtualises them)
  local h sz th=()
  for h in b:256K c:4M; do
    MNIC_CTX_MEM=${h#*:} "$tools/mnic-tenant" hold "$d/${h%%:*}.bar" "$d/hold-${h%%:*}" \
      >"$d/hold-${h%%:*}.log" 2>&1 &
    th+=($!); mnic_track $!
    for n in $(seq 100); do [ -s "$d/hold-${h%%:*}" ] && break; sleep 0.1; done
    [ -s "$d/hold-${h%%:*}" ] || { cat "$d/hold-${h%%:*}.log"; echo "holder on ${h%%:*} did not start"; return 1; }
  done
  freeb=$("$M" -d "$d/b.bar" --json mem | json "d['hostmem_free_pages']")
  freec=$("$M" -d "$d/c.bar" --json mem | json "d['hostmem_free_pages']")
  start_traffic "$d" -D "$DUR" -P 60000 -- -D "$DUR" -N "$d/notify" || return 1
  sleep 1.5
  if "$M" migrate --from "$d/b.bar" --to "$d/d.bar" --pid $TB --notify "$d/notify" \
      >"$d/migrate-d.log" 2>&1; then
    cat "$d/migrate-d.log"; echo "a migration onto a NIC without host memory went through"; return 1
  fi
  cat "$d/migrate-d.log"
  grep -q "either both NICs have host memory or neither" "$d/migrate-d.log" ||
    { echo "no message saying why"; return 1; }
  sleep 1
  MNIC_HOSTMEM_SHUFFLE=1 "$M" migrate --from "$d/b.bar" --to "$d/c.bar" --pid $TB --notify "$d/notify" \
    >"$d/migrate.log" 2>&1 || { cat "$d/migrate.log"; return 1; }
  cat "$d/migrate.log"
  grep -Eq "^host memory [1-9][0-9]* pages onto the target's \(0 at the frame they had\), [1-9][0-9]* MTTs refilled" \
    "$d/migrate.log" || { echo "no pages moved to other frames, or no MTT refilled"; return 1; }
  wait_traffic "$d" || return 1
  grep -q "^TRAFFIC PASS role=client .* migrations=1 .*device=$d/c.bar" "$d/traffic-b.log" ||
    { echo "B's process did not end on C"; return 1; }
  qps_address "$d/a.bar" "$(ip_of 3)" || return 1
  # the bystanders still run: the files hold their pages and nothing else
  n=$("$M" -d "$d/b.bar" --json mem | json "d['hostmem_free_pages']")
  [ "$n" = "$freeb" ] || { echo "B: $n free pages after, $freeb before: the source's pages did not go back"; return 1; }
  # mnic-traffic exits without closing: its context and pages on C go
  # with the reap (owner gone), as a killed process's would
  "$M" -d "$d/c.bar" ctx reap
  n=$("$M" -d "$d/c.bar" --json mem | json "d['hostmem_free_pages']")
  [ "$n" = "$freec" ] || { echo "C: $n free pages after, $freec before the process came and left"; return 1; }
  echo "host memory back: B $freeb free pages, C $freec, as before the migrating process"
  mnic_wait_pid $TX 60; local rx=$MNIC_RC; mnic_wait_pid $TY 60; local ry=$MNIC_RC
  [ "$rx" = 0 ] && [ "$ry" = 0 ] || { echo "bystander: exit $rx/$ry"; return 1; }
  kill "${th[@]}"; wait "${th[@]}" 2>/dev/null || true
  stop_nics
}

# ---- 2. both ends at once: A -> D and B -> C ------------------------------------
sc_both_ends() {
  local d=$out/both_ends
  start_nics "$d" a b c d
  start_traffic "$d" -D "$DUR" -N "$d/notify-a" -- -D "$DUR" -N "$d/notify-b" || return 1
  sleep 2
  "$M" migrate --from "$d/a.bar" --to "$d/d.bar" --pid $TA --notify "$d/notify-a" \
               --from "$d/b.bar" --to "$d/c.bar" --pid $TB --notify "$d/notify-b" \
    >"$d/migrate.log" 2>&1 || { cat "$d/migrate.log"; return 1; }
  grep -E "^(migrated|frozen)" "$d/migrate.log"
  wait_traffic "$d" || return 1
  grep -q "^TRAFFIC PASS role=server .* migrations=1 .*device=$d/d.bar" "$d/traffic-a.log" &&
  grep -q "^TRAFFIC PASS role=client .* migrations=1 .*device=$d/c.bar" "$d/traffic-b.log" ||
    { echo "the processes did not end on D and C"; return 1; }
  qps_address "$d/d.bar" "$(ip_of 3)" || return 1
  qps_address "$d/c.bar" "$(ip_of 4)" || return 1
  local n
  for n in c d; do
    [ "$(counter "$d/$n.bar" mig_resumes_acked)" -ge "$QPS" ] ||
      { echo "$n: RESUME not acked on every QP"; return 1; }
  done
  stop_nics
}

# ---- 3. forged RESUME while A is paused ----------------------------------------------
sc_forged() {
  local d=$out/forged
  start_nics "$d" a b c
  # A waits up to 60 s for the real RESUME (MIG_CONFIG; default 10 s): the
  # forging step between dump and restore runs python and mnicctl a dozen
  # times, which took 12-15 s on a loaded 2-core machine, and then A's QPs
  # timed out in pause (ERR) before C's RESUME came.  The scenario is about
  # forged RESUMEs; the timeout has its own scenario (no_restore).
  start_traffic "$d" -D "$DUR" -k $KEY -P 60000 -- -D "$DUR" -k $KEY -N "$d/notify" || return 1
  # Runs inside `mnicctl migrate` between the dump of B and the restore on
  # C: A's QPs got NAK_STOPPED from B and are paused.  Forge RESUMEs "from
  # C" to every QP of A: one with a wrong MAC, one with none.
  cat >"$d/forge.sh" <<EOS
#!/usr/bin/env bash
set -euo pipefail
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(\$1)"; }
for i in \$(seq 100); do
  p=\$("$M" -d "$d/a.bar" --json qp list | json "sum(q['paused'] for q in d)")
  [ "\$p" -ge 1 ] && break; sleep 0.02
done
[ "\$p" -ge 1 ] || { echo "forge: no QP of A paused"; exit 1; }
# the paused QPs: QPN:PSN of each; every frame three times (A's link drops 2 %)
qps=\$("$M" -d "$d/a.bar" --json qp list | json "' '.join('--qp %d:%d' % (q['qpn'], q['rq_psn']) for q in d if q['paused'])")
n=\$(echo \$qps | wc -w); n=\$((n / 2))
echo "forge: \$n QPs of A paused after \$i polls"
# Rounds of one wrong-MAC and one MAC-less RESUME per paused QP until A has
# counted at least 2 per QP (A's link drops 2 %; forged frames are never
# resent), at most 5 rounds.
sent=0; forged=0
for round in 1 2 3 4 5; do
  for m in --mac=0123456789abcdef --no-mac; do
    python3 "$INJ" --switch "$d/switch" --src-mac 52:54:00:73:00:03 --src-ip $(ip_of 3) \
      --dst-mac 52:54:00:73:00:01 --dst-ip $(ip_of 1) \$qps \$m
  done
  sent=\$((sent + 2 * n))
  sleep 0.2
  forged=\$("$M" -d "$d/a.bar" --json counters --engine | json "d['engine']['mig_resume_forged']")
  [ "\$forged" -ge \$((2 * n)) ] && break
done
state=\$("$M" -d "$d/a.bar" --json qp list | json "sorted(set((q['dgid'], q['paused']) for q in d if q['paused']))")
echo "forge: A counted mig_resume_forged=\$forged for \$sent injected in \$round rounds; A's paused QPs (dip, paused): \$state"
# A's link also duplicates 1 %: an injected frame may count twice.
[ "\$forged" -ge \$((2 * n)) ] && [ "\$forged" -le \$((2 * sent)) ] ||
  { echo "forge: \$forged forged RESUMEs counted for \$sent injected"; exit 1; }
[ "\$state" = "[('$(ip_of 2)', 1)]" ] || { echo "forge: a paused QP of A moved or un-paused"; exit 1; }
EOS
  chmod +x "$d/forge.sh"
  sleep 2
  "$M" migrate --from "$d/b.bar" --to "$d/c.bar" --pid $TB --notify "$d/notify" \
    --after-dump "$d/forge.sh >$d/forge.log 2>&1" >"$d/migrate.log" 2>&1 ||
    { cat "$d/forge.log" "$d/migrate.log"; return 1; }
  grep -v "^injected" "$d/forge.log"
  echo "forge: $(grep -c "^injected" "$d/forge.log") forged RESUMEs injected"
  wait_traffic "$d" || return 1
  qps_address "$d/a.bar" "$(ip_of 3)" || return 1
  [ "$("$M" -d "$d/a.bar" --json qp list | json "sum(q['has_mig_key'] for q in d)")" = "$QPS" ] ||
    { echo "A's QPs lost their migration key"; return 1; }
  stop_nics
}

# ---- 4. restore never happens: pause timeout -------------------------------------------
sc_no_restore() {
  local d=$out/no_restore
  start_nics "$d" a b
  # A gives up on a paused peer after 1.5 s (MIG_CONFIG); B is frozen and
  # dumped, and nothing restores it
  start_traffic "$d" -D 30 -P 1500 -F -- -D 30 || return 1
  sleep 1.5
  kill -STOP $TB
  "$M" -d "$d/b.bar" dump --pid $TB -o "$d/b.img" >"$d/dump.log" 2>&1 || { cat "$d/dump.log"; return 1; }
  local ra
  mnic_wait_pid $TA 30; ra=$MNIC_RC
  kill -CONT $TB 2>/dev/null || true; kill $TB 2>/dev/null || true
  grep -h "^TRAFFIC\|^flush" "$d/traffic-a.log" || true
  [ "$ra" = 0 ] || { grep -v "^TRAFFIC\|^ops" "$d/traffic-a.log" | head; diag "$d"; echo "A: exit $ra"; return 1; }
  grep -q "^flush: every QP in ERR ($QPS), [1-9][0-9]* error completions .*: yes" "$d/traffic-a.log" ||
    { echo "A did not see every WQE flushed"; return 1; }
  local to
  to=$(counter "$d/a.bar" mig_pause_timeouts)
  echo "A: mig_pause_timeouts=$to"
  [ "$to" -ge 1 ] || { echo "no pause timeout counted"; return 1; }
  stop_nics
}

# ---- 5. abort: B dumped mid-stream, then resumes in place --------------------------------
sc_abort() {
  local d=$out/abort
  start_nics "$d" a b
  start_traffic "$d" -D 4 -- -D 4 || return 1
  sleep 1.5
  "$M" -d "$d/b.bar" dump --pid $TB -o "$d/b.img" >"$d/dump.log" 2>&1 || { cat "$d/dump.log"; return 1; }
  sleep 0.3     # A pauses on NAK_STOPPED meanwhile
  "$M" -d "$d/b.bar" abort --pid $TB >"$d/abort.log" 2>&1 || { cat "$d/abort.log"; return 1; }
  wait_traffic "$d" || return 1
  qps_address "$d/a.bar" "$(ip_of 2)" || return 1
  local stopped
  stopped=$(counter "$d/b.bar" resp_stopped_naks)
  echo "B: resp_stopped_naks=$stopped while dumped"
  [ "$stopped" -ge 1 ] || { echo "B never answered NAK_STOPPED: the dump did not stop it"; return 1; }
  stop_nics
}

# ---- 6. a captured RESUME injected again: replayed, rewritten ---------------------------
sc_resume_replay() {
  local d=$out/resume_replay i rep0 forged0 rep forged
  CAPTURE=1 start_nics "$d" a b c
  start_traffic "$d" -D "$DUR" -- -D "$DUR" -N "$d/notify" || return 1
  sleep 2
  "$M" migrate --from "$d/b.bar" --to "$d/c.bar" --pid $TB --notify "$d/notify" >"$d/migrate.log" 2>&1 ||
    { cat "$d/migrate.log"; return 1; }
  for i in $(seq 50); do
    [ "$(counter "$d/c.bar" mig_resumes_acked)" -ge "$QPS" ] && break; sleep 0.1
  done
  sleep 0.3     # C writes its capture out when idle
  rep0=$(counter "$d/a.bar" mig_resume_repeats); forged0=$(counter "$d/a.bar" mig_resume_forged)
  python3 "$INJ" --switch "$d/switch" --replay "$d/c.pcap" --replay-from 52:54:00:73:00:03 \
    --repeat 3 || return 1
  python3 "$INJ" --switch "$d/switch" --replay "$d/c.pcap" --replay-from 52:54:00:73:00:03 \
    --rewrite-eth-src 52:54:00:73:00:02 --repeat 3 || return 1
  python3 "$INJ" --switch "$d/switch" --replay "$d/c.pcap" --replay-from 52:54:00:73:00:03 \
    --rewrite-ip "$(ip_of 2)" --repeat 3 || return 1
  sleep 0.3
  rep=$(( $(counter "$d/a.bar" mig_resume_repeats) - rep0 ))
  forged=$(( $(counter "$d/a.bar" mig_resume_forged) - forged0 ))
  echo "resume_replay: A counted mig_resume_repeats +$rep, mig_resume_forged +$forged"
  qps_address "$d/a.bar" "$(ip_of 3)" || return 1
  [ "$rep" -ge "$QPS" ] && [ "$forged" -ge "$QPS" ] ||
    { echo "resume_replay: replayed or rewritten RESUMEs not counted on every QP"; return 1; }
  wait_traffic "$d" || return 1
  stop_nics
}

# ---- 7. source NIC gone right after its dump ------------------------------------------
# B's process is frozen and its context dumped, then NIC B dies: A's QPs
# that got NAK_STOPPED are Paused (they give up at the pause bound), the
# others see no answer at all (retry_cnt 7 is seven retries, IBA
# 9.7.6.1.3): every one of A's QPs errors out within the bound, every
# outstanding WQE completes, the application ends (no hang).
sc_source_killed() {
  local d=$out/source_killed ra to rx t0
  start_nics "$d" a b
  start_traffic "$d" -D 30 -P 1500 -F -- -D 30 || return 1
  sleep 1.5
  kill -STOP $TB
  "$M" -d "$d/b.bar" dump --pid $TB -o "$d/b.img" >"$d/dump.log" 2>&1 || { cat "$d/dump.log"; return 1; }
  t0=$(date +%s.%N)
  kill -KILL "${NIC_PIDS[2]}"
  mnic_wait_pid $TA 30; ra=$MNIC_RC
  echo "A ended $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s after NIC B died"
  kill -KILL $TB 2>/dev/null || true
  grep -h "^TRAFFIC\|^flush" "$d/traffic-a.log" || true
  [ "$ra" = 0 ] || { grep -v "^TRAFFIC\|^ops" "$d/traffic-a.log" | head; echo "A: exit $ra"; return 1; }
  grep -q "^flush: every QP in ERR ($QPS), [1-9][0-9]* error completions .*: yes" "$d/traffic-a.log" ||
    { echo "A did not see every WQE flushed"; return 1; }
  to=$(counter "$d/a.bar" mig_pause_timeouts); rx=$(counter "$d/a.bar" comp_retry_exceeded)
  echo "A: mig_pause_timeouts=$to comp_retry_exceeded=$rx"
  [ $((to + rx)) -ge 1 ] || { echo "A's QPs ended by neither bound"; return 1; }
  stop_nics
}

only=${MIG_SCENARIOS:-single host_dma both_ends forged no_restore abort resume_replay source_killed}
for sc in $only; do
  rc=0; "sc_$sc" || rc=$?; result "$sc" $rc; stop_nics
done

[ $failed = 0 ] || mnic_die "migrate_posix: a scenario failed (logs: $out)"
echo "migrate_posix: PASS"
