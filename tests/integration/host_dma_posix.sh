#!/usr/bin/env bash
# Host-physical DMA end to end (issue 14; docs/host-interface.md "Host
# memory and translation", docs/libmnic.md "Host memory"): two POSIX NICs
# with a host-memory aperture each (--hostmem FILE), libmnic's BAR backend
# in host-memory mode with shuffled pages (MNIC_HOSTMEM_SHUFFLE=1: no two
# virtually adjacent pages need be physically adjacent), the ASan+UBSan
# tools:
#   1. mnic-traffic A <-> B: SEND, WRITE_WITH_IMM, READ, FETCH_ADD and
#      CMP_SWAP on 4 QPs, every byte verified; the rings, doorbell records
#      and the MR are at IOVAs (the process's VAs, far outside the
#      aperture), so nothing arrives unless the NIC translates every access
#      through the MTTs; both sides report a page layout with discontiguities
#   2. mnic-traffic exits without mnic_close: its pages and MTTs stay with
#      its context until the reap (mnicctl ctx reap), then every tenant page
#      is back in the aperture's free pool and no MTT is left (QUERY_DEVICE
#      n_mtt, through mnicctl info --json); mnic-pingpong A <-> B, 8 KiB
#      messages, every byte verified, and again everything back
#   3. mnicctl in host-memory mode: create/destroy by handle in separate
#      processes (the management pages found again at their VA), memory
#      and MTTs returned; a refused create leaves no MTT
#   3b. a 40 MiB MR (10240 pages) registers in CREATE_MTT + 3 WRITE_MTT
#      chunks + REG_MR (commands counted by the NIC), its pages back after
#   4. the same NICs' MTT refusal counters stayed 0 (libmnic only sends
#      page lists the firmware accepts)
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/host-dma-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl
T=$tools/mnic-traffic
PP=$tools/mnic-pingpong
for f in "$fw" "$M" "$T" "$PP" "$tools/mnic-tenant"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

mnic_switch_start "$out/switch"
start_nic() {   # name mac
  "$fw" --name "$1" --vde "$out/switch" --mac "$2" --bar "$out/$1.bar" \
    --hostmem "$out/$1.bar.hostmem" --hostmem-size 64M \
    -- run db_min_us=20 db_max_us=1000 >"$out/$1.log" 2>&1 &
  local pid=$!; mnic_track $pid
  mnic_wait_line "$out/$1.log" "^MNIC READY" 20 $pid || { cat "$out/$1.log"; mnic_die "$1 not ready"; }
}
start_nic a 52:54:00:76:00:01
start_nic b 52:54:00:76:00:02
A=$out/a.bar B=$out/b.bar
export MNIC_HOSTMEM_SHUFFLE=1
free_pages() { "$M" -d "$1" --json mem | json "d['hostmem_free_pages']"; }
n_mtt() { "$M" -d "$1" --json info | json "d['mtt']['in_use']"; }
for d in "$A" "$B"; do
  [ "$("$M" -d "$d" --json info | json "d['mtt']['hostmem_size']")" = 67108864 ] ||
    mnic_die "$d: QUERY_DEVICE does not report the 64 MiB aperture"
done
fa=$(free_pages "$A") fb=$(free_pages "$B")
[ "$fa" -gt 16000 ] && [ "$fb" -gt 16000 ] || mnic_die "free pages of a 64 MiB aperture: $fa, $fb"

# ---- 1. verified traffic over translated, shuffled pages ---------------------------------
port=$((18900 + RANDOM % 500))
"$T" -d "$A" -p $port -q 4 -n 300 -t 60 >"$out/srv.log" 2>&1 &
srv=$!; mnic_track $srv
rc=0; "$T" -d "$B" -p $port -q 4 -n 300 -t 60 127.0.0.1 >"$out/cli.log" 2>&1 || rc=$?
mnic_wait_pid $srv 60
[ $rc = 0 ] && [ "$MNIC_RC" = 0 ] || { cat "$out/srv.log" "$out/cli.log"; mnic_die "traffic: client $rc server $MNIC_RC"; }
for side in srv cli; do
  grep -qE "^TRAFFIC PASS .* lost=0 dup=0 ooo=0 bad=0 errors=0 " "$out/$side.log" ||
    { cat "$out/$side.log"; mnic_die "$side: no clean TRAFFIC PASS line"; }
  line=$(grep "^host memory:" "$out/$side.log") || { cat "$out/$side.log"; mnic_die "$side: not in host-memory mode"; }
  disc=$(sed -E 's/.* ([0-9]+) discontiguities.*/\1/' <<<"$line")
  [ "$disc" -gt 100 ] || mnic_die "$side: only $disc discontiguities in its page layout: not shuffled"
  echo "ok: $side: $line"
done
echo "ok: verified traffic: $(grep '^TRAFFIC' "$out/cli.log" | cut -c1-120)"
grep "^ops posted" "$out/cli.log"

# ---- 2. the tenants' pages and MTTs went back --------------------------------------------
[ "$(free_pages "$A")" -lt "$fa" ] && [ "$(n_mtt "$A")" = 21 ] ||
  mnic_die "A: the exited tenant's context should hold its pages and 21 MTTs until the reap"
"$M" -d "$A" ctx reap >/dev/null
"$M" -d "$B" ctx reap >/dev/null
[ "$(free_pages "$A")" = "$fa" ] && [ "$(free_pages "$B")" = "$fb" ] ||
  { "$M" -d "$A" ctx list; mnic_die "pages not returned: A $(free_pages "$A") free (was $fa), B $(free_pages "$B") (was $fb)"; }
[ "$(n_mtt "$A")" = 0 ] && [ "$(n_mtt "$B")" = 0 ] || { "$M" -d "$A" ctx list; "$M" -d "$A" info; mnic_die "MTTs left: A $(n_mtt "$A"), B $(n_mtt "$B")"; }
echo "ok: every tenant page back ($fa, $fb free) and no MTT left"

# mnic-pingpong (ibv_rc_pingpong's exchange) over the same kind of pages, every byte checked
port=$((port + 1))
"$PP" -d "$A" -p $port -s 8192 -n 100 -V -T 30 >"$out/pp-srv.log" 2>&1 &
srv=$!; mnic_track $srv
rc=0; "$PP" -d "$B" -p $port -s 8192 -n 100 -V -T 30 127.0.0.1 >"$out/pp-cli.log" 2>&1 || rc=$?
mnic_wait_pid $srv 60
[ $rc = 0 ] && [ "$MNIC_RC" = 0 ] &&
  grep -q "^data verified: 100 messages received, every byte" "$out/pp-cli.log" ||
  { cat "$out/pp-srv.log" "$out/pp-cli.log"; mnic_die "ping-pong: client $rc server $MNIC_RC"; }
echo "ok: ping-pong 8192 bytes x 100, verified: $(grep Mbit "$out/pp-cli.log")"

"$M" -d "$A" ctx reap >/dev/null; "$M" -d "$B" ctx reap >/dev/null
[ "$(free_pages "$A")" = "$fa" ] && [ "$(free_pages "$B")" = "$fb" ] && [ "$(n_mtt "$A")" = 0 ] &&
  [ "$(n_mtt "$B")" = 0 ] || mnic_die "pages or MTTs not returned after ping-pong"

# ---- 3. mnicctl in host-memory mode -------------------------------------------------------
pd=$("$M" -d "$A" --json create pd | json 'd["handle"]')
cq=$("$M" -d "$A" --json create cq 256 | json 'd["handle"]')
mr=$("$M" -d "$A" --json create mr "$pd" 262144 | json 'd["handle"]')
qp=$("$M" -d "$A" --json create qp "$pd" "$cq" | json 'd["handle"]')
# CQ: ring + record; MR: one; QP: SQ and RQ rings + records
[ "$(n_mtt "$A")" = 7 ] || mnic_die "$(n_mtt "$A") MTTs for a CQ, an MR and a QP, want 7"
rc=0; "$M" -d "$A" create qp "$pd" 0x7777 >"$out/refused.out" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$out/refused.out"; mnic_die "a QP on a CQ that does not exist: exit $rc"; }
[ "$(n_mtt "$A")" = 7 ] || mnic_die "a refused create left MTTs ($(n_mtt "$A"))"
for o in "qp $qp" "mr $mr" "cq $cq" "pd $pd"; do "$M" -d "$A" destroy $o >/dev/null; done
[ "$(n_mtt "$A")" = 0 ] || mnic_die "$(n_mtt "$A") MTTs left after destroy"
[ "$("$M" -d "$A" --json mem | json "d['in_use']")" = 0 ] || mnic_die "mnicctl memory not returned"
echo "ok: mnicctl create/destroy in host-memory mode: 7 MTTs, then none; memory returned"

# ---- 3b. a page list longer than one WRITE_MTT carries ------------------------------------
# 40 MiB = 10240 pages: CREATE_MTT, WRITE_MTT x 3 (4096 + 4096 + 2048), REG_MR
TEN=$tools/mnic-tenant
fa3=$(free_pages "$A")   # less mnicctl's management range, which stays
"$TEN" bigmr "$A" $((40 << 20)) >"$out/bigmr.log" 2>&1 || { cat "$out/bigmr.log"; mnic_die "bigmr failed"; }
grep -q "^bigmr: 10240 pages, 5 commands$" "$out/bigmr.log" ||
  { cat "$out/bigmr.log"; mnic_die "a 10240-page MR: not CREATE_MTT + 3 WRITE_MTT + REG_MR"; }
[ "$(free_pages "$A")" = "$fa3" ] && [ "$(n_mtt "$A")" = 0 ] || mnic_die "bigmr: pages or MTT left"
echo "ok: $(cat "$out/bigmr.log") (CREATE_MTT, 3 x WRITE_MTT, REG_MR)"

# ---- 4. nothing refused ------------------------------------------------------------------
for d in "$A" "$B"; do
  bad=$("$M" -d "$d" --json counters --mgmt |
    json "sum(v for k, v in d['mgmt'].items() if k.startswith('refused_mtt'))")
  [ "$bad" = 0 ] || mnic_die "$d: $bad MTT refusals"
done
echo "PASS host_dma_posix"
