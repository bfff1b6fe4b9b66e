#!/usr/bin/env bash
# `make demo` with POSIX NICs (issue 6) as a test: scripts/demo.sh POSIX=1
# with a short run, 1 % loss each way on every port and captures; then
#   - exit status 0 and "RESULT: PASS" in the report
#   - the report's totals: lost, duplicated, out of order, corrupt, error
#     completions all 0, received = sent, host B's application on NIC C
#   - every phase (before / stopped / restored / after) has a row
#   - the migration figures (checkpoint/transfer/restore, image bytes, QP bytes)
#   - build/.../timeline.svg exists and holds both plotted directions
#   - one capture per NIC, non-empty
# and that the report can fail: the same run's outputs with one message
# marked lost (and, apart, one duplicate) must give exit 1 and RESULT: FAIL.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
out=$MNIC_ROOT/build/test-integration/demo-posix
rm -rf "$out"; mkdir -p "$out"
fail() { echo "demo_posix: FAIL: $*"; exit 1; }

rc=0
POSIX=1 QPS=${DEMO_QPS:-6} DURATION=${DEMO_DURATION:-5} LOSS=0.01 PCAP=1 DEMO_OUT="$out/run" \
  bash "$MNIC_ROOT/scripts/demo.sh" >"$out/report.txt" 2>"$out/demo.err" || rc=$?
cat "$out/report.txt"
[ $rc = 0 ] || { tail -20 "$out/demo.err"; fail "demo exit status $rc"; }
r=$out/report.txt
grep -q "^RESULT: PASS" "$r" || fail "no RESULT: PASS"
for k in lost duplicated "out of order" corrupt "error compl."; do
  grep -Eq "^  $k +0$" "$r" || fail "report: '$k' is not 0"
done
sent=$(awk '$1 == "sent" { print $2 }' "$r"); recv=$(awk '$1 == "received" { print $2 }' "$r")
[ -n "$sent" ] && [ "$sent" -gt 1000 ] && [ "$sent" = "$recv" ] ||
  fail "sent '$sent' / received '$recv': want equal and > 1000"
for ph in before stopped restored after; do
  grep -Eq "^$ph +[0-9.]+ +[0-9.]+ " "$r" || fail "no $ph phase row"
done
grep -q "migrations seen by B: 1, B ends on $out/run/c.bar" "$r" || fail "host B did not end on NIC C"
grep -q "loss: drop=0.01 each way" "$r" || fail "LOSS not applied"
for k in checkpoint transfer restore; do
  grep -Eq "^  $k +[0-9]+\.[0-9]{3} ms" "$r" || fail "no $k time"
done
grep -Eq "^  dump image +[1-9][0-9]* bytes" "$r" || fail "no dump image size"
grep -Eq "^    QP +6 objects +[1-9][0-9]* bytes" "$r" || fail "no QP bytes for 6 QPs"
grep -q "address 10.109.0.3, 0 paused: yes" "$r" || fail "A's QPs do not address NIC C"
svg=$out/run/timeline.svg
[ -s "$svg" ] && grep -q "<svg" "$svg" && grep -q ">A -> B<" "$svg" && grep -q ">B -> A<" "$svg" &&
  [ "$(grep -c "<path" "$svg")" -ge 4 ] ||
  fail "timeline.svg missing or without both directions"
for n in a b c; do
  [ "$(stat -c %s "$out/run/pcap/$n.pcap" 2>/dev/null || echo 0)" -gt 10000 ] || fail "capture of NIC $n empty"
done
rm -f "$out"/run/pcap/*.pcap   # a few hundred MB: checked, not kept

# The verdict can fail: the same outputs, with a loss and then a duplicate.
for bad in "lost=0 /lost=1 " "dup=0 /dup=2 "; do
  cp -r "$out/run" "$out/doctored"
  sed -i "s/^\(TRAFFIC PASS .*\) ${bad%%/*}/\1 ${bad#*/}/" "$out/doctored/traffic-a.log"
  grep -q "${bad#*/}" "$out/doctored/traffic-a.log" || fail "could not doctor the log ($bad)"
  brc=0
  python3 "$MNIC_ROOT/scripts/demo-report.py" --dir "$out/doctored" --board posix --qps 6 \
    --exit-a 0 --exit-b 0 --migrate-rc 0 --c-ip 10.109.0.3 >"$out/doctored.txt" 2>&1 || brc=$?
  [ $brc = 1 ] && grep -q "^RESULT: FAIL" "$out/doctored.txt" ||
    fail "a doctored report (${bad#*/}) did not fail (exit $brc)"
  echo "doctored ${bad#*/}-> $(grep '^RESULT' "$out/doctored.txt")"
  rm -rf "$out/doctored"
done
echo "demo_posix: PASS"
