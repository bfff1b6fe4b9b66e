#!/usr/bin/env bash
# Unmodified perftest (Debian's perftest 4.5) between two x86_64 VMs on one
# vde switch (issue 16's figures), run by bench/bench.sh or alone:
# bash bench/perftest.sh.  One "name: value unit" line each on stdout,
# details on stderr:
#   perftest_write_bw_4k_gbps_rxe   ib_write_bw, 4 KiB messages, BW average
#   perftest_read_bw_4k_gbps_rxe    ib_read_bw, the same
#   perftest_send_lat_64_us_rxe     ib_send_lat, 64-byte messages, t_typical
#                                   (perftest's median), microseconds
# Both VMs are rxe VMs (tests/interop/, TCG, 1 vCPU each, eth0 MTU 4200 so
# the active path MTU is 4096), server 10.0.0.241, client 10.0.0.242; the
# programs' own out-of-band TCP exchange runs over eth0 on the switch (-x 1:
# the IPv4-mapped GID).  The _mnic figures of the issue (the same programs
# on two mnic VMs, provider libmnic-rdmav34.so) join this script when the
# provider runs ibv_rc_pingpong (docs/kernel-driver.md); until then this
# prints only the rxe side, the peer it is to be compared with.
# Environment: BENCH_PERFTEST_N (iterations, default 2000 for the
# bandwidths, 1000 for the latency), BENCH_PERFTEST_OUT (work folder).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
. "$MNIC_ROOT/tests/interop/lib.sh"
mnic_init
out=${BENCH_PERFTEST_OUT:-$MNIC_ROOT/build/bench/perftest}; rm -rf "$out"; mkdir -p "$out"
n=${BENCH_PERFTEST_N:-2000}
for p in ib_write_bw ib_read_bw ib_send_lat; do
  command -v "$p" >/dev/null || mnic_die "$p not installed: run scripts/deps.sh as root (perftest)"
done
RXE_OUT=$out
rxe_build
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw
base=$(mnic_free_ports 2 17420) || mnic_die "no free 127.0.0.1 ports"
srv_ctl=$base cli_ctl=$((base + 1))
RXE_APPEND="RXE_MTU=4200" rxe_vm_start srv 52:54:00:00:00:e1 10.0.0.241/24 "$srv_ctl"
RXE_APPEND="RXE_MTU=4200" rxe_vm_start cli 52:54:00:00:00:e2 10.0.0.242/24 "$cli_ctl"
rxe_vm_ready srv >&2 || mnic_die "server VM not ready"
rxe_vm_ready cli >&2 || mnic_die "client VM not ready"

# run TOOL SIZE ITERS: server in srv, client in cli; prints the client's
# result line (the one starting with the message size).
run() {
  local tool=$1 size=$2 iters=$3 args rc=0 line
  args="-d rxe0 -x 1 -s $size -n $iters -F"
  case $tool in *_bw) args="$args --report_gbits" ;; esac
  rxe_bg "$srv_ctl" "$tool" "$tool $args"
  # the server listens on TCP 18515 once its QP is up: retry the client
  for _ in $(seq 20); do
    rc=0
    rxe_ctl "$cli_ctl" "$tool $args 10.0.0.241" 120 >"$out/$tool.cli" 2>&1 || rc=$?
    grep -q "Couldn't connect\|Unable to open file descriptor" "$out/$tool.cli" || break
    sleep 0.5
  done
  rxe_fg "$srv_ctl" "$tool" 120 >"$out/$tool.srv" 2>&1 || rc=$((rc + 100))
  [ $rc = 0 ] || { cat "$out/$tool.cli" "$out/$tool.srv" >&2; mnic_die "$tool failed (status $rc)"; }
  line=$(awk -v s="$size" '$1 == s && NF >= 5 { print; exit }' "$out/$tool.cli")
  [ -n "$line" ] || { cat "$out/$tool.cli" >&2; mnic_die "$tool: no result line"; }
  echo "perftest: rxe $tool: $line" >&2
  printf '%s\n' "$line"
}
# ib_*_bw columns: bytes iterations BW-peak BW-average MsgRate;
# ib_send_lat: bytes iterations t_min t_max t_typical t_avg t_stdev ...
wbw=$(run ib_write_bw 4096 "$n" | awk '{ print $4 }')
rbw=$(run ib_read_bw 4096 "$n" | awk '{ print $4 }')
slat=$(run ib_send_lat 64 "${BENCH_PERFTEST_LAT_N:-1000}" | awk '{ print $5 }')
echo "perftest_write_bw_4k_gbps_rxe: $wbw Gbit/s"
echo "perftest_read_bw_4k_gbps_rxe: $rbw Gbit/s"
echo "perftest_send_lat_64_us_rxe: $slat us"
