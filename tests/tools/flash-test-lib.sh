# Shared by the flash tests (tests/system/flash_update.sh, flash_signed.sh,
# flash_rollback.sh), sourced after qemu-board/lib.sh.  The caller sets M
# (mnicctl), and per board: board, out (its directory, with the switch at
# $out/sw), A (the BAR file), mac.  flash_nic leaves the QEMU pid in nic_pid.

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
fail() { echo "--- NIC log:"; tail -40 "$out/nic.log" 2>/dev/null || true; mnic_die "$board: $*"; }
expect_rc() {   # want-rc regex command...
  local want=$1 re=$2 rc=0; shift 2
  "$@" >"$out/last.out" 2>"$out/last.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out/last.out" "$out/last.err"; fail "'$*': exit $rc, want $want"; }
  grep -qE "$re" "$out/last.out" "$out/last.err" || { cat "$out/last.out" "$out/last.err"; fail "'$*': no '$re'"; }
  echo "ok: $board: exit $want: ${*##*/}"
}
# flash_nic NAME-PREFIX nic.sh-flash-args...: the board booted through the
# loader from those flash banks, run mode, its log appended to $out/nic.log
flash_nic() {
  local prefix=$1; shift
  qemu-board/nic.sh --board "$board" --name "$prefix-$board" --mac "$mac" --switch "$out/sw" \
    --bar "$A" "$@" -- run db_min_us=100 >>"$out/nic.log" 2>&1 &
  nic_pid=$!; mnic_track $nic_pid
}
wait_running() {   # VERSION: the NIC answers, runs VERSION, and confirmed it
  local end=$((SECONDS + 90)) got=
  while [ $SECONDS -lt $end ]; do
    kill -0 "$nic_pid" 2>/dev/null || fail "QEMU exited while waiting for $1"
    got=$("$M" -d "$A" --timeout 2000 --json fw 2>/dev/null |
          json 'd["running"]["version"] + (" confirmed" if d["confirmed"] else "")' 2>/dev/null) || got=
    [ "$got" = "$1 confirmed" ] && return 0
    sleep 0.2
  done
  fail "not running $1 confirmed (last: '$got')"
}
fwq() { "$M" -d "$A" --json fw | json "$1"; }

# flash_per_board SCRIPT: with more than one board in BOARDS, run SCRIPT
# once per board, all at the same time (each board has its own switch, BAR
# files and flash files under $root/<board>; FLASH_BOARD_N is the board's
# place in BOARDS, which the board ids follow), print each run's log in
# order and exit with failure if any failed.  With one board (or in such a
# run) it returns and the script goes on with that board.
flash_per_board() {
  local script b i=0 st rc=0 pids=() names=()
  [ -z "${FLASH_BOARD_N:-}" ] || return 0
  # shellcheck disable=SC2086
  set -- $BOARDS
  if [ $# -le 1 ]; then FLASH_BOARD_N=1; return 0; fi
  script=$(realpath "$0")
  for b; do
    i=$((i + 1))
    FLASH_BOARD_N=$i BOARDS=$b bash "$script" >"$root/$b.log" 2>&1 &
    pids+=($!); names+=("$b"); mnic_track $!
  done
  for i in "${!pids[@]}"; do
    st=0; wait "${pids[$i]}" || st=$?
    echo "=== ${names[$i]}: exit $st (log: $root/${names[$i]}.log)"
    cat "$root/${names[$i]}.log"
    [ $st = 0 ] || rc=1
  done
  [ $rc = 0 ] || echo "FAIL: $(basename "$script"): a board failed (above)"
  exit $rc
}
