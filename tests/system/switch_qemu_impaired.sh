#!/usr/bin/env bash
# Two QEMU A15 NICs (virtio-net on the boards' drivers, the engine on ARM)
# run verified RC traffic (firmware/rcx.c, lab image) through mnic-switch
# while the switch impairs one of their ports (matched by its MAC; 2 %
# drop, 0.5 % duplicate, 1 % reorder, both directions): the first test of
# the boards under loss the fabric injects on purpose.  Passes when both
# NICs complete every operation, the switch counted impaired drops on that
# port (and none elsewhere), and its counters account for every frame.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/switch-qemu-impaired; rm -rf "$out"; mkdir -p "$out"
board=qemu-virt-a15
m1=52:54:00:64:00:01 m2=52:54:00:64:00:02
MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--impair $m1:drop=0.02,dup=0.005,reorder=0.01,seed=${SWITCH_SEED:-18}" \
  mnic_switch_start "$out/switch"
pids=()
for i in 1 2; do
  me=52:54:00:64:00:0$i peer=52:54:00:64:00:0$((3 - i))
  "$MNIC_ROOT/qemu-board/nic.sh" --board $board --name a15-$i --mac $me --switch "$out/switch" \
    --bar "$out/a15-$i.bar" -- rcx peer=$peer qps=2 msgs=150 max_size=16384 mtu=3 timeout_ms=250000 \
    >"$out/a15-$i.log" 2>&1 &
  pids+=($!); mnic_track $!
done
rc=0
for i in 0 1; do mnic_wait_pid "${pids[$i]}" 300; [ "$MNIC_RC" = 0 ] || rc=1; done
grep -h "^RCX" "$out"/a15-*.log || true
[ $rc = 0 ] || { for f in "$out"/a15-*.log; do echo "--- $f"; tail -n 15 "$f"; done; mnic_die "a NIC failed"; }
for i in 1 2; do
  grep -q "^RCX PASS qps=2 msgs=150 ops=300 " "$out/a15-$i.log" || mnic_die "a15-$i: not every operation completed"
done
mnic_switch_stats "$out/switch"
grep "^mnic-switch: port" "$out/switch.log" | tail -n 2
python3 "$MNIC_ROOT/tests/tools/switch_stats.py" "$out/switch.stats.json" \
  --expect "by_mac['$m1']['impaired_drop'] > 0" \
  --expect "by_mac['$m1']['in_dropped'] > 0 and by_mac['$m1']['out_dropped'] > 0" \
  --expect "by_mac['$m2']['impaired_drop'] == 0" || mnic_die "the switch's counters do not add up"
grep -qE "^RCX PASS .* retransmits=[1-9]" "$out"/a15-*.log || mnic_die "no retransmissions under 2 % loss?"
echo "switch_qemu_impaired: PASS"
