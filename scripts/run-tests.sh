#!/usr/bin/env bash
# Run the whole suite: host unit tests (plain, then ASan+UBSan), integration
# tests (POSIX NICs) and system tests (QEMU boards).  Prints each runner's
# own output, then one final line "N passed, M failed".  Exit non-zero on
# any failure.  Filter with TESTS=<substring> (matches test names).
set -uo pipefail
cd "$(dirname "$0")/.."
filter=${TESTS:-}
passed=0; failed=0; failures=()
logdir=build/test-logs; mkdir -p "$logdir"

run_cmocka() {   # name binary
  local name=$1 bin=$2 out p f
  out=$("$bin" 2>&1); local rc=$?
  printf '%s\n' "$out"
  printf '%s\n' "$out" >"$logdir/$(echo "$name" | tr / _).log"
  p=$(printf '%s\n' "$out" | sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  f=$(printf '%s\n' "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  p=${p:-0}; f=${f:-0}
  # A crash (sanitizer abort) leaves no summary: count the binary as failed.
  if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
  [ "$f" = 0 ] || failures+=("$name")
}

# The module graph (docs/ARCHITECTURE.md "Layers"): the checker's own
# self-test on synthetic trees, then every include of the tree.
if [ -z "$filter" ] || [[ build/layering == *$filter* ]]; then
  echo "=== build/layering"
  log=$logdir/build_layering.log
  if { python3 scripts/check-layering.py --selftest &&
       python3 scripts/check-layering.py --graph; } >"$log" 2>&1; then
    passed=$((passed + 1)); res=PASS
  else
    failed=$((failed + 1)); res=FAIL; failures+=(build/layering)
    grep -v '^  ' "$log" | tail -25 | sed 's/^/    | /'
  fi
  echo "[ $res ] build/layering ($(tail -1 "$log" | sed 's/^layering: //'), log: $log)"
fi

for variant in host host-asan; do
  for bin in build/$variant/unit/*; do
    [ -x "$bin" ] || continue
    name="$variant/$(basename "$bin")"
    [ -z "$filter" ] || [[ $name == *$filter* ]] || continue
    echo "=== unit $name"
    run_cmocka "$name" "$bin"
  done
done

for t in tests/integration/*.sh tests/system/*.sh; do
  [ -f "$t" ] || continue
  name=${t#tests/}; name=${name%.sh}
  [ -z "$filter" ] || [[ $name == *$filter* ]] || continue
  echo "=== $name"
  start=$(date +%s)
  log=$logdir/$(echo "$name" | tr / _).log
  if bash "$t" >"$log" 2>&1; then
    passed=$((passed + 1)); res=PASS
  else
    failed=$((failed + 1)); res=FAIL; failures+=("$name")
    tail -25 "$log" | sed 's/^/    | /'
  fi
  echo "[ $res ] $name ($(( $(date +%s) - start )) s, log: $log)"
done

# CI shows only the end of this output: repeat each failed test's last lines
# here, just above the summary, so the reason is on screen where it is read.
for f in "${failures[@]}"; do
  log=$logdir/$(echo "$f" | tr / _).log
  [ -f "$log" ] || continue
  echo "--- last lines of $f ($log)"
  tail -40 "$log" | sed 's/^/    | /'
done
[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
