#!/usr/bin/env bash
# The ICRC engines on each board's emulated CPU (bench/icrc_board.c): on the
# A72 the CRC32X engine (what its firmware runs) and the table engine, on
# the A15 the table engine, each against the others, the spec's bitwise
# definition at every alignment and frames recorded from Linux rxe
# (tests/unit/rocev2/rxe_frames.h).  The host's engines (ISA-L, zlib, the
# table) are cross-checked by the unit test test_icrc.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/icrc; rm -rf "$out"; mkdir -p "$out"

for board in qemu-virt-a15 qemu-virt-a72; do
  elf=$MNIC_ROOT/build/$board/icrc-bench.elf
  [ -f "$elf" ] || mnic_die "$elf not built; run: make BOARD=$board icrc-bench"
  mnic_board_args "$board"
  # shellcheck disable=SC2086
  "$QEMU" $QEMU_BOARD_ARGS -kernel "$elf" -append check >"$out/$board.log" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_pid $pid 60
  cat "$out/$board.log"
  [ "$MNIC_RC" = 0 ] || mnic_die "$board: icrc-bench check exited $MNIC_RC (see $out/$board.log)"
  case $board in qemu-virt-a72) want=2 ;; *) want=1 ;; esac
  grep -q "^ICRC CHECK PASS engines=$want rxe_frames=3" "$out/$board.log" ||
    mnic_die "$board: no 'ICRC CHECK PASS engines=$want rxe_frames=3' line"
done
echo "ICRC engines agree on both boards"
