#!/usr/bin/env bash
# Bad input gets a clear one-line error and a non-zero exit, and leaves no
# process behind: unknown board, unknown mode, unknown argument, a QEMU that
# cannot start, a NIC that never reports ready.
set -uo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/bad; rm -rf "$out"; mkdir -p "$out"
fails=0

expect_fail() {   # description, expected message regex, command...
  local what=$1 re=$2; shift 2
  local msg rc
  msg=$("$@" 2>&1); rc=$?
  if [ $rc -eq 0 ] || ! grep -qE "$re" <<<"$msg"; then
    echo "FAIL: $what: rc=$rc output: $msg"; fails=$((fails + 1))
  else
    echo "ok: $what -> rc=$rc: $(grep -E "$re" <<<"$msg" | head -1)"
  fi
}

expect_fail "make with an unknown board" "unknown BOARD=nosuch" make -C "$MNIC_ROOT" BOARD=nosuch
expect_fail "nic.sh with an unknown board" "unknown board 'nosuch'" \
  "$MNIC_ROOT/qemu-board/nic.sh" --board nosuch --name x --selftest
expect_fail "nic.sh with a bad MAC" "bad --mac" \
  "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --mac 52:54 --selftest
expect_fail "nic.sh without a switch" "no switch at" \
  "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --mac 52:54:00:00:00:01 --switch "$out/none"
mnic_switch_start "$out/sw"
expect_fail "firmware: unknown mode" "unknown mode 'bogus'" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --mac 52:54:00:00:00:07 \
  --switch "$out/sw" --bar "$out/x.bar" -- bogus
# The product image has no lab mode (firmware/modes.h): it says where rcx
# and the driver self-test are.
expect_fail "firmware: rcx on the product image" "rawx, rcx and selftest are in the lab image" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --mac 52:54:00:00:00:08 \
  --switch "$out/sw" --bar "$out/x.bar" --image "$MNIC_ROOT/build/qemu-virt-a15/mnic-fw.elf" -- rcx peer=52:54:00:00:00:07
expect_fail "firmware: selftest on the product image" "unknown mode 'selftest'" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a72 --name x --selftest --bar "$out/x.bar" \
  --image "$MNIC_ROOT/build/qemu-virt-a72/mnic-fw.elf"
expect_fail "firmware: unknown argument" "unknown argument 'cuont=3'" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a72 --name x --selftest --bar "$out/x.bar" -- cuont=3
expect_fail "firmware: rawx without peers" "rawx needs peers=" \
  timeout 30 "$MNIC_ROOT/build/posix/mnic-fw" --vde "$out/sw" --mac 52:54:00:00:00:09 -- rawx
expect_fail "POSIX NIC without its switch" "cannot join the switch" \
  timeout 30 "$MNIC_ROOT/build/posix/mnic-fw" --vde "$out/none" --mac 52:54:00:00:00:09 -- run
# A QEMU that fails to start (its BAR cannot be mapped); nic.sh still passes
# -nic none and only explicit netdevs.
expect_fail "QEMU that cannot start" "qemu-system-arm: unable to map backing store" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --selftest --bar /dev/null \
  --bar-kind plain
# The ivshmem-doorbell's server wants a regular file it can size.
expect_fail "doorbell BAR that is not a file" "is not a regular file" \
  timeout 30 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --selftest --bar /dev/null
# A NIC that never reports ready: the wait gives up, the NIC is killed.
"$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name x --selftest --bar "$out/y.bar" --gdb >"$out/gdb.log" 2>&1 &
pid=$!; mnic_track $pid
if mnic_wait_line "$out/gdb.log" "READY|SELFTEST BEGIN" 2 $pid; then
  echo "FAIL: a QEMU halted for gdb reported ready"; fails=$((fails + 1))
else
  mnic_cleanup
  if kill -0 $pid 2>/dev/null; then echo "FAIL: pid $pid survived cleanup"; fails=$((fails + 1)); else echo "ok: never-ready NIC detected and killed"; fi
fi
[ $fails -eq 0 ]
