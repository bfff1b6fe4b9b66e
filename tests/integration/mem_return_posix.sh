#!/usr/bin/env bash
# Host memory is returned (issue 14, item 3a): the allocator behind rings,
# doorbell records and MR memory (hostdrv/lib/mem.c) frees on destroy, on
# a refused create and with the context, against real firmware (one POSIX
# NIC, the ASan+UBSan builds of mnicctl and mnic-tenant).
#   1. mnicctl: three rounds of create pd/cq/mr/qp + destroy by handle
#      (separate processes, as scripts do): `mnicctl mem` is back at its
#      start after each round; refused creates (a QP on a CQ that does not
#      exist, an MR of a PD that does not exist) leave nothing behind
#   2. a tenant makes and destroys 10,000 objects (mnic-tenant churn),
#      refused creates included, and checks the figure after every round
#   3. a tenant killed with its objects alive: its context and its memory
#      go with the reap; the next tenant starts from an empty range
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/mem-return-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl
TEN=$tools/mnic-tenant
for f in "$fw" "$M" "$TEN"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

mnic_switch_start "$out/switch"
"$fw" --name m --vde "$out/switch" --mac 52:54:00:75:00:01 --bar "$out/m.bar" \
  -- run db_min_us=20 db_max_us=1000 >"$out/m.log" 2>&1 &
nic=$!; mnic_track $nic
mnic_wait_line "$out/m.log" "^MNIC READY" 20 $nic || { cat "$out/m.log"; mnic_die "NIC not ready"; }
D=$out/m.bar
mem() { "$M" -d "$D" --json mem | json "d['$1']"; }
objects() { "$M" -d "$D" --json info | json "sum(d['in_use'].values())"; }

# ---- 1. mnicctl create / destroy rounds -----------------------------------------------
[ "$(mem in_use)" = 0 ] || mnic_die "memory in use before anything was made"
pd=$("$M" -d "$D" --json create pd | json 'd["handle"]')
start=$(mem in_use)
[ "$start" = 0 ] || mnic_die "a PD holds no memory, $start bytes in use"
for round in 1 2 3; do
  cq=$("$M" -d "$D" --json create cq 4096 | json 'd["handle"]')
  mr=$("$M" -d "$D" --json create mr "$pd" 1048576 | json 'd["handle"]')
  qp=$("$M" -d "$D" --json create qp "$pd" "$cq" | json 'd["handle"]')
  held=$(mem in_use)
  [ "$held" -gt 1048576 ] || mnic_die "round $round: $held bytes in use with a 1 MiB MR"
  # refused by the device: nothing may stay allocated
  rc=0; "$M" -d "$D" create qp "$pd" 0x7777 >"$out/refused.out" 2>&1 || rc=$?
  [ $rc = 1 ] || { cat "$out/refused.out"; mnic_die "a QP on a CQ that does not exist: exit $rc"; }
  rc=0; "$M" -d "$D" create mr 0x7777 65536 >"$out/refused.out" 2>&1 || rc=$?
  [ $rc = 1 ] || { cat "$out/refused.out"; mnic_die "an MR of a PD that does not exist: exit $rc"; }
  [ "$(mem in_use)" = "$held" ] || mnic_die "round $round: refused creates left $(( $(mem in_use) - held )) bytes"
  "$M" -d "$D" destroy qp "$qp" >/dev/null
  "$M" -d "$D" destroy mr "$mr" >/dev/null
  "$M" -d "$D" destroy cq "$cq" >/dev/null
  now=$(mem in_use)
  [ "$now" = "$start" ] || mnic_die "round $round: $now bytes in use after the teardown, $start at the start"
  [ "$(mem allocs)" = 0 ] && [ "$(mem free_blocks)" = 1 ] || mnic_die "round $round: $(mem allocs) allocations, $(mem free_blocks) free blocks left"
  echo "ok: round $round: $held bytes held, back to $now after destroy"
done
"$M" -d "$D" destroy pd "$pd" >/dev/null
[ "$(objects)" = 0 ] || mnic_die "objects left after the rounds"

# ---- 2. 10,000 objects through libmnic ---------------------------------------------------
MNIC_CTX_MEM=4M "$TEN" churn "$D" 10000 >"$out/churn.log" 2>&1 ||
  { cat "$out/churn.log"; mnic_die "churn failed"; }
grep -qE "^churn: 100[0-9]{2} objects made and destroyed, [0-9]+ creates refused, ([0-9]+) bytes in use \(\1 at the start\)" \
  "$out/churn.log" || { cat "$out/churn.log"; mnic_die "churn: no result line"; }
echo "ok: $(cat "$out/churn.log")"
[ "$(objects)" = 0 ] || mnic_die "objects left after the churn"

# ---- 3. a killed tenant's memory goes with its context -----------------------------------
MNIC_CTX_MEM=1M "$TEN" hold "$D" "$out/held" >"$out/hold.log" 2>&1 &
holder=$!; mnic_track $holder
mnic_wait_line "$out/hold.log" "^holding" 20 $holder || { cat "$out/hold.log"; mnic_die "holder"; }
kill -KILL $holder; wait $holder 2>/dev/null || true
read -r _ctx _qpn _cq _pd _lkey ua_off _ua_size <"$out/held"
"$M" -d "$D" ctx reap >/dev/null
[ "$(objects)" = 0 ] || mnic_die "the killed tenant's objects stayed after the reap"
# the next tenant gets the same range (first fit) and finds it empty
MNIC_CTX_MEM=1M "$TEN" churn "$D" 5 >"$out/after.log" 2>&1 || { cat "$out/after.log"; mnic_die "churn after the reap"; }
grep -qE "^churn: .* 0 bytes in use \(0 at the start\)" "$out/after.log" ||
  { cat "$out/after.log"; mnic_die "the tenant after the reap did not start from an empty range"; }
echo "ok: killed tenant (range $ua_off) reaped, its memory with it"
echo "PASS mem_return_posix"
