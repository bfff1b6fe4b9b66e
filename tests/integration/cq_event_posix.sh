#!/usr/bin/env bash
# Completion events end to end on POSIX NICs (issue 15 item 4;
# mnic/queues.h "Completion events", docs/host-interface.md).  Two NICs
# whose BAR poll fallback is 1 s (db_min_us = db_max_us = 1000000):
#   1. mnic-pingpong -e A <-> B (ASan build), 200 verified 64 B exchanges:
#      each side arms its CQ, sleeps in mnic_get_cq_event on its channel's
#      eventfd, polls, re-arms.  A host woken by anything but the NIC's
#      event (a poll tick: 1 s) could not finish 200 round trips within
#      the 30 s limit (-T: no event for that long fails); and the wait must
#      not spin: the EQ looks and CQ polls stay within a small multiple of
#      the events (a busy loop would make millions), every sleep ends in a
#      wakeup or the end.  The NICs count the arms taken, the EQEs written
#      and the vectors raised; no overflow, no stale or refused arm.
#   2. a host without a doorbell channel (MNIC_DOORBELL_CHANNEL=off), on
#      NICs polling every 0.1 s: events still arrive, the wait polls the
#      EQ (no wakeups at all), the exchange completes.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/cq-event-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl PP=$tools/mnic-pingpong
for f in "$fw" "$M" "$PP"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
command -v python3 >/dev/null || mnic_die "python3 missing"

mnic_switch_start "$out/switch"
start_nic() {   # name mac [poll_us]
  local poll=${3:-1000000}
  "$fw" --name "$1" --vde "$out/switch" --mac "$2" --bar "$out/$1.bar" \
    -- run db_min_us=$poll db_max_us=$poll >"$out/$1.log" 2>&1 &
  NIC_PID=$!; mnic_track $NIC_PID
  mnic_wait_line "$out/$1.log" "^MNIC READY" 20 $NIC_PID || { cat "$out/$1.log"; mnic_die "$1 not ready"; }
}
counters() {   # bar -> "name value" lines of the engine group
  "$M" -d "$1" --json counters |
    python3 -c "import json,sys; [print(k, v) for k, v in json.load(sys.stdin)['engine'].items()]"
}
counter() {   # bar name
  counters "$1" | awk -v n="$2" '$1 == n { print $2 }'
}
pingpong() {   # tag bar_srv bar_cli iters [env...] -> logs $out/pp-TAG-{srv,cli}.log
  local tag=$1 a=$2 b=$3 n=$4 port=$((18700 + RANDOM % 500)) rc=0
  shift 4
  env "$@" "$PP" -d "$a" -p $port -s 64 -n "$n" -V -e -T 30 >"$out/pp-$tag-srv.log" 2>&1 &
  local srv=$!; mnic_track $srv
  env "$@" "$PP" -d "$b" -p $port -s 64 -n "$n" -V -e -T 30 127.0.0.1 >"$out/pp-$tag-cli.log" 2>&1 || rc=$?
  mnic_wait_pid $srv 40
  [ $rc = 0 ] && [ "$MNIC_RC" = 0 ] || { cat "$out"/pp-$tag-*.log; mnic_die "$tag ping-pong: client $rc server $MNIC_RC"; }
  for s in srv cli; do
    grep -q "^data verified: $n messages received, every byte" "$out/pp-$tag-$s.log" ||
      { cat "$out/pp-$tag-$s.log"; mnic_die "$tag ping-pong ($s): not verified"; }
  done
}
# "events: E events, S sleeps, W wakeups, X EQ checks, P CQ polls, C completions"
ev_field() {   # log field-name
  sed -n "s/^events: \(.*\)/\1/p" "$1" | tr ',' '\n' | awk -v f="$2" '$2 == f || $2" "$3 == f { print $1 }'
}

start_nic a 52:54:00:73:00:01
start_nic b 52:54:00:73:00:02
A=$out/a.bar B=$out/b.bar

# ---- 1. event-driven ping-pong, 1 s fallback poll ------------------------------
N=200
t0=$(date +%s%N)
pingpong chan "$A" "$B" $N
t1=$(date +%s%N)
echo "ok: mnic-pingpong -e, $N x 64 B verified in $(( (t1 - t0) / 1000000 )) ms"
for s in srv cli; do
  log=$out/pp-chan-$s.log
  grep "^events:" "$log"
  ev=$(ev_field "$log" events) sl=$(ev_field "$log" sleeps) wk=$(ev_field "$log" wakeups)
  eq=$(ev_field "$log" "EQ checks") cq=$(ev_field "$log" "CQ polls") cm=$(ev_field "$log" completions)
  [ -n "$ev" ] && [ -n "$cm" ] || mnic_die "$s: no events line"
  [ "$cm" = $((2 * N)) ] || mnic_die "$s: $cm completions, want $((2 * N))"
  # one event per arm, at least one per exchange; at most two per completion
  # (its own, and one at the re-arm when the NIC reads the arm before the
  # poll that follows it has consumed that CQE: the re-arm race rule)
  [ "$ev" -ge "$N" ] && [ "$ev" -le $((2 * cm + 2)) ] || mnic_die "$s: $ev events for $cm completions"
  [ "$cq" = "$ev" ] || mnic_die "$s: $cq CQ polls for $ev events (the loop polls once per event)"
  # the wait did not spin: every look at the EQ is an event, or follows a sleep
  [ "$eq" -le $((ev + sl + 1)) ] || mnic_die "$s: $eq EQ checks for $ev events and $sl sleeps"
  # every sleep ended with the eventfd readable (none ran into the timeout)
  [ "$wk" = "$sl" ] || mnic_die "$s: $sl sleeps but $wk wakeups"
done
echo "ok: both hosts slept on their channel's eventfd and were woken by events, no spin"
for nic in "$A" "$B"; do
  counters "$nic" >"$out/counters.txt"
  get() { awk -v n="$1" '$1 == n { print $2 }' "$out/counters.txt"; }
  [ "$(get cq_events)" -ge "$N" ] && [ "$(get eq_raises)" = "$(get cq_events)" ] &&
    [ "$(get cq_arms)" -ge "$(get cq_events)" ] ||
    mnic_die "$nic: cq_arms $(get cq_arms) cq_events $(get cq_events) eq_raises $(get eq_raises)"
  for z in eq_overflows cq_arm_refused cq_arm_stale cq_arm_no_eq; do
    [ "$(get $z)" = 0 ] || mnic_die "$nic: $z = $(get $z)"
  done
  echo "ok: $(basename "$nic"): cq_arms $(get cq_arms), cq_events $(get cq_events)" \
    "($(get cq_events_at_arm) at the arm), eq_raises $(get eq_raises), no overflow or bad arm"
done

# ---- 2. no doorbell channel: the EQ is polled ------------------------------------
start_nic c 52:54:00:73:00:03 100000
start_nic d 52:54:00:73:00:04 100000
pingpong nochan "$out/c.bar" "$out/d.bar" 10 MNIC_DOORBELL_CHANNEL=off
for s in srv cli; do
  log=$out/pp-nochan-$s.log
  grep "^events:" "$log"
  [ "$(ev_field "$log" events)" -ge 10 ] && [ "$(ev_field "$log" wakeups)" = 0 ] ||
    mnic_die "$s without a channel: want >= 10 events and no wakeups"
done
[ "$(counter "$out/c.bar" cq_events)" -ge 10 ] || mnic_die "C wrote no EQEs"
echo "ok: without a doorbell channel the hosts found their events by polling the EQ"
echo "PASS: cq_event_posix"
