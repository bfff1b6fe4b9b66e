#!/usr/bin/env bash
# Completion events on POSIX NICs (issue 15 item 4), run by bench/bench.sh
# (or alone: bash bench/cq_event.sh).  One "name: value unit" line each on
# stdout, details on stderr:
#   send_lat_64_us_posix_poll   mnic-pingpong (libmnic) between two POSIX
#                               NICs, 64-byte SENDs, the client's median half
#                               round trip (its send posted -> the answer's
#                               CQE), both hosts busy-polling their CQ
#   send_lat_64_us_posix_event  the same, both hosts event-driven (-e: arm,
#                               sleep on the completion channel's eventfd,
#                               poll, re-arm), on the same NICs in the same run
# The NICs run the firmware's default poll (db_min_us=500 db_max_us=10000)
# with the doorbell channel.  Environment: BENCH_CQ_EVENT_N (exchanges,
# default 2000), BENCH_CQ_EVENT_OUT (work folder).
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=${BENCH_CQ_EVENT_OUT:-$MNIC_ROOT/build/bench/cq_event}; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
pp=$MNIC_ROOT/build/host/hostdrv/mnic-pingpong
for f in "$fw" "$pp"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix all hostdrv"; done
n=${BENCH_CQ_EVENT_N:-2000}

mnic_switch_start "$out/switch"
start_nic() {   # name mac
  "$fw" --name "cqev-$1" --vde "$out/switch" --mac "$2" --bar "$out/$1.bar" -- run \
    >"$out/$1.log" 2>&1 &
  NIC_PID=$!; mnic_track $NIC_PID
  mnic_wait_line "$out/$1.log" "^MNIC READY" 20 $NIC_PID || mnic_die "NIC $1 not READY (see $out/$1.log)"
}
start_nic a 52:54:00:7c:00:01
start_nic b 52:54:00:7c:00:02
run() {   # name pingpong-args... -> the client's median half round trip
  local name=$1 port=$((19300 + RANDOM % 500)) rc=0; shift
  "$pp" -d "$out/a.bar" -p $port -s 64 -n "$n" -T 60 "$@" >"$out/$name-srv.log" 2>&1 &
  local srv=$!; mnic_track $srv
  "$pp" -d "$out/b.bar" -p $port -s 64 -n "$n" -T 60 -L "$@" 127.0.0.1 >"$out/$name-cli.log" 2>&1 || rc=$?
  mnic_wait_pid $srv 60
  [ $rc = 0 ] && [ "$MNIC_RC" = 0 ] || { cat "$out/$name"-*.log >&2; mnic_die "$name ping-pong failed"; }
  grep -h "usec/iter\|^events:" "$out/$name-cli.log" | sed "s/^/cq_event: $name: /" >&2
  sed -n 's/^latency: median half round trip \([0-9.]*\) usec.*/\1/p' "$out/$name-cli.log"
}
poll=$(run poll)
event=$(run event -e)
[ -n "$poll" ] && [ -n "$event" ] || mnic_die "no latency line (see $out)"
echo "send_lat_64_us_posix_poll: $poll us"
echo "send_lat_64_us_posix_event: $event us"
