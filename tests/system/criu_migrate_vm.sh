#!/usr/bin/env bash
# CRIU live-migrates an unmodified verbs application with its RDMA context
# between hosts on mnic NICs (issue 17): the verified verbs workload
# ibv-traffic (libibverbs only) runs between x86_64 Debian VMs on POSIX
# NICs; at a third of its run `criu dump` on VM B (mnic_criu_plugin.so:
# DUMP stops the context, NAK_STOPPED pauses A's QP) sends the memory pages
# to a `criu page-server` on VM C and the other images over the NICs'
# netdevs (tar | nc over mnic0), C takes over B's IPv4 address for the
# process's TCP connection (--tcp-established), and `criu restore` on C
# recreates every uverbs object with its handle, user handle, QPN and keys,
# maps the doorbell pages onto the new context and (RESUME_DEVICES_LATE)
# pins the restored pages and resumes: A's QP follows the RESUME to C's NIC.
# At two thirds the process is checkpointed and restored again, on C itself
# (a restored context dumps as any other).  It finishes with every
# message, READ and atomic verified on both ends.
#
#   switch --- POSIX NIC A <-ivshmem-> VM A: ibv-traffic server
#         |--- POSIX NIC B <-ivshmem-> VM B: ibv-traffic client, criu dump
#         |--- POSIX NIC C <-ivshmem-> VM C: criu page-server, criu restore
#         \--- POSIX NIC D <-ivshmem-> VM D: the server's target (both ends)
#
# Then both ends at once (the server A -> D and the client C -> B
# together, each restore given the other move as peer-address override),
# and two failures: a restore that fails on the target (criu dump -R on C,
# the plugin refuses the restore on B and says why, `mnic-criu abort` on C
# resumes the context in place, the traffic finishes verified), and a
# source host that dies after its dump (VM C killed: A's paused QP gives up
# within its 3 s pause bound, mig_pause_timeouts).
#
# Checked: both ends PASS with lost/dup/ooo/bad 0 and peer PASS; CRIU's
# "Restore finished successfully" and the plugin's lines (dumped, restored,
# resumed) each time; the mnic.ko counters of B and C; NIC A's counters
# (its QP paused on NAK_STOPPED and took the RESUMEs, never timed out);
# the largest gap A saw; no WARNING/BUG/Oops in any dmesg.
#
# The process holds 64 QPs over two uverbs contexts (ibv-traffic -Q 63 -C 2:
# the verified traffic on one, 63 connected to A's and idle), its log file
# and its TCP connection from a service address that moves with it.
#
#   CRIU_VM_OPS=6000 CRIU_VM_RATE=200 (operations per end, paced per second)
#   CRIU_VM_XQPS=63 CRIU_VM_XCTX=2
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/criu.sh"
mnic_init
out=${CRIU_VM_OUT:-$root/build/test-system/criu-vm}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
OPS=${CRIU_VM_OPS:-6000}
RATE=${CRIU_VM_RATE:-200}
XQPS=${CRIU_VM_XQPS:-63}      # 64 QPs in all: one verified, 63 connected and idle
XCTX=${CRIU_VM_XCTX:-2}       # over two contexts
declare -A CTL IP MAC
IP=([a]=10.0.10.1 [b]=10.0.10.2 [c]=10.0.10.3 [d]=10.0.10.4)
MAC=([a]=52:54:00:00:0a:01 [b]=52:54:00:00:0a:02 [c]=52:54:00:00:0a:03 [d]=52:54:00:00:0a:04)
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
base=$(mnic_free_ports 4 17420) || mnic_die "no free 127.0.0.1 ports"
CTL=([a]=$base [b]=$((base + 1)) [c]=$((base + 2)) [d]=$((base + 3)))

criu_vm_build "$out/mnic-initrd.gz"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

t0=$(date +%s)
declare -A G
CRIU_INITRD=$out/mnic-initrd.gz
criu_hosts mnic a b c d
echo "setup: $(( $(date +%s) - t0 )) s (four VMs)"
# (informational: the VMs lack tun, veth and ptys, which this process does not use)
rxe_ctl "${CTL[b]}" "criu check" 60 >"$out/criu-check.txt" 2>&1 || true

# the client's service address: its TCP connection's, moves with it
CRIU_SVC=10.0.10.100 CRIU_SVC_PEER=${IP[a]} CRIU_LOG=/tmp/client.log
criu_svc b $CRIU_SVC $CRIU_SVC_PEER || fail "service address on B"
targs="-m 1024 -s 4096 -n $OPS -r $RATE -p 18515 -t 120 -Q $XQPS -C $XCTX"
rxe_bg "${CTL[a]}" tr "ibv-traffic -d mnic0 -g ${G[a]} $targs"
criu_listening a 18515 || { rxe_fg "${CTL[a]}" tr 5; fail "ibv-traffic never listened on A"; }
# the client: its own session, stdio on a file, so that CRIU takes the whole tree
# (tc: before it starts, so that tc + OPS/RATE is never after its end)
tc=$(date +%s)
pid=$(rxe_ctl "${CTL[b]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[b]} $targs ${IP[a]} </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  { rxe_ctl "${CTL[b]}" "cat /tmp/client.log; ps" 5 || true; fail "the client did not start"; }
echo "client pid $pid on VM B"

sleep 6                         # 1200 operations on B
criu_migrate b c 1 /tmp/client.log
# The client paces with a bucket of 0.25 s (ibv-traffic -r): it ends no
# earlier than OPS/RATE seconds after its start, whatever migration 1
# cost and however far C's monotonic clock runs ahead of B's (CRIU
# restores without a time namespace: a clock that jumped forward once
# let it catch up and finish before migration 2).  Migration 2 follows
# after 2 s of traffic on C (400 operations); a run too short for this
# machine says so instead of finding the process gone.
left=$(( tc + OPS / RATE - $(date +%s) ))
[ "$left" -ge 6 ] ||
  fail "migration 2: the client's run ($(( OPS / RATE )) s) has at most ${left} s left after migration 1; raise CRIU_VM_OPS"
sleep 2
criu_migrate c c 2

# both ends finish
rxe_fg "${CTL[a]}" tr 150 >"$out/server.txt" 2>&1 || true
rxe_ctl "${CTL[c]}" "i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/client.log" 170 \
  >"$out/client.txt" 2>&1 || true
grep -h '^ibv-traffic:' "$out/server.txt" "$out/client.txt"
for e in server client; do
  grep -qE "^ibv-traffic: PASS ops $OPS .* lost 0 dup 0 ooo 0 bad 0 .* bad_read 0 .* bad_atomic 0 errors 0 peer PASS" "$out/$e.txt" ||
    { cat "$out/$e.txt"; fail "the $e did not verify ($out/$e.txt)"; }
done
gap=$(sed -n 's/^ibv-traffic: PASS.*max_gap_ms \([0-9.]*\).*/\1/p' "$out/server.txt" | head -1)
echo "A (server) saw a largest gap of ${gap:-?} ms between completions"
# mnic.ko: B dumped once; C restored and resumed twice and dumped once
want() {   # VM COUNTER VALUE
  local v
  v=$(rxe_ctl "${CTL[$1]}" "cat /sys/class/misc/mnic0/counters/$2" 5) || v=
  [ "$v" = "$3" ] || fail "VM $1: $2 is ${v:-?}, want $3"
}
want b ib_mig_dump $XCTX; want c ib_mig_dump $XCTX; want c ib_mig_restore $((2 * XCTX)); want c ib_mig_resume $((2 * XCTX))
for v in b c; do
  for k in ib_mig_dump_failed ib_mig_restore_failed ib_mig_resume_failed ib_mig_refused; do want $v $k 0; done
done
check_dmesg() {
  local v
  for v in "$@"; do
    rxe_ctl "${CTL[$v]}" "dmesg" >"$out/mnic-$v-dmesg.txt" || true
    if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
         "$out/mnic-$v-dmesg.txt"; then
      fail "kernel warnings in VM $v's dmesg ($out/mnic-$v-dmesg.txt)"
    fi
  done
}
check_dmesg a b c
# A's QP took the NAK_STOPPED (paused, MigrOS's Stopped peer) and the
# restored contexts' RESUMEs, and never gave up waiting
criu_mnicctl a counters --engine >"$out/counters-a.txt" || fail "counters of NIC A"
cnt() { awk -v k="$1" '$1 == k { print $2 }' "$out/counters-a.txt"; }
[ "$(cnt comp_naks_stopped)" -ge 1 ] && [ "$(cnt mig_pauses)" -ge 1 ] && [ "$(cnt resp_resumes)" -ge 2 ] &&
  [ "$(cnt mig_pause_timeouts)" = 0 ] ||
  fail "NIC A: comp_naks_stopped $(cnt comp_naks_stopped) mig_pauses $(cnt mig_pauses) resp_resumes $(cnt resp_resumes) mig_pause_timeouts $(cnt mig_pause_timeouts)"
echo "NIC A: comp_naks_stopped $(cnt comp_naks_stopped), mig_pauses $(cnt mig_pauses), resp_resumes $(cnt resp_resumes)"
# ---- a restore that fails on the target: the source resumes in place --------
# criu dump -R (--leave-running) on C: the process runs on, its context
# stays Stopped (A pauses) and CRIU releases its network lock; the restore
# on B fails in the plugin (no such RDMA device there, and it says so);
# on C `mnic-criu abort` resumes the context in place and the traffic
# finishes verified.
OPS2=2400
targs2="-m 1024 -s 4096 -n $OPS2 -r $RATE -p 18516 -t 120"
rxe_bg "${CTL[a]}" tr2 "ibv-traffic -d mnic0 -g ${G[a]} $targs2"
criu_listening a 18516 || { rxe_fg "${CTL[a]}" tr2 5 || true; rxe_ctl "${CTL[a]}" "cat /proc/\$(pidof ibv-traffic)/stack" 10 || true; if [ -n "${CRIU_VM_DEBUG:-}" ]; then for p in $(pgrep -f "mnic-fw.*nica.bar"); do top -b -n1 -p $p | tail -2; gdb -p $p -batch -ex "thread apply all bt" 2>&1 | tail -40; done; fi; fail "abort: no server on A"; }
pid2=$(rxe_ctl "${CTL[c]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[c]} $targs2 ${IP[a]} </dev/null >/tmp/client2.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  fail "abort: the client did not start on C"
sleep $(( OPS2 / RATE / 3 ))
rxe_ctl "${CTL[c]}" "mkdir -p /tmp/imgx && criu dump -t $pid2 -D /tmp/imgx -R --tcp-established --network-lock nftables -v4 -o dump.log; rc=\$?; grep -E 'mnic-criu|Error' /tmp/imgx/dump.log | tail; exit \$rc" 120 \
  >"$out/dumpx.txt" 2>&1 || { cat "$out/dumpx.txt"; fail "abort: criu dump -R on C"; }
rxe_bg "${CTL[b]}" rxx "printf '#!/bin/sh\\nexec cat >/tmp/imgx.tar\\n' >/tmp/rxx.sh && chmod +x /tmp/rxx.sh && nc -l -p 27002 -e /tmp/rxx.sh && tar xf /tmp/imgx.tar -C /"
criu_listening b 27002 || fail "abort: no receiver on B"
rxe_ctl "${CTL[c]}" "tar cf /tmp/imgx.tar /tmp/imgx /tmp/client2.log && nc ${IP[b]} 27002 </tmp/imgx.tar" 60 || fail "abort: sending the images"
rxe_fg "${CTL[b]}" rxx 60 >/dev/null || fail "abort: receiving the images on B"
if rxe_ctl "${CTL[b]}" "MNIC_CRIU_DEVICE=mnic9 criu restore -D /tmp/imgx --tcp-established -d -v4 -o restore.log" 120 >"$out/restorex.txt" 2>&1; then
  fail "abort: the restore on B succeeded without its device"
fi
rxe_ctl "${CTL[b]}" "cat /tmp/imgx/mnic-criu.log" 10 >"$out/mnic-criux.log" 2>&1 || true
grep -q "no mnic RDMA device here (MNIC_CRIU_DEVICE=mnic9)" "$out/mnic-criux.log" ||
  { cat "$out/restorex.txt" "$out/mnic-criux.log"; fail "abort: the restore did not fail in the plugin, saying why"; }
rxe_ctl "${CTL[c]}" "kill -0 $pid2 && mnic-criu abort $pid2" 30 \
  >"$out/abort.txt" 2>&1 || { cat "$out/abort.txt"; fail "abort: mnic-criu abort on C"; }
cat "$out/abort.txt"
rxe_fg "${CTL[a]}" tr2 150 >"$out/server2.txt" 2>&1 || true
rxe_ctl "${CTL[c]}" "i=0; while kill -0 $pid2 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/client2.log" 170 \
  >"$out/client2.txt" 2>&1 || true
for e in server2 client2; do
  grep -qE "^ibv-traffic: PASS ops $OPS2 .* lost 0 dup 0 ooo 0 bad 0 .* bad_atomic 0 errors 0 peer PASS" "$out/$e.txt" ||
    { cat "$out/$e.txt"; fail "abort: the $e did not verify after the source resumed in place ($out/$e.txt)"; }
done
echo "abort: the restore on B failed in the plugin; C resumed in place; $(grep -h '^ibv-traffic: PASS' "$out/server2.txt" | cut -d' ' -f2-6) ... verified"
want c ib_mig_abort 1
check_dmesg a b c

# ---- both ends at once: the server A -> D and the client C -> B -------------
# Each process has a service address of its own (the client connects to
# the server's), both dumps run together, and each restore gets the
# other pair's move as peer-address override (MNIC_CRIU_OVERRIDE: the
# peer's NIC address old -> new and its MAC), so each restored QP sends
# its RESUME to where its peer now is.
OPS4=3000
SVC_S=10.0.10.101
criu_svc a $SVC_S ${IP[c]} || fail "both ends: service address on A"
rxe_ctl "${CTL[c]}" "ip route replace $SVC_S/32 dev mnic0 src $CRIU_SVC" 10 || fail "both ends: route on C"
targs4="-m 1024 -s 4096 -n $OPS4 -r $RATE -p 18518 -t 150 -T /tmp/tl4.csv"
pid_s=$(rxe_ctl "${CTL[a]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[a]} $targs4 </dev/null >/tmp/server4.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  fail "both ends: the server did not start on A"
criu_listening a 18518 || fail "both ends: no server on A"
pid_c=$(rxe_ctl "${CTL[c]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[c]} $targs4 $SVC_S </dev/null >/tmp/client4.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  fail "both ends: the client did not start on C"
sleep $(( OPS4 / RATE / 3 ))
( pid=$pid_s CRIU_SVC=$SVC_S CRIU_SVC_PEER=${IP[c]} CRIU_LOG=/tmp/server4.log \
  CRIU_RESTORE_ENV="MNIC_CRIU_OVERRIDE=${IP[c]},${IP[b]},${MAC[b]}" \
  criu_migrate a d 41 "/tmp/server4.log /tmp/tl4.csv" ) >"$out/both-s.txt" 2>&1 &
js=$!
( pid=$pid_c CRIU_SVC=$CRIU_SVC CRIU_SVC_PEER=$SVC_S CRIU_LOG=/tmp/client4.log \
  CRIU_RESTORE_ENV="MNIC_CRIU_OVERRIDE=${IP[a]},${IP[d]},${MAC[d]}" \
  criu_migrate c b 42 "/tmp/client4.log /tmp/tl4.csv" ) >"$out/both-c.txt" 2>&1 &
jc=$!
rs=0; rc=0
wait $js || rs=$?
wait $jc || rc=$?
cat "$out/both-s.txt" "$out/both-c.txt" | grep -E "^migration|FAIL" || true
[ $rs = 0 ] && [ $rc = 0 ] || { cat "$out/both-s.txt" "$out/both-c.txt"; fail "both ends: a migration failed"; }
for e in "d server4 $pid_s" "b client4 $pid_c"; do
  set -- $e
  rxe_ctl "${CTL[$1]}" "i=0; while kill -0 $3 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/$2.log" 170 \
    >"$out/$2.txt" 2>&1 || true
  grep -qE "^ibv-traffic: PASS ops $OPS4 .* lost 0 dup 0 ooo 0 bad 0 .* bad_atomic 0 errors 0 peer PASS" "$out/$2.txt" ||
    { cat "$out/$2.txt"; fail "both ends: the $2 did not verify after both moved ($out/$2.txt)"; }
  # its timeline file moved with it and kept growing: rows from before
  # and after the move, the run's seconds without a hole
  rxe_ctl "${CTL[$1]}" "cat /tmp/tl4.csv" 20 >"$out/tl4-$2.csv" || true
  rows=$(($(wc -l <"$out/tl4-$2.csv") - 1))
  [ "$rows" -ge $(( OPS4 / RATE * 10 * 8 / 10 )) ] || fail "both ends: the $2's timeline has $rows rows (want about $(( OPS4 / RATE * 10 )))"
done
echo "both ends: A -> D and C -> B at once, $(grep -h '^ibv-traffic: PASS' "$out/server4.txt" | cut -d' ' -f2-4) verified on both, their timelines continuous"
check_dmesg a b c d

# ---- the source host dies after the dump: A gives up within its pause bound --
# (last: it kills VM C)
criu_mnicctl a mig-config --pause-ms 3000 --resume-budget-ms 30000 --unkeyed >/dev/null || fail "mig-config on NIC A"
to0=$(cnt mig_pause_timeouts)
targs3="-m 1024 -s 4096 -n 100000 -r $RATE -p 18517 -t 120"
rxe_bg "${CTL[a]}" tr3 "ibv-traffic -d mnic0 -g ${G[a]} $targs3"
criu_listening a 18517 || { rxe_fg "${CTL[a]}" tr3 5 || true; fail "dead source: no server on A"; }
pid3=$(rxe_ctl "${CTL[c]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[c]} $targs3 ${IP[a]} </dev/null >/tmp/client3.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  fail "dead source: the client did not start on C"
sleep 3
rxe_ctl "${CTL[c]}" "mkdir -p /tmp/imgd && criu dump -t $pid3 -D /tmp/imgd --tcp-established --network-lock nftables -o dump.log" 120 \
  >"$out/dumpd.txt" 2>&1 || { cat "$out/dumpd.txt"; fail "dead source: criu dump on C"; }
td=$(date +%s%N)
kill "$MNIC_VM_PID_mnic_c" 2>/dev/null || true
# A's QP was paused by the dump's NAK_STOPPED: no RESUME comes, it errors out
deadline=$(( $(date +%s) + 20 ))
until rxe_ctl "${CTL[a]}" "grep -q 'completed with' tr3.log" 5 >/dev/null 2>&1; do
  [ "$(date +%s)" -lt $deadline ] || { rxe_ctl "${CTL[a]}" "cat tr3.log" 5 || true; fail "dead source: A's QP did not error out within 20 s"; }
  sleep 0.2
done
te=$(date +%s%N)
rxe_ctl "${CTL[a]}" "killall ibv-traffic" 5 >/dev/null 2>&1 || true
criu_mnicctl a counters --engine >"$out/counters-a.txt" || fail "counters of NIC A"
[ "$(cnt mig_pause_timeouts)" -gt "${to0:-0}" ] || fail "dead source: NIC A counted no pause timeout ($(cnt mig_pause_timeouts))"
check_dmesg a b d
echo "dead source: A's paused QP gave up $(( (te - td) / 1000000 )) ms after the dump (pause bound 3000 ms; mig_pause_timeouts $(cnt mig_pause_timeouts))"

echo "PASS criu: ibv-traffic B -> C -> C ($((XQPS + 1)) QPs over $XCTX contexts, A's largest gap ${gap:-?} ms), a failed restore rolled back, both ends at once, a dead source; in $(( $(date +%s) - t0 )) s"
