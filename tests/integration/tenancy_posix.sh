#!/usr/bin/env bash
# Tenancy on one POSIX NIC (issue 13; mnic/cmd.h "contexts"): two tenant
# processes (tests/tools/mnic-tenant.c, libmnic's BAR backend: one firmware
# context per mnic_open) and the operator (mnicctl, the management context).
#   1. A holds a PD, CQ, QP and MR; B probes them: every command naming A's
#      objects is answered as for a handle that does not exist, every
#      privileged command and every command naming A's context is NOT_PRIV,
#      B dumps and aborts only itself; the firmware counted the refusals
#      (refused_foreign, refused_priv) and A's objects are intact
#   2. A killed with SIGKILL: its context stays until the next tenant
#      allocates one (the owner is gone: reaped), then 0 objects are left;
#      `mnicctl ctx reap` does the same on demand
#   3. mnicctl ctx alloc/free and a dump of another tenant's context by the
#      operator (--ctx): only that context stops
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/tenancy-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl
TEN=$tools/mnic-tenant
for f in "$fw" "$M" "$TEN"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

mnic_switch_start "$out/switch"
"$fw" --name t --vde "$out/switch" --mac 52:54:00:74:00:01 --bar "$out/t.bar" \
  -- run db_min_us=20 db_max_us=1000 >"$out/t.log" 2>&1 &
nic=$!; mnic_track $nic
mnic_wait_line "$out/t.log" "^MNIC READY" 20 $nic || { cat "$out/t.log"; mnic_die "NIC not ready"; }
D=$out/t.bar
export MNIC_CTX_MEM=1M   # each tenant a 1 MiB range (default: half the user area)
mgmt_counter() { "$M" -d "$D" --json counters --mgmt | json "d['mgmt']['$1']"; }
in_use() { "$M" -d "$D" --json info | json "sum(d['in_use'].values())"; }
n_ctx() { "$M" -d "$D" --json ctx list | json "len(d)"; }

# ---- 1. B cannot see, use or stop A's objects ---------------------------------------
hold() {   # FILE: start a holder, wait for its handles; sets HOLDER
  "$TEN" hold "$D" "$1" >"$1.log" 2>&1 &
  HOLDER=$!; mnic_track $HOLDER
  mnic_wait_line "$1.log" "^holding" 20 $HOLDER || { cat "$1.log"; mnic_die "holder did not start"; }
}
hold "$out/a.objs"; A=$HOLDER
read -r actx aqpn _ < "$out/a.objs"
f0=$(mgmt_counter refused_foreign); p0=$(mgmt_counter refused_priv)
"$TEN" probe "$D" "$out/a.objs" >"$out/probe.log" 2>&1 || { cat "$out/probe.log"; mnic_die "tenancy probe failed"; }
cat "$out/probe.log"
f1=$(mgmt_counter refused_foreign); p1=$(mgmt_counter refused_priv)
[ $((f1 - f0)) -ge 9 ] || mnic_die "refused_foreign went $f0 -> $f1: want >= 9 more"
[ $((p1 - p0)) -ge 9 ] || mnic_die "refused_priv went $p0 -> $p1: want >= 9 more"
echo "ok: refused_foreign +$((f1 - f0)), refused_priv +$((p1 - p0))"
"$M" -d "$D" --json qp show "$aqpn" | json "d['state']" | grep -qx INIT || mnic_die "A's QP changed"
got=$("$M" -d "$D" --json ctx show "$actx" | json "(d['pd'], d['mr'], d['cq'], d['qp'], d['state'])")
[ "$got" = "(1, 1, 1, 1, 'running')" ] || mnic_die "A's context after the probe: $got"
echo "ok: A's objects intact: $got"
[ "$(n_ctx)" = 1 ] || mnic_die "the probe's context outlived it ($(n_ctx) contexts)"
echo "ok: B's context went with mnic_close"

# ---- 3. the operator acts for one context --------------------------------------------
hold "$out/b.objs"; B=$HOLDER
read -r bctx bqpn _ < "$out/b.objs"
"$M" -d "$D" dump --ctx "$actx" -o "$out/a.img" >"$out/dump.log" 2>&1 || { cat "$out/dump.log"; mnic_die "dump --ctx"; }
"$M" -d "$D" --json ctx show "$actx" | json "d['state']" | grep -qx stopped || mnic_die "A not stopped"
"$M" -d "$D" --json ctx show "$bctx" | json "d['state']" | grep -qx running || mnic_die "B stopped by A's dump"
"$M" -d "$D" --json qp show "$bqpn" | json "d['stopped']" | grep -qx 0 || mnic_die "B's QP stopped by A's dump"
"$M" image show "$out/a.img" | grep -qiE "^ *qp +1 records" || { "$M" image show "$out/a.img"; mnic_die "A's image: not one QP"; }
"$M" -d "$D" abort --pid "$A" >/dev/null || mnic_die "abort --pid A"
"$M" -d "$D" --json ctx show "$actx" | json "d['state']" | grep -qx running || mnic_die "A not resumed"
echo "ok: dump --ctx stops only that context; abort --pid resumes it"
"$M" -d "$D" --json ctx alloc --size 0x10000 --owner 1 >"$out/alloc.json"
cid=$(json "d['ctx']" <"$out/alloc.json")
"$M" -d "$D" ctx free "$cid" >/dev/null || mnic_die "ctx free"
echo "ok: ctx alloc / free"

# ---- 2. a killed tenant leaves nothing behind ---------------------------------------
kill -KILL "$A"; wait "$A" 2>/dev/null || true
[ "$(n_ctx)" = 2 ] || mnic_die "A's context vanished before anyone reaped it"
"$M" -d "$D" ctx list | grep -q "gone" || mnic_die "ctx list does not show A's owner as gone"
hold "$out/c.objs"; C=$HOLDER   # the next tenant reaps A's context
got=$("$M" -d "$D" --json ctx list | json "sorted(c['owner'] for c in d)")
[ "$got" = "$(python3 -c "print(sorted([$B, $C]))")" ] || mnic_die "contexts after A's death: owners $got"
echo "ok: SIGKILLed A reaped by the next tenant"
kill -KILL "$B" "$C"; wait "$B" "$C" 2>/dev/null || true
"$M" -d "$D" ctx reap | grep -q "reaped 2" || mnic_die "ctx reap did not free B and C"
[ "$(n_ctx)" = 0 ] && [ "$(in_use)" = 0 ] || mnic_die "objects left: $(in_use), contexts: $(n_ctx)"
echo "ok: ctx reap: 0 contexts, 0 objects"
echo "tenancy_posix: PASS"
