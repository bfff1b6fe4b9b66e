# Helpers of the doorbell tests (tests/integration/doorbell_irq_posix.sh,
# tests/system/doorbell_irq_a15.sh), sourced after qemu-board/lib.sh.
# They need M (a mnicctl) and out (the test's folder).

# counter BAR NAME: the port group's counter NAME (mnicctl --json counters)
counter() {
  "$M" -d "$1" --json counters | python3 -c "import json,sys; print(json.load(sys.stdin)['port']['$2'])"
}

# ms_of COMMAND...: its wall time in ms on stdout; its output in
# $out/last.out and $out/last.err; a failure ends the test with both
ms_of() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$out/last.out" 2>"$out/last.err" || { cat "$out/last.out" "$out/last.err" >&2; mnic_die "'$*' failed"; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}

# max_of doorbell_to_wire|cmd_rtt < mnic-db-bench's stderr: the max in us
max_of() {
  sed -n "s/.* $1 max \([0-9]*\)\.[0-9]* us.*/\1/p"
}
