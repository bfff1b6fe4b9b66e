#!/usr/bin/env bash
# MR registration cost by size (issue 14; MigrOS Fig. 10 plots the same),
# run by bench/bench.sh (or alone: bash bench/mr_reg.sh).  One
# "name: value unit" line each on stdout, the NICs' checks on stderr:
#   mr_reg_us_{4k,1m,64m}        median mnic_reg_mr of a buffer of that size
#                                (mnic_alloc) on a POSIX NIC with a 128 MiB
#                                host-memory aperture: CREATE_MTT, the page
#                                list in WRITE_MTT chunks, REG_MR
#   mr_dereg_us_{4k,1m,64m}      median mnic_dereg_mr (DEREG_MR, DESTROY_MTT)
#   mr_reg_cmds_{4k,1m,64m}      commands the NIC answered for one
#                                registration: 2 + ceil(pages / 4096)
#   mr_reg_us_*_phys, mr_dereg_us_*_phys, mr_reg_cmds_*_phys
#                                the in-run peer: the same on a NIC without an
#                                aperture (physical mode: REG_MR alone)
# How: bench/mr_reg_bench.c (mnic-mr-bench) against each NIC in turn; the
# NICs run as the tests run them (db_min_us=20 db_max_us=1000) with their
# doorbell channel (issue 15), so every command costs one round trip through
# the command queue: a ring, the NIC's pass, vector 0 waking libmnic
# (hostdrv/lib/cmdq.c, dbch.c).
# Environment: BENCH_MR_TOOL (default the plain build's mnic-mr-bench),
# BENCH_MR_QUICK=1 (few repetitions), BENCH_MR_OUT (work folder).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=${BENCH_MR_OUT:-$MNIC_ROOT/build/bench/mr-reg}; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tool=${BENCH_MR_TOOL:-$MNIC_ROOT/build/host/hostdrv/mnic-mr-bench}
for f in "$fw" "$tool"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix all hostdrv"; done
quick=(); [ "${BENCH_MR_QUICK:-0}" = 1 ] && quick=(-q)

mnic_switch_start "$out/switch"
start_nic() {   # name mac platform-args...
  local name=$1 mac=$2 pid; shift 2
  "$fw" --name "mr-$name" --vde "$out/switch" --mac "$mac" --bar "$out/$name.bar" "$@" \
    -- run db_min_us=20 db_max_us=1000 >"$out/$name.log" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_line "$out/$name.log" "^MNIC READY" 20 $pid || mnic_die "NIC $name not READY (see $out/$name.log)"
}
# 64 MiB + 1 MiB + 4 KiB of buffers in one context, and the management
# handle's range: 128 MiB of aperture (host-memory) or of BAR (physical).
start_nic hostmem 52:54:00:7a:00:01 --hostmem "$out/hostmem.bar.hostmem" --hostmem-size 128M
start_nic phys 52:54:00:7a:00:02 --bar-size 128M
for nic in hostmem phys; do
  "$tool" "${quick[@]}" "$out/$nic.bar" 2>"$out/bench-$nic.err" ||
    { cat "$out/bench-$nic.err" >&2; mnic_die "mnic-mr-bench on the $nic NIC failed (see $out)"; }
  cat "$out/bench-$nic.err" >&2
done
