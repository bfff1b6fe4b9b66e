#!/usr/bin/env bash
# Unmodified perftest (Debian's perftest 4.5) between two x86_64 VMs on one
# vde switch, mnic against rxe in the same run (issue 16's figures), run by
# bench/bench.sh or alone: bash bench/perftest.sh.  One "name: value unit"
# line each on stdout, details on stderr:
#   perftest_write_bw_4k_gbps_{mnic,rxe}   ib_write_bw, 4 KiB, BW average
#   perftest_read_bw_4k_gbps_{mnic,rxe}    ib_read_bw, 4 KiB, BW average
#   perftest_send_lat_64_us_{mnic,rxe}     ib_send_lat, 64 B, t_typical
#                                          (perftest's median), microseconds
# The pairs, one after the other on the same switch, same VM size (256 MiB,
# 1 vCPU, TCG), same message counts, path MTU 1024 (-m 1024), perftest's
# default inline data on both (the latency runs' 64 bytes go in the WQE):
#   rxe:  two rxe VMs (tests/interop/rxe-init), rxe0 on eth0
#   mnic: two mnic VMs (tests/interop/mnic-vm-init: mnic.ko and the provider
#         libmnic-rdmav34.so), each on a POSIX NIC whose host-memory aperture
#         is the VM's RAM (tests/interop/lib.sh mnic_nic_start)
# The programs' out-of-band TCP exchange: over eth0 between the rxe VMs;
# through the VMs' restricted user nets (hostfwd/guestfwd on 127.0.0.1)
# between the mnic VMs.  Environment: BENCH_PERFTEST_N (bandwidth
# iterations, default 2000), BENCH_PERFTEST_LAT_N (latency, 1000),
# BENCH_PERFTEST_OUT (work folder).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
. "$MNIC_ROOT/tests/interop/lib.sh"
mnic_init
out=${BENCH_PERFTEST_OUT:-$MNIC_ROOT/build/bench/perftest}; rm -rf "$out"; mkdir -p "$out"
n=${BENCH_PERFTEST_N:-2000} nlat=${BENCH_PERFTEST_LAT_N:-1000}
bins=
for p in ib_write_bw ib_read_bw ib_send_lat; do
  bins="$bins $(command -v "$p")" || mnic_die "$p not installed: run scripts/deps.sh as root (perftest)"
done
for f in build/kmod/mnic.ko build/host/provider/libmnic-rdmav34.so build/posix/mnic-fw; do
  [ -e "$MNIC_ROOT/$f" ] || mnic_die "$f not built: run make, make kmod"
done
RXE_OUT=$out
rxe_build
mnic_vm_build "$out/mnic-initrd.gz" "$bins"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw
base=$(mnic_free_ports 3 17420) || mnic_die "no free 127.0.0.1 ports"
ctl_s=$base ctl_c=$((base + 1)) pp=$((base + 2))

# run KIND TOOL SIZE ITERS DEVARGS SERVER_ADDR: server VM then client VM;
# prints the client's result line (the one starting with the message size).
run() {
  local kind=$1 tool=$2 size=$3 iters=$4 dev=$5 addr=$6 args rc=0 line
  args="$dev -s $size -n $iters -m 1024 -F -p 18515"
  case $tool in *_bw) args="$args --report_gbits" ;; esac
  rxe_bg "$ctl_s" "$tool" "$tool $args"
  rxe_ctl "$ctl_s" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 60 \
    || { rxe_fg "$ctl_s" "$tool" 5 >&2; mnic_die "$kind $tool: the server never listened"; }
  rxe_ctl "$ctl_c" "$tool $args $addr" 300 >"$out/$kind-$tool.cli" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "$ctl_s" "killall $tool" 5 >/dev/null 2>&1 || true
  rxe_fg "$ctl_s" "$tool" 300 >"$out/$kind-$tool.srv" 2>&1 || rc=$((rc + 100))
  [ $rc = 0 ] || { cat "$out/$kind-$tool.cli" "$out/$kind-$tool.srv" >&2; mnic_die "$kind $tool failed (status $rc)"; }
  line=$(awk -v s="$size" -v n="$iters" '$1 == s && $2 == n { print; exit }' "$out/$kind-$tool.cli")
  [ -n "$line" ] || { cat "$out/$kind-$tool.cli" >&2; mnic_die "$kind $tool: no result line"; }
  echo "perftest: $kind $tool: $(echo "$line" | tr -s ' \t' ' ')" >&2
  printf '%s\n' "$line"
}
# ib_*_bw columns: bytes iterations BW-peak BW-average MsgRate;
# ib_send_lat: bytes iterations t_min t_max t_typical t_avg t_stdev ...
measure() {   # KIND DEVARGS SERVER_ADDR
  local w r l
  w=$(run "$1" ib_write_bw 4096 "$n" "$2" "$3" | awk '{ print $4 }')
  r=$(run "$1" ib_read_bw 4096 "$n" "$2" "$3" | awk '{ print $4 }')
  l=$(run "$1" ib_send_lat 64 "$nlat" "$2" "$3" | awk '{ print $5 }')
  echo "perftest_write_bw_4k_gbps_$1: $w Gbit/s"
  echo "perftest_read_bw_4k_gbps_$1: $r Gbit/s"
  echo "perftest_send_lat_64_us_$1: $l us"
}
stop() { local p; for p in "$@"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }

# ---- rxe <-> rxe --------------------------------------------------------------
rxe_vm_start srv 52:54:00:00:00:e1 10.0.0.241/24 "$ctl_s" --mem 256
rxe_vm_start cli 52:54:00:00:00:e2 10.0.0.242/24 "$ctl_c" --mem 256
rxe_vm_ready srv >&2 || mnic_die "rxe server VM not ready"
rxe_vm_ready cli >&2 || mnic_die "rxe client VM not ready"
measure rxe "-d rxe0 -x 1" 10.0.0.241
stop "$RXE_PID_srv" "$RXE_PID_cli"

# ---- mnic <-> mnic -------------------------------------------------------------
mnic_nic_start nics 52:54:00:00:0a:01 "$out/srv.ram" 256 || mnic_die "NIC of the server VM"
mnic_nic_start nicc 52:54:00:00:0a:02 "$out/cli.ram" 256 || mnic_die "NIC of the client VM"
MNIC_VM_APPEND="MNIC_NEIGH=10.0.10.2@52:54:00:00:0a:02" \
  mnic_vm_start msrv "$out/mnic-initrd.gz" "$out/srv.ram" 256 10.0.10.1/24 "$ctl_s" nics --hostfwd "$pp:18515"
MNIC_VM_APPEND="MNIC_NEIGH=10.0.10.1@52:54:00:00:0a:01" \
  mnic_vm_start mcli "$out/mnic-initrd.gz" "$out/cli.ram" 256 10.0.10.2/24 "$ctl_c" nicc --guestfwd "18515:$pp"
gs=$(mnic_vm_ready msrv) || mnic_die "mnic server VM not ready"
gc=$(mnic_vm_ready mcli) || mnic_die "mnic client VM not ready"
[ "$gs" = "$gc" ] || mnic_die "the mnic VMs' RoCEv2 GIDs have different indexes ($gs, $gc)"
measure mnic "-d mnic0 -x $gs" 10.0.2.100
