#!/usr/bin/env bash
# The RC traffic verifier (firmware/rcx.c) must be able to fail: with the
# two NICs disagreeing on the seed, each expects different payloads from
# its peer than the peer sends: the first to receive must report the
# mismatch and FAIL; its peer then fails too (by mismatch, or by timeout
# once the first has gone).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/rc-verifier; rm -rf "$out"; mkdir -p "$out"
mnic_switch_start "$out/switch"
pids=()
for i in 1 2; do
  "$MNIC_ROOT/build/posix/mnic-fw" --vde "$out/switch" --mac 52:54:00:63:00:0$i --bar "$out/n$i.bar" \
    -- rcx peer=52:54:00:63:00:0$((3 - i)) qps=1 msgs=50 max_size=4096 ops=send seed=$i timeout_ms=5000 \
    >"$out/n$i.log" 2>&1 &
  pids+=($!); mnic_track $!
done
for i in 0 1; do
  mnic_wait_pid "${pids[$i]}" 60
  n=$((i + 1))
  cat "$out/n$n.log" | grep -E "^RCX|E:" || true
  [ "$MNIC_RC" = 1 ] || mnic_die "nic$n exited $MNIC_RC, expected 1 (FAIL)"
  grep -q "^RCX FAIL" "$out/n$n.log" || mnic_die "nic$n printed no FAIL line"
done
grep -qE "does not match the peer's sequence|payload differs" "$out"/n1.log "$out"/n2.log \
  || mnic_die "neither NIC reported the mismatch"
echo "the verifier rejects traffic it did not expect"
