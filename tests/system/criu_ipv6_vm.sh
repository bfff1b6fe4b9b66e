#!/usr/bin/env bash
# Live migration with CRIU over RoCEv2 over IPv6 (issue 19 item 1): an
# unmodified libibverbs process (ibv-traffic, its QP on IPv6 GIDs) moves
# from host B to host C while it talks to host A, on three mnic VMs
# (x86_64 Debian, mnic.ko, the provider, CRIU and mnic_criu_plugin.so; the
# setup of criu_migrate_vm.sh):
#
#   A fd00:b::1 (server)   B fd00:b::2 (client, dumped)   C fd00:b::3 (target)
#
# The client's QP sends from its IPv6 GID (sgid_index = mnic0's global
# address); after the restore on C the same index names C's address, and
# the QP's RESUME (protocol version 2) carries that IPv6 GID: A's QP
# follows it, authenticated like any RESUME.  The process's TCP connection
# uses a service address that moves with it (criu_svc).  Checked: both
# ends verify every message, READ and atomic; A's QP addresses C's IPv6
# GID afterwards and is not paused; NIC A received the RESUME over IPv6
# from C's address and no QP lacked a source address; no
# WARNING/BUG/Oops in any dmesg.
#
#   CRIU_IPV6_OPS=6000 CRIU_IPV6_RATE=200 (operations per end, paced per second)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
. "$root/tests/interop/criu.sh"
mnic_init
out=${CRIU_IPV6_OUT:-$root/build/test-system/criu-ipv6}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
OPS=${CRIU_IPV6_OPS:-6000}
RATE=${CRIU_IPV6_RATE:-200}
declare -A CTL IP IP6 MAC G G6
IP=([a]=10.0.11.1 [b]=10.0.11.2 [c]=10.0.11.3)
IP6=([a]=fd00:000b:0000:0000:0000:0000:0000:0001 [b]=fd00:000b:0000:0000:0000:0000:0000:0002
     [c]=fd00:000b:0000:0000:0000:0000:0000:0003)
MAC=([a]=52:54:00:00:0b:01 [b]=52:54:00:00:0b:02 [c]=52:54:00:00:0b:03)
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic criu-plugin >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
command -v tshark >/dev/null || mnic_die "tshark missing: run scripts/deps.sh"
base=$(mnic_free_ports 3 17460) || mnic_die "no free 127.0.0.1 ports"
CTL=([a]=$base [b]=$((base + 1)) [c]=$((base + 2)))

criu_vm_build "$out/mnic-initrd.gz"
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw
t0=$(date +%s)
CRIU_INITRD=$out/mnic-initrd.gz
criu_hosts mnic a b c
echo "setup: $(( $(date +%s) - t0 )) s (three VMs); IPv6 GID index: A ${G6[a]}, B ${G6[b]}, C ${G6[c]}"
[ "${G6[b]}" = "${G6[c]}" ] || fail "B's and C's global IPv6 GIDs have different indices (${G6[b]}, ${G6[c]}): the restored QP would fall back"

CRIU_SVC=10.0.11.100 CRIU_SVC_PEER=${IP[a]} CRIU_LOG=/tmp/client.log
criu_svc b $CRIU_SVC $CRIU_SVC_PEER || fail "service address on B"
targs="-m 1024 -s 4096 -n $OPS -r $RATE -p 18515 -t 120"
rxe_bg "${CTL[a]}" tr "ibv-traffic -d mnic0 -g ${G6[a]} $targs"
criu_listening a 18515 || { rxe_fg "${CTL[a]}" tr 5; fail "ibv-traffic never listened on A"; }
pid=$(rxe_ctl "${CTL[b]}" "setsid sh -c 'exec ibv-traffic -d mnic0 -g ${G6[b]} $targs ${IP[a]} </dev/null >/tmp/client.log 2>&1' & sleep 1; pidof ibv-traffic") ||
  { rxe_ctl "${CTL[b]}" "cat /tmp/client.log; ps" 5 || true; fail "the client did not start"; }
echo "client pid $pid on VM B"
sleep 6
# the connection runs over IPv6: A's QP addresses B's global GID
criu_mnicctl a --json qp list >"$out/qps-a-before.json" || fail "mnicctl qp list on A"
grep -q '"dgid": *"fd00:b::2"' "$out/qps-a-before.json" ||
  { cat "$out/qps-a-before.json"; fail "A's QP does not address B's IPv6 GID"; }
criu_migrate b c 1 /tmp/client.log
# while the run goes on: A's QP follows the RESUME to C's IPv6 GID
sleep 2
criu_mnicctl a --json qp list >"$out/qps-a-after.json" || fail "mnicctl qp list on A"
grep -q '"dgid": *"fd00:b::3"' "$out/qps-a-after.json" && grep -q '"paused": *0' "$out/qps-a-after.json" ||
  { cat "$out/qps-a-after.json"; fail "A's QP does not address C's IPv6 GID after the move (or is paused)"; }

rxe_fg "${CTL[a]}" tr 150 >"$out/server.txt" 2>&1 || true
rxe_ctl "${CTL[c]}" "i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.5; i=\$((i+1)); done; cat /tmp/client.log" 170 \
  >"$out/client.txt" 2>&1 || true
grep -h '^ibv-traffic:' "$out/server.txt" "$out/client.txt"
for e in server client; do
  grep -qE "^ibv-traffic: PASS ops $OPS .* lost 0 dup 0 ooo 0 bad 0 .* bad_read 0 .* bad_atomic 0 errors 0 peer PASS" "$out/$e.txt" ||
    { cat "$out/$e.txt"; fail "the $e did not verify ($out/$e.txt)"; }
done
criu_mnicctl a counters --engine >"$out/counters-a.txt" || fail "counters on A"
cnt() { awk -v n="$1" '$1 == n { print $2 }' "$out/counters-a.txt"; }
[ "$(cnt resp_resumes)" -ge 1 ] && [ "$(cnt rx_ipv6_packets)" -gt 1000 ] && [ "$(cnt tx_no_gid)" = 0 ] &&
  [ "$(cnt mig_pause_timeouts)" = 0 ] && [ "$(cnt mig_resume_forged)" = 0 ] ||
  fail "NIC A: resp_resumes $(cnt resp_resumes) rx_ipv6_packets $(cnt rx_ipv6_packets) tx_no_gid $(cnt tx_no_gid) mig_pause_timeouts $(cnt mig_pause_timeouts) mig_resume_forged $(cnt mig_resume_forged)"
echo "NIC A: resp_resumes $(cnt resp_resumes), rx_ipv6_packets $(cnt rx_ipv6_packets), tx_no_gid 0"
# the RESUME (BTH opcode 0x19) reached A over IPv6 from C's address
sleep 1
nres=$(tshark -r "$out/nica.pcap" -Y "ipv6.src == fd00:b::3 && infiniband.bth.opcode == 0x19" 2>/dev/null | wc -l)
[ "$nres" -ge 1 ] || fail "no RESUME over IPv6 from fd00:b::3 in NIC A's capture"
echo "NIC A's capture: $nres RESUME frame(s) over IPv6 from fd00:b::3"
for v in a b c; do
  rxe_ctl "${CTL[$v]}" "dmesg" >"$out/dmesg-$v.txt" 2>&1 || true
  if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
       "$out/dmesg-$v.txt"; then
    fail "kernel warnings in VM $v's dmesg ($out/dmesg-$v.txt)"
  fi
done
echo "PASS CRIU migration over RoCEv2/IPv6: B -> C, A followed the RESUME to fd00:b::3 in $(( $(date +%s) - t0 )) s"
