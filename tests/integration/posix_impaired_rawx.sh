#!/usr/bin/env bash
# Two POSIX NICs (ASan+UBSan build) on a switch with seeded impairment on
# both (drop, duplicate, reorder, corrupt).  Every frame must still arrive
# exactly once and intact (rawx recovers by go-back-N), and the impairment
# layer must actually have hit frames (its counters, printed at exit).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/impaired; rm -rf "$out"; mkdir -p "$out"
mnic_switch_start "$out/switch"
export SAN=1
spec="drop=0.03,dup=0.02,reorder=0.03,corrupt=0.02"
"$MNIC_ROOT/qemu-board/nic.sh" --board posix --name p0 --mac 52:54:00:30:00:01 --switch "$out/switch" \
  --bar "$out/p0.bar" --impair "$spec,seed=11" -- rawx peers=52:54:00:30:00:02 count=2000 rto_ms=20 >"$out/p0.log" 2>&1 &
p0=$!; mnic_track $p0
"$MNIC_ROOT/qemu-board/nic.sh" --board posix --name p1 --mac 52:54:00:30:00:02 --switch "$out/switch" \
  --bar "$out/p1.bar" --impair "$spec,seed=22" -- rawx peers=52:54:00:30:00:01 count=2000 rto_ms=20 >"$out/p1.log" 2>&1 &
p1=$!; mnic_track $p1
mnic_wait_pid $p0 120; r0=$MNIC_RC
mnic_wait_pid $p1 120; r1=$MNIC_RC
cat "$out/p0.log" "$out/p1.log" | grep -vE "rawx: [0-9]+/" || true
[ "$r0" = 0 ] && [ "$r1" = 0 ] || { echo "exit codes $r0 $r1"; exit 1; }
for f in "$out/p0.log" "$out/p1.log"; do
  grep -q "^RAWX PASS peers=1 count=2000 delivered=4000 " "$f" || { echo "$f: no full delivery"; exit 1; }
  # Recovery really happened: retransmissions and rejected corrupt frames.
  grep -qE "^RAWX PASS .* retransmits=[1-9]" "$f" || { echo "$f: no retransmissions under loss?"; exit 1; }
  grep -qE "impair (tx|rx): frames=[0-9]+ dropped=[1-9][0-9]* duplicated=[1-9][0-9]* reordered=[1-9][0-9]* corrupted=[1-9]" "$f" \
    || { echo "$f: impairment counters missing or zero"; exit 1; }
done
