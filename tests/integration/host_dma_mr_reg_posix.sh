#!/usr/bin/env bash
# make bench's MR registration figures (bench/mr_reg.sh, bench/mr_reg_bench.c;
# issue 14), checked for correctness, not speed: the bench piece in its
# quick mode with the ASan+UBSan mnic-mr-bench, against a POSIX NIC with a
# host-memory aperture and one without.
#   1. every figure line is there once, "name: value unit", the value a
#      positive number
#   2. the commands the NIC answered for one registration are what
#      libmnic's host-memory mode must send: CREATE_MTT + ceil(pages / 4096)
#      WRITE_MTT + REG_MR (3, 3, 6), and REG_MR alone in physical mode
#   3. the NIC's own view of each registration (QUERY_DEVICE): one more MR,
#      in host-memory mode one more MTT holding exactly the buffer's pages,
#      in physical mode no MTT; after the deregistration nothing held
#   4. the tool refuses a device that is not a NIC, saying so
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/host-dma-mr-reg; rm -rf "$out"; mkdir -p "$out"
tool=$MNIC_ROOT/build/host-asan/hostdrv/mnic-mr-bench
[ -x "$tool" ] || mnic_die "$tool missing: run make hostdrv"

rc=0
BENCH_MR_QUICK=1 BENCH_MR_TOOL=$tool BENCH_MR_OUT=$out/run \
  bash "$MNIC_ROOT/bench/mr_reg.sh" >"$out/figures.txt" 2>"$out/checks.txt" || rc=$?
[ $rc = 0 ] || { cat "$out/figures.txt" "$out/checks.txt"; mnic_die "bench/mr_reg.sh exited $rc"; }

# ---- 1. every line, once, positive ------------------------------------------------------
declare -A pages=([4k]=1 [1m]=256 [64m]=16384)
n=0
for size in 4k 1m 64m; do
  for sfx in "" _phys; do
    for fig in "mr_reg_us_$size$sfx us" "mr_dereg_us_$size$sfx us" "mr_reg_cmds_$size$sfx cmds"; do
      read -r name unit <<<"$fig"
      lines=$(grep -cE "^$name: [0-9]+(\.[0-9]+)? $unit\$" "$out/figures.txt" || true)
      [ "$lines" = 1 ] || { cat "$out/figures.txt"; mnic_die "$lines lines '$name: <number> $unit'"; }
      v=$(sed -n "s/^$name: \([0-9.]*\) $unit\$/\1/p" "$out/figures.txt")
      awk -v v="$v" 'BEGIN { exit !(v > 0) }' || mnic_die "$name: $v is not positive"
      n=$((n + 1))
    done
  done
done
[ "$(wc -l <"$out/figures.txt")" = "$n" ] || { cat "$out/figures.txt"; mnic_die "lines besides the $n figures"; }
echo "ok: $n figure lines, each once with a positive value"

# ---- 2. commands per registration ---------------------------------------------------------
for size in 4k 1m 64m; do
  want=$(( 2 + (pages[$size] + 4095) / 4096 ))
  got=$(sed -n "s/^mr_reg_cmds_$size: \([0-9]*\) cmds\$/\1/p" "$out/figures.txt")
  [ "$got" = "$want" ] || mnic_die "$size: $got commands, want CREATE_MTT + $((want - 2)) WRITE_MTT + REG_MR"
  got=$(sed -n "s/^mr_reg_cmds_${size}_phys: \([0-9]*\) cmds\$/\1/p" "$out/figures.txt")
  [ "$got" = 1 ] || mnic_die "${size}_phys: $got commands, want REG_MR alone"
done
echo "ok: commands per registration: $(grep -h '^mr_reg_cmds_' "$out/figures.txt" | tr '\n' ' ')"

# ---- 3. the NIC's view -------------------------------------------------------------------
for size in 4k 1m 64m; do
  grep -qx "mr_reg_bench: $size: ${pages[$size]} pages; registered: 1 MRs, 1 MTTs, ${pages[$size]} MTT entries held; after deregistration: 0, 0, 0" "$out/checks.txt" ||
    { cat "$out/checks.txt"; mnic_die "$size: the NIC did not hold one MTT of ${pages[$size]} pages, then nothing"; }
  grep -qx "mr_reg_bench: ${size}_phys: ${pages[$size]} pages; registered: 1 MRs, 0 MTTs, 0 MTT entries held; after deregistration: 0, 0, 0" "$out/checks.txt" ||
    { cat "$out/checks.txt"; mnic_die "${size}_phys: not one MR without an MTT, then nothing"; }
done
echo "ok: the NICs held one MR (and in host-memory mode one MTT of the buffer's pages) per registration, then nothing"

# ---- 4. a device that is not a NIC ---------------------------------------------------------
head -c 65536 /dev/zero >"$out/not-a-nic.bar"
rc=0; "$tool" -q "$out/not-a-nic.bar" >"$out/refused.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "^mnic-mr-bench: " "$out/refused.out" ||
  { cat "$out/refused.out"; mnic_die "a zero BAR file: exit $rc"; }
echo "ok: a zero BAR file refused: $(head -1 "$out/refused.out")"
echo "PASS host_dma_mr_reg_posix"
