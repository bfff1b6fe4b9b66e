#!/usr/bin/env bash
# RoCEv2 RC end to end: two POSIX NICs through the switch, seeded
# impairment on both (5 % drop, 1 % duplicate, 5 % reorder, 0.1 % corrupt),
# 10,000 messages each way (4 QPs x 2,500) of random opcode (SEND,
# SEND_IMM, WRITE, WRITE_IMM, READ, FETCH_ADD, CMP_SWAP) and random size
# 0 B - 1 MiB (log-uniform).  Every byte is verified (firmware/rcx.c): no
# message lost, duplicated or reordered, no error completion.  Both NICs
# capture to pcap (MNIC_PCAP); tshark must decode every packet as
# InfiniBand over UDP 4791 with no malformed packet or expert error.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/rc-impaired; rm -rf "$out"; mkdir -p "$out"
mnic_switch_start "$out/switch"
MSGS=${RC_MSGS:-2500}
spec="drop=0.05,dup=0.01,reorder=0.05,corrupt=0.001"
args="qps=4 msgs=$MSGS max_size=1048576 mtu=4 timeout_ms=600000"
pids=()
for i in 1 2; do
  me=52:54:00:60:00:0$i; peer=52:54:00:60:00:0$((3 - i))
  MNIC_PCAP=$out/nic$i.pcap "$MNIC_ROOT/build/posix/mnic-fw" --name nic$i --vde "$out/switch" \
    --mac $me --bar "$out/nic$i.bar" --bar-size 64M --impair "$spec,seed=$((i * 101))" \
    -- rcx peer=$peer $args >"$out/nic$i.log" 2>&1 &
  pids+=($!); mnic_track $!
done
rc=0
for i in 0 1; do mnic_wait_pid "${pids[$i]}" 900; [ "$MNIC_RC" = 0 ] || rc=1; done
grep -h "^RCX\|E:" "$out"/nic*.log || true
[ $rc = 0 ] || { tail -20 "$out"/nic*.log; exit 1; }
for i in 1 2; do
  grep -q "^RCX PASS qps=4 msgs=$MSGS ops=$((4 * MSGS)) " "$out/nic$i.log" || { echo "nic$i: not every op completed"; exit 1; }
done
# Recovery really happened under impairment.
grep -qE "^RCX PASS .* retransmits=[1-9]" "$out/nic1.log" || { echo "no retransmissions under 5 % loss?"; exit 1; }
if command -v tshark >/dev/null; then
  for i in 1 2; do
    n=$(tshark -r "$out/nic$i.pcap" -d udp.port==4791,infiniband -Y "infiniband" 2>/dev/null | wc -l)
    bad=$(tshark -r "$out/nic$i.pcap" -d udp.port==4791,infiniband -Y "_ws.malformed || _ws.expert.severity >= warning" 2>/dev/null | wc -l)
    echo "nic$i.pcap: $n InfiniBand packets, $bad malformed/expert"
    [ "$n" -gt 1000 ] && [ "$bad" = 0 ] || { echo "tshark found problems in nic$i.pcap"; exit 1; }
  done
else
  echo "tshark missing: run scripts/deps.sh"; exit 1
fi
