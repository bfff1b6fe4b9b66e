#!/usr/bin/env bash
# CRIU checkpoints and restores an unmodified verbs application with its
# RDMA context on the mnic NIC (issue 17, first step): the verified verbs
# workload ibv-traffic (libibverbs only) runs between two x86_64 Debian VMs
# on POSIX NICs, and at a third of its run `criu dump` on VM B (with
# mnic_criu_plugin.so: DUMP stops the context, NAK_STOPPED pauses A's QP)
# and `criu restore` on the same VM and NIC (the plugin recreates every
# uverbs object with its handle, QPN and keys, RESUME pins the restored
# pages and resumes: A's QP follows the RESUME) move it; it finishes with
# every message, READ and atomic verified on both ends.  The process also
# holds its out-of-band TCP connection (--tcp-established) and its log file.
#
#   switch --- POSIX NIC A <-ivshmem-> VM A: ibv-traffic server
#         \--- POSIX NIC B <-ivshmem-> VM B: ibv-traffic client, criu
#
# Checked: both ends PASS with lost/dup/ooo/bad 0 and peer PASS; the client
# is the restored process (its pid after restore, CRIU's "Restore finished
# successfully"); the plugin's lines (dumped, resumed); the mnic.ko
# counters (ib_mig_dump, ib_mig_restore, ib_mig_resume) and the
# firmware's; the largest gap A saw; no WARNING/BUG/Oops in either dmesg.
#
#   CRIU_VM_OPS=3000 CRIU_VM_RATE=300 (operations per end, paced per second)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
mnic_init
out=${CRIU_VM_OUT:-$root/build/test-system/criu-vm}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
OPS=${CRIU_VM_OPS:-3000}
RATE=${CRIU_VM_RATE:-300}
MAC_A=52:54:00:00:0a:01 MAC_B=52:54:00:00:0a:02
IP_A=10.0.10.1 IP_B=10.0.10.2
VM_MEM_MIB=256
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
criu=$(command -v criu) || mnic_die "criu missing: run scripts/deps.sh (criu)"
base=$(mnic_free_ports 2 17420) || mnic_die "no free 127.0.0.1 ports"
declare -A CTL
CTL=([a]=$base [b]=$((base + 1)))

# CRIU in the VM: its binary and libraries, the plugin where criu looks
# (/usr/lib/criu/), the socket-diag and nf_tables modules (TCP repair's
# network lock), crc32c.
MNIC_VM_MODULES="crc32c_generic inet_diag tcp_diag udp_diag unix_diag netlink_diag af_packet_diag nf_tables" \
MNIC_VM_FILES="$root/build/host/criu/mnic_criu_plugin.so:/usr/lib/criu/mnic_criu_plugin.so" \
  mnic_vm_build "$out/mnic-initrd.gz" "$root/build/host/tools/ibv-traffic $criu"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

t0=$(date +%s)
mnic_nic_start nica $MAC_A "$out/a.ram" $VM_MEM_MIB || fail "the POSIX NIC A did not come up"
mnic_vm_start mnic-a "$out/mnic-initrd.gz" "$out/a.ram" $VM_MEM_MIB $IP_A/24 "${CTL[a]}" nica
mnic_nic_start nicb $MAC_B "$out/b.ram" $VM_MEM_MIB || fail "the POSIX NIC B did not come up"
mnic_vm_start mnic-b "$out/mnic-initrd.gz" "$out/b.ram" $VM_MEM_MIB $IP_B/24 "${CTL[b]}" nicb
# verbs QPs carry no migration key: both NICs take unkeyed RESUME and
# NAK_STOPPED, and a paused QP waits up to 60 s for its peer
for n in a b; do
  "$root/build/host/hostdrv/mnicctl" -d "$out/nic$n.bar" mig-config --pause-ms 60000 --unkeyed \
    >"$out/mig-config-$n.txt" || fail "mig-config on NIC $n"
done
ga=$(mnic_vm_ready mnic-a 300) || fail "the mnic VM A did not come up ($out/mnic-a.log)"
gb=$(mnic_vm_ready mnic-b 300) || fail "the mnic VM B did not come up ($out/mnic-b.log)"
echo "setup: $(( $(date +%s) - t0 )) s"
# (informational: the VM lacks tun, veth and ptys, which this process does not use)
rxe_ctl "${CTL[b]}" "criu check" 60 >"$out/criu-check.txt" 2>&1 || true

listening() {
  rxe_ctl "${CTL[$1]}" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 60
}
targs="-m 1024 -s 4096 -n $OPS -r $RATE -p 18515 -t 90"
rxe_bg "${CTL[a]}" tr "ibv-traffic -d mnic0 -g $ga $targs"
listening a || { rxe_fg "${CTL[a]}" tr 5; fail "ibv-traffic never listened on A"; }
# the client: its own session, stdio on a file, so that CRIU takes the whole tree
pid=$(rxe_ctl "${CTL[b]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g $gb $targs $IP_A </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  { rxe_ctl "${CTL[b]}" "cat /tmp/client.log; ps" 5 || true; fail "the client did not start"; }
echo "client pid $pid on VM B"
# a third of the run
sleep $(( OPS / RATE / 3 ))
rxe_ctl "${CTL[b]}" "grep -q PASS /tmp/client.log && echo 'finished early'; kill -0 $pid" 10 ||
  fail "the client is not running before the dump"
t_dump=$(date +%s%N)
rxe_ctl "${CTL[b]}" "mkdir -p /tmp/img && criu dump -t $pid -D /tmp/img --tcp-established --network-lock nftables -v4 -o dump.log; rc=\$?; grep -E 'mnic-criu|Error|rror \(' /tmp/img/dump.log | tail -20; exit \$rc" 120 \
  >"$out/dump.txt" 2>&1 || { cat "$out/dump.txt"; rxe_ctl "${CTL[b]}" "tail -40 /tmp/img/dump.log" 5 || true; fail "criu dump"; }
t_dumped=$(date +%s%N)
rxe_ctl "${CTL[b]}" "criu restore -D /tmp/img --tcp-established -d -v4 -o restore.log; rc=\$?; grep -E 'mnic-criu|Error|rror \(' /tmp/img/restore.log | tail -20; exit \$rc" 120 \
  >"$out/restore.txt" 2>&1 || { cat "$out/restore.txt"; rxe_ctl "${CTL[b]}" "tail -60 /tmp/img/restore.log" 5 || true; fail "criu restore"; }
t_restored=$(date +%s%N)
cat "$out/dump.txt" "$out/restore.txt"
printf 'criu dump %d ms, criu restore %d ms\n' $(( (t_dumped - t_dump) / 1000000 )) $(( (t_restored - t_dumped) / 1000000 ))
rxe_ctl "${CTL[b]}" "ls -la /tmp/img" 10 >"$out/img-ls.txt" 2>&1 || true
rxe_ctl "${CTL[b]}" "cat /tmp/img/mnic-criu.log" 10 >"$out/mnic-criu.log" 2>&1 || true
rxe_ctl "${CTL[b]}" "cat /tmp/img/restore.log" 20 >"$out/restore.log" 2>&1 || true
cat "$out/mnic-criu.log"

# both ends finish
rxe_fg "${CTL[a]}" tr 120 >"$out/server.txt" 2>&1 || true
rxe_ctl "${CTL[b]}" "i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 600 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/client.log" 320 \
  >"$out/client.txt" 2>&1 || true
cat "$out/server.txt" "$out/client.txt"
for e in server client; do
  grep -qE "^ibv-traffic: PASS ops $OPS .* lost 0 dup 0 ooo 0 bad 0 .* bad_read 0 .* bad_atomic 0 errors 0 peer PASS" "$out/$e.txt" ||
    fail "the $e did not verify ($out/$e.txt)"
done
gap=$(sed -n 's/^ibv-traffic: PASS.*max_gap_ms \([0-9.]*\).*/\1/p' "$out/server.txt" | head -1)
echo "A (server) saw a largest gap of ${gap:-?} ms between completions"
grep -q "mnic-criu: \[[0-9]*\] pid $pid .*dumped" "$out/dump.txt" || fail "the plugin did not dump the context"
grep -q "Restore finished successfully" "$out/restore.log" || fail "criu did not finish the restore ($out/restore.log)"
grep -q "mnic-criu: \[[0-9]*\] pid $pid fd [0-9]*: context [0-9]* resumed" "$out/mnic-criu.log" ||
  fail "the plugin did not resume the context ($out/mnic-criu.log)"
for c in ib_mig_dump ib_mig_restore ib_mig_resume; do
  v=$(rxe_ctl "${CTL[b]}" "cat /sys/class/misc/mnic0/counters/$c" 5) || v=
  [ "$v" = 1 ] || fail "VM B: $c is ${v:-?}, want 1"
done
for c in ib_mig_dump_failed ib_mig_restore_failed ib_mig_resume_failed ib_mig_refused; do
  v=$(rxe_ctl "${CTL[b]}" "cat /sys/class/misc/mnic0/counters/$c" 5) || v=
  [ "$v" = 0 ] || fail "VM B: $c is ${v:-?}, want 0"
done
for v in a b; do
  rxe_ctl "${CTL[$v]}" "dmesg" >"$out/mnic-$v-dmesg.txt" || true
  if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
       "$out/mnic-$v-dmesg.txt"; then
    fail "kernel warnings in VM $v's dmesg ($out/mnic-$v-dmesg.txt)"
  fi
done
# A's QP took the NAK_STOPPED (paused, MigrOS's Stopped peer) and the
# restored context's RESUME, and never gave up waiting
"$root/build/host/hostdrv/mnicctl" -d "$out/nica.bar" counters --engine >"$out/counters-a.txt" ||
  fail "counters of NIC A"
cnt() { awk -v k="$1" '$1 == k { print $2 }' "$out/counters-a.txt"; }
[ "$(cnt comp_naks_stopped)" -ge 1 ] && [ "$(cnt mig_pauses)" -ge 1 ] && [ "$(cnt resp_resumes)" -ge 1 ] &&
  [ "$(cnt mig_pause_timeouts)" = 0 ] ||
  fail "NIC A: comp_naks_stopped $(cnt comp_naks_stopped) mig_pauses $(cnt mig_pauses) resp_resumes $(cnt resp_resumes) mig_pause_timeouts $(cnt mig_pause_timeouts)"
echo "NIC A: comp_naks_stopped $(cnt comp_naks_stopped), mig_pauses $(cnt mig_pauses), resp_resumes $(cnt resp_resumes)"
echo "PASS criu dump + restore of ibv-traffic on VM B ($OPS ops each way at $RATE/s) in $(( $(date +%s) - t0 )) s"
