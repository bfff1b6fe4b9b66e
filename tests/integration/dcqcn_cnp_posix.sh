#!/usr/bin/env bash
# DCQCN end to end (issue 18 item 4) between two POSIX NICs through
# mnic-switch, which marks CE on both NICs' egress queues (ecn_queue=4)
# behind 100 Mbit/s links (rate_mbps=100):
#   1. rcx, 4 QPs x 400 verified messages each way up to 64 KiB, line rate
#      1000 Mbit/s: every message delivered and verified (RCX PASS), each
#      NIC whose queue was marked sent CNPs and its peer cut its rate on
#      them (rate_cuts > 0), the switch marked frames, the captures hold
#      exactly the CNPs sent (tshark: infiniband.bth.opcode == 0x81, each
#      with BECN, Not-ECT); data frames go out ECT(0).
#   2. mnicctl dcqcn on a NIC in run mode: show, set (read back), a value
#      out of range refused with its syndrome (exit 1, nothing changed), an
#      unknown key a usage error (exit 2).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/dcqcn-cnp; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
M=$MNIC_ROOT/build/host/hostdrv/mnicctl
for f in "$fw" "$M"; do [ -x "$f" ] || mnic_die "$f missing: make BOARD=posix all hostdrv"; done
command -v tshark >/dev/null || mnic_die "tshark missing: run scripts/deps.sh"
mac1=52:54:00:61:00:01 mac2=52:54:00:61:00:02
# Each NIC's port is a 100 Mbit/s link (rate_mbps): rcx offers more than
# that, so the queues build and marks come from a steady bottleneck, not
# from start-up bursts (rcx's hellos start both sides together).
MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue 64 --impair $mac1:ecn_queue=4,rate_mbps=100 --impair $mac2:ecn_queue=4,rate_mbps=100" \
  mnic_switch_start "$out/switch"

# ---- 1. verified traffic with ECN marking -----------------------------------
pids=()
for i in 1 2; do
  me=52:54:00:61:00:0$i peer=52:54:00:61:00:0$((3 - i))
  MNIC_PCAP=$out/nic$i.pcap "$fw" --name nic$i --vde "$out/switch" --mac $me \
    --bar "$out/nic$i.bar" --bar-size 64M \
    -- rcx peer=$peer qps=4 msgs=400 max_size=65536 mtu=3 line_mbps=1000 timeout_ms=300000 \
    >"$out/nic$i.log" 2>&1 &
  pids+=($!); mnic_track $!
done
rc=0
for i in 0 1; do mnic_wait_pid "${pids[$i]}" 400; [ "$MNIC_RC" = 0 ] || rc=1; done
grep -h "^RCX [PF]" "$out"/nic*.log || true
[ $rc = 0 ] || { tail -n 20 "$out"/nic*.log; mnic_die "a NIC failed"; }
mnic_switch_stats "$out/switch"
python3 "$MNIC_ROOT/tests/tools/switch_stats.py" "$out/switch.stats.json" --show \
  --expect "sum(p['ecn_marked'] for p in ports) > 0" || mnic_die "the switch marked nothing"
counter() {   # counter NIC NAME: rcx prints the counters that moved; 0 otherwise
  awk -v k="$2" '$1 == "RCX" && $2 == "COUNTER" && $3 == k { v = $4 } END { print v + 0 }' "$out/nic$1.log"
}
for i in 1 2; do
  grep -q "^RCX PASS qps=4 msgs=400 ops=1600 " "$out/nic$i.log" || mnic_die "nic$i: not every message verified"
  ce=$(counter $i ecn_ce_received); sent=$(counter $i cnp_sent); got=$(counter $i cnp_received)
  cuts=$(counter $i rate_cuts); waits=$(counter $i pacer_waits)
  echo "nic$i: ecn_ce_received=${ce:-0} cnp_sent=${sent:-0} cnp_suppressed=$(counter $i cnp_suppressed)" \
       "cnp_received=${got:-0} rate_cuts=${cuts:-0} rate_increases=$(counter $i rate_increases) pacer_waits=${waits:-0}"
  [ "$(counter $i cnp_malformed)$(counter $i cnp_no_qp)" = 00 ] || mnic_die "nic$i: CNPs from our own peer dropped"
done
# Both ports are bottlenecks, so both NICs received marked data and sent
# CNPs, and each peer (the sender of the marked data) cut its rate on them.
for i in 1 2; do
  sent=$(counter $i cnp_sent); j=$((3 - i))
  [ "${sent:-0}" -gt 0 ] || mnic_die "nic$i: no CNP sent for the CE-marked packets it received"
  got=$(counter $j cnp_received); cuts=$(counter $j rate_cuts)
  [ "${got:-0}" -gt 0 ] && [ "${got:-0}" -le "$sent" ] || mnic_die "nic$j: received ${got:-0} of nic$i's $sent CNPs"
  [ "${cuts:-0}" -gt 0 ] || mnic_die "nic$j: rate_cuts = 0 after ${got:-0} CNPs"
done

# The captures: the CNPs each NIC sent (as many as cnp_sent, BECN set,
# Not-ECT; Wireshark 4.0 does not decode BECN: BTH byte 4 is frame byte 46);
# every data/ACK packet sent ECT(0).
heur=()
for h in rpcrdma_infiniband smb_direct_infiniband iser_infiniband lnet_ib sdp_infiniband \
         eth_over_ib smcr_infiniband fc_infiniband; do
  heur+=(--disable-heuristic "$h")
done
for i in 1 2; do
  f=$out/nic$i.pcap me=52:54:00:61:00:0$i
  n=$(tshark "${heur[@]}" -r "$f" -Y "eth.src == $me && infiniband.bth.opcode == 0x81" 2>/dev/null | wc -l)
  becn=$(tshark "${heur[@]}" -r "$f" -Y "eth.src == $me && infiniband.bth.opcode == 0x81 && frame[46:1] == 40 && ip.dsfield.ecn == 0" 2>/dev/null | wc -l)
  data=$(tshark "${heur[@]}" -r "$f" -Y "eth.src == $me && infiniband.bth.opcode <= 0x14" 2>/dev/null | wc -l)
  ect=$(tshark "${heur[@]}" -r "$f" -Y "eth.src == $me && infiniband.bth.opcode <= 0x14 && ip.dsfield.ecn == 2" 2>/dev/null | wc -l)
  echo "nic$i.pcap: $n CNPs sent ($becn with BECN, Not-ECT), $ect of $data data/ACK packets ECT(0)"
  [ "$n" = "$becn" ] || mnic_die "nic$i: a CNP in the capture without BECN or not Not-ECT"
  [ "$n" = "$(counter $i cnp_sent)" ] || mnic_die "nic$i: capture has $n CNPs, cnp_sent says $(counter $i cnp_sent)"
  [ "$data" -gt 1000 ] && [ "$ect" = "$data" ] || mnic_die "nic$i: not every packet sent is ECT(0)"
done
[ "${KEEP_PCAP:-0}" = 1 ] || rm -f "$out"/nic?.pcap

# ---- 2. mnicctl dcqcn ---------------------------------------------------------
"$fw" --name nic3 --vde "$out/switch" --mac 52:54:00:61:00:03 --bar "$out/nic3.bar" --bar-size 64M \
  -- run db_min_us=20 db_max_us=1000 >"$out/nic3.log" 2>&1 &
nic3=$!; mnic_track $nic3
for _ in $(seq 100); do grep -q "MNIC READY" "$out/nic3.log" && break; sleep 0.1; done
"$M" -d "$out/nic3.bar" dcqcn show >"$out/show.txt"
grep -q "^line_rate_mbps *10000$" "$out/show.txt" && grep -q "^enable *1$" "$out/show.txt" \
  || { cat "$out/show.txt"; mnic_die "dcqcn show: not the defaults"; }
"$M" -d "$out/nic3.bar" dcqcn set line_rate_mbps=2500 g=512 ect=0 >"$out/set.txt"
grep -q "^line_rate_mbps *2500$" "$out/set.txt" && grep -q "^g *512$" "$out/set.txt" &&
  grep -q "^ect *0$" "$out/set.txt" || { cat "$out/set.txt"; mnic_die "dcqcn set: not read back"; }
set +e
"$M" -d "$out/nic3.bar" dcqcn set min_rate_mbps=3000 2>"$out/refused.txt"; r1=$?
"$M" -d "$out/nic3.bar" dcqcn set bogus=1 2>"$out/usage.txt"; r2=$?
set -e
cat "$out/refused.txt"
[ $r1 = 1 ] && grep -q "BAD_PARAM" "$out/refused.txt" && grep -q "DCQCN_MIN_RATE" "$out/refused.txt" \
  || mnic_die "dcqcn set min_rate_mbps above the line rate: exit $r1, not refused with its site"
[ $r2 = 2 ] || mnic_die "dcqcn set bogus=1: exit $r2, want 2 (usage)"
"$M" -d "$out/nic3.bar" --json dcqcn show | python3 -c \
  'import json,sys; d=json.load(sys.stdin); assert d["line_rate_mbps"]==2500 and d["min_rate_mbps"]==10, d'
kill "$nic3"; wait "$nic3" 2>/dev/null || true
echo "dcqcn_cnp_posix: PASS"
