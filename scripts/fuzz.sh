#!/usr/bin/env bash
# make fuzz: build each tests/fuzz/fuzz_*.c with clang's libFuzzer plus
# ASan+UBSan and run it for FUZZ_SECONDS (default 30) from its corpus in
# build/fuzz/<name>/corpus, seeded from tests/fuzz/corpus/<name> when that
# exists (fuzz_rx: frames from real captures, scripts/pcap-to-corpus.py;
# fuzz_cmd: host commands and ring bytes, tests/fuzz/corpus/fuzz_cmd/README;
# fuzz_fwsig: signature TLV areas and key slots, tests/fuzz/corpus/fuzz_fwsig/README).
# fuzz_rx runs in both of its builds: fuzz_rx (the whole engine behind
# the receive path) and fuzz_rx_isolated (the demux alone, its stages
# doubles that read every byte parse promises: tests/fuzz/fuzz_rx_doubles.c).
# Every harness under tests/fuzz/ (a file defining LLVMFuzzerTestOneInput)
# must have a target here, or the run fails.
# FUZZ_TARGETS="fuzz_rx ..." limits the run.  Any crash leaves a reproducer in build/fuzz/<name>/
# and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-30}
make --no-print-directory build/host/gen/board.h >/dev/null
CFLAGS="-std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
 -Ilib/include -Ihal/include -Ihal/posix -Ifirmware -Iabi/include -Irocev2/include -Imgmt/include -Iboot/include -Imgmt -I. -Irocev2 -Ibuild/host/gen"
declare -A SRCS=(
  [fuzz_args]="firmware/args.c firmware/log.c firmware/fmt.c lib/mac.c"
  [fuzz_impair_spec]="hal/posix/impair.c"
  [fuzz_fwsig]="boot/fwsig.c boot/fwimage.c lib/ed25519.c lib/sha512.c lib/sha256.c lib/crc32.c"
  [fuzz_rx]="$(ls rocev2/*.c | tr '\n' ' ') lib/crc32.c lib/siphash.c lib/timer.c hal/common/dma_window.c"
  [fuzz_rx_isolated]="tests/fuzz/fuzz_rx_doubles.c rocev2/recv.c rocev2/net.c rocev2/gid.c rocev2/icrc.c rocev2/opcode.c rocev2/rocev2.c rocev2/cc.c lib/crc32.c lib/timer.c hal/common/dma_window.c"
  [fuzz_cmd]="mgmt/cmdq.c mgmt/cmd.c mgmt/cmd_device.c mgmt/cmd_objects.c mgmt/cmd_mtt.c mgmt/cmd_migrate.c mgmt/cmd_context.c mgmt/doorbell.c abi/cmd_names.c mgmt/fwflash.c lib/sha256.c lib/sha512.c lib/ed25519.c boot/fwimage.c boot/fwsig.c boot/bootrec.c $(ls rocev2/*.c | tr '\n' ' ') lib/crc32.c lib/siphash.c lib/timer.c hal/common/dma_window.c"
)
declare -A DEFS=( [fuzz_rx]="-DFUZZ_RX_FULL"
  [fuzz_cmd]="-DROCEV2_MAX_QP=16 -DROCEV2_MAX_MR=64 -DROCEV2_MAX_PD=16 -DROCEV2_MAX_CQ=16 -DROCEV2_MAX_SRQ=8" )
# The harness file of a target, when it is not tests/fuzz/<target>.c.
declare -A HARNESS=( [fuzz_rx_isolated]=fuzz_rx )
rc=0
covered=" ${HARNESS[*]} ${!SRCS[*]} "
for h in tests/fuzz/*.c; do
  grep -q LLVMFuzzerTestOneInput "$h" || continue
  h=$(basename "$h" .c)
  [[ $covered == *" $h "* ]] || { echo "fuzz: harness tests/fuzz/$h.c has no target in scripts/fuzz.sh"; rc=1; }
done
# one TARGET: build it and fuzz it; its report in build/fuzz/TARGET/report,
# status 1 if it found a crash (or did not build).
one() {
  local t=$1 hn=${HARNESS[$1]:-$1} seeds= d=build/fuzz/$1 libs=
  [ -d "tests/fuzz/corpus/$hn" ] && seeds=$PWD/tests/fuzz/corpus/$hn
  mkdir -p "$d/corpus"
  # The ICRC runs ISA-L on x86-64 hosts (rocev2/icrc.c).
  [[ " ${SRCS[$t]} " == *" rocev2/icrc.c "* ]] && libs=-lisal
  {
    # shellcheck disable=SC2086
    clang $CFLAGS ${DEFS[$t]:-} "tests/fuzz/$hn.c" ${SRCS[$t]} $libs -o "$d/$t" 2>&1 ||
      { echo "fuzz: $t does not build"; return 1; }
    echo "fuzz: $t for ${secs}s"
    if ! (cd "$d" && "./$t" -max_total_time="$secs" -print_final_stats=1 corpus $seeds >run.log 2>&1); then
      echo "fuzz: $t FOUND A CRASH; see $d/run.log and $d/crash-*"; tail -30 "$d/run.log"; return 1
    fi
    grep -E "stat::number_of_executed_units|cov:" "$d/run.log" | tail -2
  } >"$d/report" 2>&1
}
# The targets run FUZZ_JOBS at a time (default: one per core): each is one
# single-threaded process, so the whole pass takes about secs x targets /
# cores of wall time instead of secs x targets.
jobs=${FUZZ_JOBS:-$(nproc)}
declare -A pid_of=()
targets=()
for t in "${!SRCS[@]}"; do
  hn=${HARNESS[$t]:-$t}
  [ -f "tests/fuzz/$hn.c" ] || { echo "fuzz: target $t: no tests/fuzz/$hn.c"; rc=1; continue; }
  [ -z "${FUZZ_TARGETS:-}" ] || [[ " $FUZZ_TARGETS " == *" $t "* ]] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  one "$t" &
  pid_of[$t]=$!
  targets+=("$t")
done
for t in "${targets[@]}"; do
  st=0; wait "${pid_of[$t]}" || st=$?
  cat "build/fuzz/$t/report"
  [ $st = 0 ] || rc=1
done
exit $rc
