#!/usr/bin/env bash
# CRIU migration figures (issue 17): an unmodified verbs process
# (ibv-traffic, one verified QP plus N-1 connected idle ones) moved between
# two x86 VMs on POSIX NICs by criu dump / page server / criu restore with
# mnic_criu_plugin.so, while host A's peer keeps sending (MigrOS Fig. 11
# measures the same: migration time against the number of QPs).
#
#   criu_migrate_ms_qps_{1,16,64}   from the start of criu dump to A's
#       first completion after the pause (A's timeline, 100 ms samples, on
#       this host's clock through A's clock offset): what the peer sees
#   criu_checkpoint_ms, criu_transfer_ms, criu_restore_ms, criu_image_bytes
#       the 16-QP run's phases (criu dump; the images CRIU does not stream
#       and the process's files over mnic0, the service address moved;
#       criu restore) and its image directory (pages included)
# One boot of three VMs, the three runs one after the other, alternately
# B -> C and C -> B.  BENCH_CRIU_OUT (work folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/criu.sh"
mnic_init
out=${BENCH_CRIU_OUT:-$root/build/bench/criu}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
fail() { echo "bench/criu: $*" >&2; exit 1; }
make -C "$root" --no-print-directory -s BOARD=posix all >&2
make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null
declare -A CTL IP MAC G
IP=([a]=10.0.12.1 [b]=10.0.12.2 [c]=10.0.12.3)
MAC=([a]=52:54:00:00:0c:01 [b]=52:54:00:00:0c:02 [c]=52:54:00:00:0c:03)
base=$(mnic_free_ports 3 17480) || fail "no free 127.0.0.1 ports"
CTL=([a]=$base [b]=$((base + 1)) [c]=$((base + 2)))
criu_vm_build "$out/initrd.gz"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw
CRIU_INITRD=$out/initrd.gz
criu_hosts host a b c
offa=$(criu_vm_clock a)
CRIU_SVC=10.0.12.100 CRIU_SVC_PEER=${IP[a]} CRIU_LOG=/tmp/client.log
criu_svc b $CRIU_SVC $CRIU_SVC_PEER || fail "service address on B"
from=b to=c n=0
RATE=200 OPS=2400
for q in 1 16 64; do
  n=$((n + 1))
  port=$((18600 + n))
  targs="-m 1024 -s 4096 -n $OPS -r $RATE -p $port -t 120 -Q $((q - 1))"
  rxe_bg "${CTL[a]}" tr$n "ibv-traffic -d mnic0 -g ${G[a]} $targs -T /tmp/tl$n.csv"
  criu_listening a $port || fail "run $n: no server on A"
  pid=$(rxe_ctl "${CTL[$from]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[$from]} $targs ${IP[a]} </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
    fail "run $n: the client did not start on $from"
  sleep $((OPS / RATE / 3))
  criu_migrate $from $to $n /tmp/client.log >"$out/migrate$n.txt" 2>&1 || { cat "$out/migrate$n.txt" >&2; fail "run $n: the migration failed"; }
  rxe_fg "${CTL[a]}" tr$n 120 >"$out/server$n.txt" 2>&1 || true
  rxe_ctl "${CTL[$to]}" "i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 100 ]; do sleep 0.2; i=\$((i+1)); done" 30 || true
  grep -q "^ibv-traffic: PASS" "$out/server$n.txt" || { cat "$out/server$n.txt" >&2; fail "run $n ($q QPs): the traffic did not verify"; }
  rxe_ctl "${CTL[a]}" "cat /tmp/tl$n.csv" 20 >"$out/tl$n.csv"
  . "$out/mig$n.env"
  # A's first completing sample after the restore returned, on this host's clock
  back=$(awk -F, -v off="$offa" -v from="$epoch_dump_ms" -v r="$epoch_restored_ms" \
    'NR > 1 && $7 > 0 && $2 - off >= r - 100 { print int($2 - off - 100 - from); exit }' "$out/tl$n.csv")
  echo "criu_migrate_ms_qps_$q: ${back:-0} ms"
  if [ "$q" = 16 ]; then
    echo "criu_checkpoint_ms: $checkpoint_ms ms"
    echo "criu_transfer_ms: $transfer_ms ms"
    echo "criu_restore_ms: $restore_ms ms"
    echo "criu_image_bytes: $image_bytes bytes"
  fi
  t=$from; from=$to; to=$t
done
