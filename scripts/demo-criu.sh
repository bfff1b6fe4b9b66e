#!/usr/bin/env bash
# make demo: CRIU live-migrates an unmodified verbs application with its
# RDMA context between host VMs on mnic NICs, proves nothing was lost and
# draws the timeline (issue 17).
#
#   switch + POSIX NICs A, B, C, each serving an x86_64 Debian VM (Debian's
#   kernel, mnic.ko, the provider, CRIU and mnic_criu_plugin.so)
#   host A: ibv-traffic server        host B: ibv-traffic client (libibverbs only)
#   one RC QP, SEND / WRITE_WITH_IMM / READ / FETCH_ADD / CMP_SWAP both ways,
#   every message sequenced and checksummed, every READ and atomic checked
#   at a third of the run: criu dump on B (pages to a criu page-server on C,
#   the other images over mnic0), B's address moves to C, criu restore on C;
#   A's QP pauses on NAK_STOPPED and follows C's RESUME; traffic runs on
#   report on stdout (scripts/demo-criu-report.py), plot build/demo/timeline.svg
#
# Options (environment or make variables):
#   DURATION=S   traffic seconds (default 24)      RATE=N  operations/s each way (200)
#   DEMO_OUT=DIR output directory (default build/demo)
# The earlier stand-in (libmnic applications, freeze and copy by mnicctl
# migrate) is `make demo POSIX=1` (scripts/demo.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/criu.sh"
mnic_init
out=${DEMO_OUT:-$root/build/demo}
dur=${DURATION:-24}
RATE=${RATE:-200}
[[ $dur =~ ^[0-9]+$ ]] && [ "$dur" -ge 6 ] && [ "$dur" -le 600 ] || mnic_die "DURATION=$dur: give 6..600 seconds"
[[ $RATE =~ ^[0-9]+$ ]] && [ "$RATE" -ge 10 ] && [ "$RATE" -le 5000 ] || mnic_die "RATE=$RATE: give 10..5000 operations per second"
OPS=$((dur * RATE))
fail() { echo "demo: FAIL: $*" >&2; exit 1; }
say() { echo "demo: [$(( $(date +%s) - T0 )) s] $*" >&2; }
T0=$(date +%s)

say "building (mnic.ko, provider, CRIU plugin, the POSIX NIC, ibv-traffic)"
make -C "$root" --no-print-directory -s BOARD=posix all >&2 || mnic_die "build failed: run make BOARD=posix"
make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null ||
  mnic_die "build failed: run make kmod"
command -v gnuplot >/dev/null || mnic_die "gnuplot missing: run scripts/deps.sh as root (gnuplot-nox)"
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
declare -A CTL IP MAC G
IP=([a]=10.0.11.1 [b]=10.0.11.2 [c]=10.0.11.3)
MAC=([a]=52:54:00:00:0b:01 [b]=52:54:00:00:0b:02 [c]=52:54:00:00:0b:03)
base=$(mnic_free_ports 3 17460) || mnic_die "no free 127.0.0.1 ports"
CTL=([a]=$base [b]=$((base + 1)) [c]=$((base + 2)))
criu_vm_build "$out/initrd.gz"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw
say "starting three POSIX NICs and three x86_64 VMs (TCG: about 20 s)"
CRIU_INITRD=$out/initrd.gz CRIU_SAY=say
criu_hosts host a b c
criu_vm_clock a >"$out/clock-a.txt"

# the client's service address: its TCP connection's, moves with it
CRIU_SVC=10.0.11.100 CRIU_SVC_PEER=${IP[a]}
criu_svc b $CRIU_SVC $CRIU_SVC_PEER || fail "service address on host B"
targs="-m 1024 -s 4096 -n $OPS -r $RATE -p 18515 -t $((dur * 3 + 60))"
rxe_bg "${CTL[a]}" tr "ibv-traffic -d mnic0 -g ${G[a]} $targs -T /tmp/timeline-a.csv"
criu_listening a 18515 || { rxe_fg "${CTL[a]}" tr 5; fail "ibv-traffic never listened on host A"; }
pid=$(rxe_ctl "${CTL[b]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[b]} $targs -T /tmp/timeline-b.csv ${IP[a]} </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  fail "the client did not start on host B"
say "ibv-traffic running: server on host A, client pid $pid on host B ($OPS operations each way at $RATE/s)"
sleep $((dur / 3))
say "criu dump on host B -> page server on C, images over mnic0, criu restore on host C"
criu_migrate b c 1 "/tmp/client.log /tmp/timeline-b.csv" >"$out/migrate.txt" 2>&1 ||
  { cat "$out/migrate.txt" >&2; fail "the migration failed"; }
sed 's/^/demo:   /' "$out/migrate.txt" >&2
say "traffic runs on to the end; both ends then exchange and judge"
rxe_fg "${CTL[a]}" tr $((dur * 3 + 90)) >"$out/server.txt" 2>&1 || true
rxe_ctl "${CTL[c]}" "i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 600 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/client.log" 330 \
  >"$out/client.txt" 2>&1 || true
rxe_ctl "${CTL[a]}" "cat /tmp/timeline-a.csv" 20 >"$out/timeline-a.csv" || true
rxe_ctl "${CTL[c]}" "cat /tmp/timeline-b.csv" 20 >"$out/timeline-b.csv" || true
criu_mnicctl a counters --engine >"$out/counters-a.txt" 2>&1 || true
for v in a b c; do
  rxe_ctl "${CTL[$v]}" "dmesg" >"$out/host-$v-dmesg.txt" 2>&1 || true
  if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection" "$out/host-$v-dmesg.txt" >&2; then
    fail "kernel warnings in host $v's dmesg ($out/host-$v-dmesg.txt)"
  fi
done
say "done; the report:"
rc=0
python3 "$root/scripts/demo-criu-report.py" --dir "$out" --ops "$OPS" --rate "$RATE" || rc=$?
echo "logs: $out/ (wall time $(( $(date +%s) - T0 )) s)"
exit $rc
