#!/usr/bin/env bash
# Live migration on the emulated SoC (issue 4, QEMU item): three QEMU A15
# NICs A, B, C on the switch; mnic-traffic between host A and host B on
# 4 QPs (SEND, WRITE_WITH_IMM, READ, atomics, every message sequenced and
# checksummed), each host app driving its NIC through the file behind the
# NIC's ivshmem BAR (qemu-board/nic.sh --bar); B's process is migrated to
# C mid-stream with `mnicctl migrate --pid`.  Checks: both apps PASS (no
# loss, duplicate, reorder, error completion; atomics exactly once), B's
# process ends on C, A's QPs address C, C's RESUMEs were ACKed.
# The loss here is the QEMU NICs' own (receive-ring overflow).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
root=$MNIC_ROOT
out=$root/build/test-system/migrate-qemu; rm -rf "$out"; mkdir -p "$out"
M=$root/build/host/hostdrv/mnicctl
T=$root/build/host/hostdrv/mnic-traffic
[ -f "$root/build/qemu-virt-a15/mnic-fw.elf" ] || mnic_die "A15 firmware not built: run make BOARD=qemu-virt-a15"
# Keyed: unkeyed RESUMEs are refused unless MIG_CONFIG allows them.
KEY=000102030405060708090a0b0c0d0e0f
for f in "$M" "$T"; do [ -x "$f" ] || mnic_die "$f missing: run make hostdrv"; done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

mnic_switch_start "$out/sw"
i=0
for n in a b c; do
  i=$((i + 1))
  "$root/qemu-board/nic.sh" --board qemu-virt-a15 --name "mq-$n" --mac "52:54:00:74:00:0$i" \
    --switch "$out/sw" --bar "$out/$n.bar" -- run db_min_us=200 db_max_us=2000 >"$out/$n.log" 2>&1 &
  mnic_track $!
done
for n in a b c; do
  ok=0
  for _ in $(seq 600); do
    if [ -s "$out/$n.bar" ] && python3 "$root/tests/system/mnic_bar.py" "$out/$n.bar" 2>/dev/null |
         grep -q "state=2"; then ok=1; break; fi
    sleep 0.1
  done
  [ $ok = 1 ] || { tail -20 "$out/$n.log"; mnic_die "NIC $n did not reach READY"; }
done

port=$((25000 + RANDOM % 5000))
"$T" -d "$out/a.bar" -p $port -q 4 -D 8 -t 90 -k $KEY -T "$out/timeline-a.csv" >"$out/traffic-a.log" 2>&1 &
TA=$!; mnic_track $TA
"$T" -d "$out/b.bar" -p $port -q 4 -D 8 -t 90 -k $KEY -N "$out/notify" -T "$out/timeline-b.csv" 127.0.0.1 \
  >"$out/traffic-b.log" 2>&1 &
TB=$!; mnic_track $TB
mnic_wait_line "$out/traffic-b.log" "connected" 60 $TB || { cat "$out"/traffic-*.log; mnic_die "no connection"; }
sleep 3
"$M" migrate --from "$out/b.bar" --to "$out/c.bar" --pid $TB --notify "$out/notify" \
  >"$out/migrate.log" 2>&1 || { cat "$out/migrate.log"; mnic_die "mnicctl migrate failed"; }
grep -E "^(migrated|checkpoint|transfer|restore|resume|frozen)" "$out/migrate.log"
mnic_wait_pid $TA 120; ra=$MNIC_RC
mnic_wait_pid $TB 120; rb=$MNIC_RC
grep -h "^TRAFFIC" "$out"/traffic-*.log || true
[ "$ra" = 0 ] && [ "$rb" = 0 ] || { grep -hv "^TRAFFIC" "$out"/traffic-*.log | head -20; mnic_die "traffic: A exit $ra, B exit $rb"; }
grep -q "^TRAFFIC PASS role=client .* migrations=1 .*device=$out/c.bar" "$out/traffic-b.log" ||
  mnic_die "B's process did not end on C"
got=$("$M" -d "$out/a.bar" --json qp list | json "sorted(set((q['dgid'], q['paused'], q['state']) for q in d))")
[ "$got" = "[('10.116.0.3', 0, 'RTS')]" ] || mnic_die "A's QPs: $got, want all RTS at C (10.116.0.3)"
acked=$("$M" -d "$out/c.bar" --json counters --engine | json "d['engine']['mig_resumes_acked']")
[ "$acked" -ge 4 ] || mnic_die "C: mig_resumes_acked=$acked, want 4"
echo "migrate_qemu: PASS (downtime seen by A: $(sed -n 's/^TRAFFIC PASS role=server .*max_gap_ms=\([0-9.]*\) .*/\1/p' "$out/traffic-a.log") ms)"
