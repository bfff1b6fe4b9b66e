#!/usr/bin/env bash
# Both ARM boards boot in self-test mode, every driver check passes on the
# emulated hardware, the firmware exits 0 through semihosting, and the host
# sees the init segment the firmware wrote into the ivshmem BAR file; the
# BAR is an ivshmem-doorbell, whose MSI-X loopback (a Doorbell write to the
# device itself arriving as the GICv2m SPI) is one of the checks.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/selftest; rm -rf "$out"; mkdir -p "$out"

for board in qemu-virt-a15 qemu-virt-a72; do
  "$MNIC_ROOT/qemu-board/nic.sh" --board $board --name st-$board --selftest \
    --bar "$out/$board.bar" >"$out/$board.log" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_pid $pid 60
  cat "$out/$board.log"
  [ "$MNIC_RC" = 0 ] || mnic_die "$board self-test exited $MNIC_RC"
  grep -q "^SELFTEST RESULT PASS" "$out/$board.log" || mnic_die "$board: no PASS marker"
  n=$(grep -c "^SELFTEST .* PASS rc=0" "$out/$board.log")
  [ "$n" -ge 13 ] || mnic_die "$board: only $n checks passed"
  # nic.sh's default BAR is an ivshmem-doorbell: the MSI-X loopback ran
  grep -q "^SELFTEST ivshmem_doorbell .* PASS rc=0" "$out/$board.log" || \
    mnic_die "$board: the doorbell loopback (MSI-X -> GICv2m) did not pass"
  python3 "$(dirname "$0")/mnic_bar.py" "$out/$board.bar" | tee "$out/$board.bar.txt"
  grep -q "board=$board" "$out/$board.bar.txt" || mnic_die "$board: BAR does not name the board"
done
echo "self-test passed on both boards"
