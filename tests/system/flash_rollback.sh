#!/usr/bin/env bash
# Anti-rollback on the QEMU boards (A15 and A72; BOARDS= to pick), booted
# through the loader (docs/firmware-images.md "Anti-rollback").  Per board:
#   1. factory 1.1.0+2 in slot A: the minimum version is 0.0.0+0 (nothing
#      confirmed yet), so 1.0.0+1 would still be accepted by FW_FLASH_BEGIN
#   2. 1.2.0+3 flashed, activated, confirmed: the boot record's minimum is
#      raised to 1.2.0+3; the old slot A (1.1.0+2) now reports anti-rollback
#   3. 1.0.0+1 and 1.1.0+2 refused by FW_FLASH_BEGIN (their header), with a
#      clear status; the NIC answers and still runs 1.2.0+3, slot A untouched;
#      the same version again (1.2.0+3) is accepted
#   4. after a reset of the NIC the minimum is still 1.2.0+3 (it lives in
#      the boot record on flash)
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
BOARDS=${BOARDS:-qemu-virt-a15 qemu-virt-a72}
root=$MNIC_ROOT/build/test-system/flash-rollback
# (a run for one board of several leaves its siblings' output alone)
[ -n "${FLASH_BOARD_N:-}" ] || { rm -rf "$root"; mkdir -p "$root"; }
M=$MNIC_ROOT/build/host-asan/hostdrv/mnicctl
[ -x "$M" ] || mnic_die "$M missing: run make images"
command -v python3 >/dev/null || mnic_die "python3 missing"

. "$MNIC_ROOT/tests/tools/flash-test-lib.sh"
start_nic() { flash_nic rb --flash "$out/flash1.bin"; }

flash_per_board   # the boards at the same time, one run each
cd "$MNIC_ROOT"
n=$((FLASH_BOARD_N - 1))
for board in $BOARDS; do
  n=$((n + 1))
  out=$root/$board; mkdir -p "$out"
  A=$out/a.bar; mac=52:54:00:7e:20:0$n
  elf=build/$board/mnic-fw.elf
  for f in "$elf" "build/$board/loader/flash0.bin"; do [ -f "$f" ] || mnic_die "$f missing: run make images"; done
  "$M" image build --board "$board" --version 1.0.0+1 -o "$out/v1.img" "$elf" >/dev/null
  "$M" image build --board "$board" --version 1.1.0+2 -o "$out/v2.img" "$elf" >/dev/null
  "$M" image build --board "$board" --version 1.2.0+3 -o "$out/v3.img" "$elf" >/dev/null
  "$M" image flash-file -o "$out/flash1.bin" --slot-a "$out/v2.img" >/dev/null

  # ---- 1. nothing confirmed yet: no minimum ---------------------------------
  mnic_switch_start "$out/sw"
  start_nic
  mnic_wait_line "$out/nic.log" "^MNIC READY" 30 $nic_pid || fail "not ready"
  wait_running 1.1.0+2
  [ "$(fwq 'd["bootrec"]["min_version"]')" = 0.0.0+0 ] || fail "fresh minimum: $("$M" -d "$A" --json fw)"

  # ---- 2. a confirmed update raises the minimum ---------------------------------
  expect_rc 0 "written to slot B and verified" "$M" -d "$A" flash "$out/v3.img"
  expect_rc 0 "activated as test" "$M" -d "$A" fw activate
  wait_running 1.2.0+3
  [ "$(fwq '(d["bootrec"]["min_version"], d["slots"][0]["version"], d["slots"][0]["image_error"])')" \
    = "('1.2.0+3', '1.1.0+2', \"version below the board's minimum (anti-rollback): use a newer image\")" ] ||
    fail "after confirming 1.2.0+3: $("$M" -d "$A" --json fw)"
  expect_rc 0 "rollback +images older than 1.2.0\+3 are refused" "$M" -d "$A" fw
  echo "ok: $board: confirming 1.2.0+3 raised the minimum; slot A (1.1.0+2) reports anti-rollback"

  # ---- 3. rolled-back versions refused, the NIC unchanged -------------------------
  for img in v1 v2; do
    expect_rc 1 "the NIC refused the image: version below the board's minimum \(anti-rollback\)" \
      "$M" -d "$A" flash "$out/$img.img"
    [ "$(fwq '(d["running"]["version"], d["confirmed"], d["slots"][0]["state"], d["slots"][0]["version"], d["update"]["state"])')" \
      = "('1.2.0+3', True, 'valid', '1.1.0+2', 'idle')" ] || fail "after refusing $img: $("$M" -d "$A" --json fw)"
    "$M" -d "$A" info >/dev/null || fail "the NIC stopped answering after refusing $img"
  done
  expect_rc 0 "written to slot A and verified" "$M" -d "$A" flash "$out/v3.img"
  echo "ok: $board: 1.0.0+1 and 1.1.0+2 refused at FW_FLASH_BEGIN, 1.2.0+3 again accepted"

  # ---- 4. the minimum survives a reset --------------------------------------------
  kill "$nic_pid" 2>/dev/null || true; mnic_wait_pid "$nic_pid" 10
  start_nic
  wait_running 1.2.0+3
  [ "$(fwq 'd["bootrec"]["min_version"]')" = 1.2.0+3 ] || fail "minimum after restart: $("$M" -d "$A" --json fw)"
  expect_rc 1 "version below the board's minimum" "$M" -d "$A" flash "$out/v2.img"
  echo "ok: $board: the minimum survives a restart"
  mnic_cleanup
done
echo "flash_rollback: PASS ($BOARDS)"
