#!/usr/bin/env bash
# Completion events on a QEMU A15 NIC (issue 15 items 1 and 4): the host
# process joins the NIC's ivshmem-doorbell server (hostdrv/lib/ivsh.c), its
# completion channel's fd is its own eventfd of a vector >= 1 from that
# server, and the firmware raises it with a Doorbell write (peer << 16 |
# vector) after writing the EQE.  A15 NIC A and POSIX NIC B both poll their
# BAR every 1 s only, so an exchange that finishes fast was driven by
# doorbells and events, not by poll ticks:
#   mnic-pingpong -e A <-> B, 100 verified 64 B exchanges within -T 30 (no
#   event for 30 s fails); on A's side every sleep ended in a wakeup and
#   the events cover the completions; A counted the arms, EQEs and raises
#   (eq_raises), no overflow or refused arm; A's host slot freed at exit.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/cq-event-a15; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl PP=$tools/mnic-pingpong
for f in "$fw" "$M" "$PP" "$MNIC_ROOT/build/qemu-virt-a15/mnic-fw.elf"; do
  [ -e "$f" ] || mnic_die "$f missing: run make images"
done
poll="run db_min_us=1000000 db_max_us=1000000"
mnic_switch_start "$out/switch"
"$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name a --mac 52:54:00:76:00:01 \
  --switch "$out/switch" --bar "$out/a.bar" -- $poll >"$out/a.log" 2>&1 &
mnic_track $!
"$fw" --name b --vde "$out/switch" --mac 52:54:00:76:00:02 --bar "$out/b.bar" -- $poll >"$out/b.log" 2>&1 &
mnic_track $!
for n in a b; do
  mnic_wait_line "$out/$n.log" "^MNIC READY" 60 "" || { cat "$out/$n.log"; mnic_die "$n not ready"; }
done
A=$out/a.bar B=$out/b.bar
N=100 port=$((18700 + RANDOM % 500))
"$PP" -d "$A" -p $port -s 64 -n $N -V -e -T 30 >"$out/pp-srv.log" 2>&1 &
srv=$!; mnic_track $srv
t0=$(date +%s%N)
rc=0; "$PP" -d "$B" -p $port -s 64 -n $N -V -e -T 30 127.0.0.1 >"$out/pp-cli.log" 2>&1 || rc=$?
mnic_wait_pid $srv 40
t1=$(date +%s%N)
[ $rc = 0 ] && [ "$MNIC_RC" = 0 ] || { cat "$out"/pp-*.log; mnic_die "ping-pong: client $rc server $MNIC_RC"; }
for s in srv cli; do
  grep -q "^data verified: $N messages received, every byte" "$out/pp-$s.log" ||
    { cat "$out/pp-$s.log"; mnic_die "ping-pong ($s): not verified"; }
done
echo "ok: mnic-pingpong -e A(A15) <-> B(POSIX), $N x 64 B verified in $(( (t1 - t0) / 1000000 )) ms"
ev_field() { sed -n "s/^events: \(.*\)/\1/p" "$1" | tr ',' '\n' | awk -v f="$2" '$2 == f || $2" "$3 == f { print $1 }'; }
log=$out/pp-srv.log
grep "^events:" "$log"
ev=$(ev_field "$log" events) sl=$(ev_field "$log" sleeps) wk=$(ev_field "$log" wakeups) cm=$(ev_field "$log" completions)
[ -n "$ev" ] && [ "$cm" = $((2 * N)) ] || mnic_die "A's host: $cm completions, want $((2 * N))"
[ "$ev" -ge "$N" ] && [ "$ev" -le $((2 * cm + 2)) ] || mnic_die "A's host: $ev events for $cm completions"
[ "$sl" -gt 0 ] && [ "$wk" = "$sl" ] || mnic_die "A's host: $sl sleeps, $wk wakeups: it was not woken by the A15's vector"
echo "ok: A's host slept $sl times on its ivshmem vector's eventfd and was woken every time"
"$M" -d "$A" --json counters >"$out/a.counters.json"
python3 - "$out/a.counters.json" "$N" <<'PY' || mnic_die "A's event counters (above)"
import json, sys
c = json.load(open(sys.argv[1])); e, n = c["engine"], int(sys.argv[2])
print("A: cq_arms %d cq_events %d eq_raises %d dbch_raises %d" %
      (e["cq_arms"], e["cq_events"], e["eq_raises"], c["port"]["dbch_raises"]))
ok = e["cq_events"] >= n and e["eq_raises"] == e["cq_events"] and e["cq_arms"] >= e["cq_events"]
ok = ok and all(e[k] == 0 for k in ("eq_overflows", "cq_arm_refused", "cq_arm_stale", "cq_arm_no_eq"))
sys.exit(0 if ok else 1)
PY
python3 "$MNIC_ROOT/tests/system/mnic_bar.py" "$A" | grep -q "irq_hosts=none" ||
  mnic_die "A's init segment still names a host after the ping-pong exited"
echo "PASS cq_event_a15"
