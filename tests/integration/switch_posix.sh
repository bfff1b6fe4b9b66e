#!/usr/bin/env bash
# mnic-switch (fabric/) carries verified RC traffic between two POSIX NICs
# (firmware/rcx.c: every byte and completion checked), and its counters
# account for every frame (tests/tools/switch_stats.py: the conservation
# rules of fabric/mnic_switch.c).
#   run 1 "clean": random opcodes and sizes up to 64 KiB; no frame of either
#          NIC is lost between NIC and switch (port rx = the NIC's
#          tx_packets + its announce frame), none dropped on a send error.
#   run 2 "impaired": the switch impairs NIC 1's port, matched by its MAC
#          (2 % drop, 1 % dup, 2 % reorder, 0.1 % corrupt, both directions):
#          rcx still passes, with retransmissions, and the switch counted
#          impaired drops on that port only.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/switch-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
[ -x "$fw" ] || mnic_die "$fw missing: run make BOARD=posix"
check=$MNIC_ROOT/tests/tools/switch_stats.py
m1=52:54:00:62:00:01 m2=52:54:00:62:00:02

run() {   # name rcx-args...
  local name=$1 pids=() i rc=0; shift
  mnic_switch_start "$out/$name-switch"
  for i in 1 2; do
    local me=52:54:00:62:00:0$i peer=52:54:00:62:00:0$((3 - i))
    "$fw" --name nic$i --vde "$out/$name-switch" --mac $me --bar "$out/$name-nic$i.bar" \
      --bar-size 64M -- rcx peer=$peer "$@" >"$out/$name-nic$i.log" 2>&1 &
    pids+=($!); mnic_track $!
  done
  for i in 0 1; do mnic_wait_pid "${pids[$i]}" 600; [ "$MNIC_RC" = 0 ] || rc=1; done
  grep -h "^RCX" "$out/$name"-nic*.log || true
  [ $rc = 0 ] || { tail -n 20 "$out/$name"-nic*.log; mnic_die "$name: a NIC failed"; }
  mnic_switch_stats "$out/$name-switch"
  grep "^mnic-switch: port" "$out/$name-switch.log" | tail -n 2
}
tx_packets() { sed -n 's/^RCX PASS .* tx_packets=\([0-9]*\) .*/\1/p' "$1"; }

MNIC_SWITCH=mnic run clean qps=4 msgs=500 max_size=65536 mtu=4
t1=$(tx_packets "$out/clean-nic1.log") t2=$(tx_packets "$out/clean-nic2.log")
python3 "$check" "$out/clean-switch.stats.json" \
  --expect "by_mac['$m1']['rx'] >= $t1 + 1" --expect "by_mac['$m2']['rx'] >= $t2 + 1" \
  --expect "total('dropped_send_error') == 0" --expect "total('impaired_drop') == 0" \
  --expect "len(ports) == 2" || mnic_die "clean: the switch's counters do not add up"
for i in 1 2; do
  grep -q "^RCX PASS qps=4 msgs=500 ops=2000 " "$out/clean-nic$i.log" || mnic_die "clean nic$i: not every operation completed"
done
mnic_cleanup

MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--impair $m1:drop=0.02,dup=0.01,reorder=0.02,corrupt=0.001,seed=11" \
  run impaired qps=2 msgs=300 max_size=16384 mtu=4 timeout_ms=300000
python3 "$check" "$out/impaired-switch.stats.json" \
  --expect "by_mac['$m1']['in_dropped'] > 0 and by_mac['$m1']['out_dropped'] > 0" \
  --expect "by_mac['$m1']['impaired_dup'] > 0 and by_mac['$m1']['impaired_corrupt'] >= 0" \
  --expect "by_mac['$m2']['impaired_drop'] == 0" \
  --expect "total('dropped_send_error') == 0" || mnic_die "impaired: the switch's counters do not add up"
grep -q "impairment bound" "$out/impaired-switch.log" || mnic_die "impaired: the rule never bound to a port"
for i in 1 2; do
  grep -q "^RCX PASS qps=2 msgs=300 ops=600 " "$out/impaired-nic$i.log" || mnic_die "impaired nic$i: not every operation completed"
done
grep -qE "^RCX PASS .* retransmits=[1-9]" "$out/impaired-nic1.log" "$out/impaired-nic2.log" \
  || mnic_die "impaired: no retransmissions under 2 % loss?"
echo "switch_posix: PASS"
