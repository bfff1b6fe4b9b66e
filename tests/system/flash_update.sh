#!/usr/bin/env bash
# Firmware update on the QEMU boards (A15 and A72; BOARDS= to pick), booted
# as a board boots: the first-stage loader in flash0 picks and verifies a
# slot in flash1 (nic.sh --flash).  Per board:
#   1. slot A holds 1.0.0+1; `mnicctl fw --json` shows it running, confirmed
#   2. an image for the other board is refused by the NIC (FW_FLASH_BEGIN)
#   3. 1.1.0+2 streams into slot B while verified RDMA ping-pong traffic runs
#      between this NIC and a POSIX NIC (traffic alive before and after the
#      flash, every byte verified), then FW_ACTIVATE: the NIC resets, the
#      loader test-boots B, its self-test confirms it: 1.1.0+2 runs
#   4. 2.0.0+3, built with FW_SELFTEST_FAIL=1, into slot A and activated: it
#      fails its self-test on each of its 3 test boots, the loader reverts:
#      the NIC is back on 1.1.0+2, slot A BAD, one revert recorded
#   5. 1.2.0+4 into slot A (not older than the confirmed 1.1.0+2: anti-
#      rollback, flash_rollback.sh), the NIC is stopped, one payload byte of
#      slot A flipped in the flash file, the NIC restarted: it boots B,
#      reports slot A's digest mismatch, and FW_ACTIVATE refuses it
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
BOARDS=${BOARDS:-qemu-virt-a15 qemu-virt-a72}
root=$MNIC_ROOT/build/test-system/flash-update
# (a run for one board of several leaves its siblings' output alone)
[ -n "${FLASH_BOARD_N:-}" ] || { rm -rf "$root"; mkdir -p "$root"; }
M=$MNIC_ROOT/build/host-asan/hostdrv/mnicctl
PP=$MNIC_ROOT/build/host-asan/hostdrv/mnic-pingpong
posix=$MNIC_ROOT/build/posix/mnic-fw
for f in "$M" "$PP" "$posix"; do [ -x "$f" ] || mnic_die "$f missing: run make images"; done
command -v python3 >/dev/null || mnic_die "python3 missing"

. "$MNIC_ROOT/tests/tools/flash-test-lib.sh"
start_nic() { flash_nic fl --flash "$out/flash1.bin"; }

flash_per_board   # the boards at the same time, one run each
cd "$MNIC_ROOT"
n=$((FLASH_BOARD_N - 1))
for board in $BOARDS; do
  n=$((n + 1))
  out=$root/$board; mkdir -p "$out"
  A=$out/a.bar; mac=52:54:00:7e:00:0$n; posix_mac=52:54:00:7e:01:0$n
  elf=build/$board/mnic-fw.elf; bad_elf=build/$board-stfail/mnic-fw.elf
  case $board in qemu-virt-a15) other=qemu-virt-a72 ;; *) other=qemu-virt-a15 ;; esac
  for f in "$elf" "$bad_elf" "build/$other/mnic-fw.elf" "build/$board/loader/flash0.bin"; do
    [ -f "$f" ] || mnic_die "$f missing: run make images"
  done
  "$M" image build --board "$board" --version 1.0.0+1 -o "$out/v1.img" "$elf" >/dev/null
  "$M" image build --board "$board" --version 1.1.0+2 -o "$out/v2.img" "$elf" >/dev/null
  "$M" image build --board "$board" --version 2.0.0+3 -o "$out/bad.img" "$bad_elf" >/dev/null
  "$M" image build --board "$board" --version 1.2.0+4 -o "$out/v3.img" "$elf" >/dev/null
  "$M" image build --board "$other" --version 9.0.0 -o "$out/other.img" "build/$other/mnic-fw.elf" >/dev/null
  "$M" image flash-file -o "$out/flash1.bin" --slot-a "$out/v1.img" >/dev/null

  # ---- 1. boot through the loader ---------------------------------------
  mnic_switch_start "$out/sw"
  "$posix" --name "peer-$n" --vde "$out/sw" --mac "$posix_mac" --bar "$out/b.bar" \
    -- run db_min_us=20 db_max_us=1000 >"$out/posix.log" 2>&1 &
  ppid=$!; mnic_track $ppid
  mnic_wait_line "$out/posix.log" "^MNIC READY" 20 $ppid || mnic_die "POSIX peer not ready"
  start_nic
  mnic_wait_line "$out/nic.log" "^MNIC READY" 30 $nic_pid || fail "not ready"
  grep -q "^LOADER: slot A 1.0.0+1" "$out/nic.log" || fail "the loader did not boot slot A"
  wait_running 1.0.0+1
  [ "$(fwq '(d["running"]["slot"], d["slots"][0]["state"], d["slots"][1]["state"], d["board_id"])')" \
    = "('A', 'valid', 'empty', $n)" ] || fail "fw --json after boot: $("$M" -d "$A" --json fw)"
  echo "ok: $board: booted 1.0.0+1 from slot A through the loader, confirmed"

  # ---- 2. wrong board -----------------------------------------------------
  expect_rc 1 "refused the image: image is for another board" "$M" -d "$A" flash "$out/other.img"
  [ "$(fwq 'd["slots"][1]["state"]')" = empty ] || fail "a refused image changed slot B"

  # ---- 3. flash while traffic runs, activate ---------------------------------
  port=$(mnic_free_ports 1 $((19300 + 200 * (n - 1) + RANDOM % 100))) || mnic_die "no free 127.0.0.1 port"
  # Each FW_FLASH_DATA erases at most one sector, but QEMU's pflash erase
  # can hold the NIC's event loop for a good part of a second on a loaded
  # host; retry_cnt 7 is seven retries (IBA), so with the default 67 ms ACK
  # timeout such a stall would end the connection (RETRY_EXC_ERR).  An
  # application that must ride out pauses sets a longer timeout: 2^18 x
  # 4.096 us = 1.07 s per try, ~8.6 s of silence before it gives up.
  "$PP" -d "$out/b.bar" -p $port -s 1024 -n 3000 -V -T 60 -A 18 >"$out/pp-srv.log" 2>&1 &
  srv=$!; mnic_track $srv
  "$PP" -d "$A" -p $port -s 1024 -n 3000 -V -T 60 -A 18 127.0.0.1 >"$out/pp-cli.log" 2>&1 &
  cli=$!; mnic_track $cli
  # traffic is flowing once the NIC's receive counter moves
  rx0=$("$M" -d "$A" --json counters --port | json 'd["port"]["eth0_rx_frames"]')
  end=$((SECONDS + 30))
  until [ "$("$M" -d "$A" --json counters --port | json 'd["port"]["eth0_rx_frames"]')" -gt $((rx0 + 50)) ]; do
    [ $SECONDS -lt $end ] && kill -0 $cli 2>/dev/null || { cat "$out"/pp-*.log; fail "no traffic"; }
    sleep 0.1
  done
  expect_rc 0 "written to slot B and verified" "$M" -d "$A" flash "$out/v2.img"
  kill -0 $cli 2>/dev/null || { cat "$out"/pp-cli.log; fail "traffic ended before the flash did: raise -n"; }
  mnic_wait_pid $cli 120; crc=$MNIC_RC
  mnic_wait_pid $srv 30; src=$MNIC_RC
  [ "$crc" = 0 ] && [ "$src" = 0 ] || { cat "$out"/pp-*.log; fail "ping-pong during the flash: client $crc server $src"; }
  grep -q "^data verified: 3000 messages received, every byte" "$out/pp-cli.log" ||
    { cat "$out/pp-cli.log"; fail "ping-pong did not verify every message"; }
  echo "ok: $board: 3000 verified ping-pongs ran across the flash"
  [ "$(fwq '(d["slots"][1]["state"], d["slots"][1]["version"], d["running"]["version"])')" \
    = "('valid', '1.1.0+2', '1.0.0+1')" ] || fail "slot B after flash: $("$M" -d "$A" --json fw)"
  expect_rc 0 "activated as test" "$M" -d "$A" fw activate
  wait_running 1.1.0+2
  [ "$(fwq '(d["running"]["slot"], d["running"]["boot_event"], d["bootrec"]["active"])')" \
    = "('B', 'test', 1)" ] || fail "after activate: $("$M" -d "$A" --json fw)"
  grep -q "^LOADER: slot B 1.1.0+2 test boot 1" "$out/nic.log" || fail "no test boot of slot B"
  grep -q "^FW SELFTEST PASS slot B version 1.1.0+2 confirmed" "$out/nic.log" || fail "B not confirmed"
  echo "ok: $board: activated 1.1.0+2: test boot, self-test passed, slot B confirmed"

  # ---- 4. a firmware whose self-test fails is rolled back ----------------------
  expect_rc 0 "written to slot A and verified" "$M" -d "$A" flash "$out/bad.img"
  expect_rc 0 "activated as test" "$M" -d "$A" fw activate
  mnic_wait_line "$out/nic.log" "^LOADER: slot A reverted" 90 $nic_pid || fail "the loader never reverted slot A"
  wait_running 1.1.0+2
  [ "$(grep -c '^FW SELFTEST FAIL slot A version 2.0.0+3: not confirmed, resetting' "$out/nic.log")" = 3 ] ||
    fail "want 3 failed test boots of 2.0.0+3"
  [ "$(fwq '(d["running"]["slot"], d["slots"][0]["state"], d["bootrec"]["reverts"], d["bootrec"]["test"])')" \
    = "('B', 'bad', 1, -1)" ] || fail "after revert: $("$M" -d "$A" --json fw)"
  echo "ok: $board: 2.0.0+3 failed its self-test 3 times, reverted to 1.1.0+2"

  # ---- 5. a corrupt inactive slot is refused ----------------------------------
  expect_rc 0 "written to slot A and verified" "$M" -d "$A" flash "$out/v3.img"
  mnic_cleanup_one() { kill "$nic_pid" 2>/dev/null || true; mnic_wait_pid "$nic_pid" 10; }
  mnic_cleanup_one
  python3 - "$out/flash1.bin" <<'EOF'
import sys
off = 0x100000 + 128 + 4096           # slot A, payload byte 4096
with open(sys.argv[1], "r+b") as f:
    f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0x01]))
EOF
  start_nic
  wait_running 1.1.0+2
  [ "$(fwq '(d["slots"][0]["image_error"], d["slots"][0]["active"])')" \
    = "('SHA-256 digest mismatch (corrupt image)', False)" ] || fail "corrupt slot A: $("$M" -d "$A" --json fw)"
  expect_rc 1 "refused the image: SHA-256 digest mismatch" "$M" -d "$A" fw activate
  [ "$(fwq '(d["running"]["version"], d["bootrec"]["test"])')" = "('1.1.0+2', -1)" ] ||
    fail "state changed after the refused activate"
  echo "ok: $board: corrupt slot A reported and refused by FW_ACTIVATE"
  mnic_cleanup
done
echo "flash_update: PASS ($BOARDS)"
