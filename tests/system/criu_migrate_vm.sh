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
#         \--- POSIX NIC C <-ivshmem-> VM C: criu page-server, criu restore
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
#   CRIU_VM_OPS=4000 CRIU_VM_RATE=200 (operations per end, paced per second)
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
OPS=${CRIU_VM_OPS:-4000}
RATE=${CRIU_VM_RATE:-200}
XQPS=${CRIU_VM_XQPS:-63}      # 64 QPs in all: one verified, 63 connected and idle
XCTX=${CRIU_VM_XCTX:-2}       # over two contexts
declare -A CTL IP MAC
IP=([a]=10.0.10.1 [b]=10.0.10.2 [c]=10.0.10.3)
MAC=([a]=52:54:00:00:0a:01 [b]=52:54:00:00:0a:02 [c]=52:54:00:00:0a:03)
VM_MEM_MIB=256
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
base=$(mnic_free_ports 3 17420) || mnic_die "no free 127.0.0.1 ports"
CTL=([a]=$base [b]=$((base + 1)) [c]=$((base + 2)))

criu_vm_build "$out/mnic-initrd.gz"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

t0=$(date +%s)
for v in a b c; do
  mnic_nic_start nic$v ${MAC[$v]} "$out/$v.ram" $VM_MEM_MIB || fail "the POSIX NIC $v did not come up"
  mnic_vm_start mnic-$v "$out/mnic-initrd.gz" "$out/$v.ram" $VM_MEM_MIB ${IP[$v]}/24 "${CTL[$v]}" nic$v
  # verbs QPs carry no migration key: the NICs take unkeyed RESUME and
  # NAK_STOPPED, and a paused QP waits up to 60 s for its peer
  "$root/build/host/hostdrv/mnicctl" -d "$out/nic$v.bar" mig-config --pause-ms 60000 --unkeyed \
    >"$out/mig-config-$v.txt" || fail "mig-config on NIC $v"
done
declare -A G
for v in a b c; do
  G[$v]=$(mnic_vm_ready mnic-$v 300) || fail "the mnic VM $v did not come up ($out/mnic-$v.log)"
done
echo "setup: $(( $(date +%s) - t0 )) s (three VMs)"
# (informational: the VMs lack tun, veth and ptys, which this process does not use)
rxe_ctl "${CTL[b]}" "criu check" 60 >"$out/criu-check.txt" 2>&1 || true

# the client's service address: its TCP connection's, moves with it
CRIU_SVC=10.0.10.100 CRIU_SVC_PEER=${IP[a]} CRIU_LOG=/tmp/client.log
criu_svc b $CRIU_SVC $CRIU_SVC_PEER || fail "service address on B"
targs="-m 1024 -s 4096 -n $OPS -r $RATE -p 18515 -t 120 -Q $XQPS -C $XCTX"
rxe_bg "${CTL[a]}" tr "ibv-traffic -d mnic0 -g ${G[a]} $targs"
criu_listening a 18515 || { rxe_fg "${CTL[a]}" tr 5; fail "ibv-traffic never listened on A"; }
# the client: its own session, stdio on a file, so that CRIU takes the whole tree
pid=$(rxe_ctl "${CTL[b]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G[b]} $targs ${IP[a]} </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  { rxe_ctl "${CTL[b]}" "cat /tmp/client.log; ps" 5 || true; fail "the client did not start"; }
echo "client pid $pid on VM B"

sleep $(( OPS / RATE / 3 ))
criu_migrate b c 1 /tmp/client.log
sleep $(( OPS / RATE / 3 ))
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
for v in a b c; do
  rxe_ctl "${CTL[$v]}" "dmesg" >"$out/mnic-$v-dmesg.txt" || true
  if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
       "$out/mnic-$v-dmesg.txt"; then
    fail "kernel warnings in VM $v's dmesg ($out/mnic-$v-dmesg.txt)"
  fi
done
# A's QP took the NAK_STOPPED (paused, MigrOS's Stopped peer) and the
# restored contexts' RESUMEs, and never gave up waiting
"$root/build/host/hostdrv/mnicctl" -d "$out/nica.bar" counters --engine >"$out/counters-a.txt" ||
  fail "counters of NIC A"
cnt() { awk -v k="$1" '$1 == k { print $2 }' "$out/counters-a.txt"; }
[ "$(cnt comp_naks_stopped)" -ge 1 ] && [ "$(cnt mig_pauses)" -ge 1 ] && [ "$(cnt resp_resumes)" -ge 2 ] &&
  [ "$(cnt mig_pause_timeouts)" = 0 ] ||
  fail "NIC A: comp_naks_stopped $(cnt comp_naks_stopped) mig_pauses $(cnt mig_pauses) resp_resumes $(cnt resp_resumes) mig_pause_timeouts $(cnt mig_pause_timeouts)"
echo "NIC A: comp_naks_stopped $(cnt comp_naks_stopped), mig_pauses $(cnt mig_pauses), resp_resumes $(cnt resp_resumes)"
echo "PASS criu migrated ibv-traffic B -> C -> C ($((XQPS + 1)) QPs over $XCTX contexts, $OPS ops each way at $RATE/s, A's largest gap ${gap:-?} ms) in $(( $(date +%s) - t0 )) s"
