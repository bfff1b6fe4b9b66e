#!/usr/bin/env bash
# Doorbells and interrupts on a QEMU A15 NIC (issue 15 item 1,
# docs/host-interface.md "Doorbells and interrupts"): its host BAR is an
# ivshmem-doorbell served by mnic-ivshmem-server (qemu-board/nic.sh), and a
# libmnic BAR-file process joins that server as a peer (hostdrv/lib/ivsh.c).
# Both NICs poll their BAR every 1 s only (db_min_us = db_max_us = 1000000),
# so anything served faster came through a doorbell, not a poll tick:
#   1. mnic-db-bench A(A15) B(POSIX): 20 SENDs rung on A reach B (B's own
#      capture: one switch hop after A's wire) and 20 commands on A answer,
#      each far below 1 s (the ring: eventfd -> QEMU -> MSI-X vector 0 ->
#      GICv2m SPI -> WFI wakes; the answer: Doorbell register -> our
#      eventfd); A counts the rings and raises (dbch_*); the init segment
#      names the NIC's peer ID and the host's bit is gone after it exits
#   2. a host that never rings (MNIC_DOORBELL_CHANNEL=off) is served by the
#      poll, at its pace (>= 0.5 s for mnicctl info)
#   3. the server drops a client that talks (one-way protocol), refuses a
#      peer beyond its --max-peers (4 here), keeps serving, and exits by
#      itself once the NIC is gone; a server whose --owner exits before any
#      client came goes at once
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/doorbell-irq-a15; rm -rf "$out"; mkdir -p "$out"
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl DB=$tools/mnic-db-bench
fw=$MNIC_ROOT/build/posix/mnic-fw
for f in "$fw" "$M" "$DB" "$MNIC_ROOT/build/qemu-virt-a15/mnic-fw.elf"; do
  [ -e "$f" ] || mnic_die "$f missing: run make images"
done
poll="run db_min_us=1000000 db_max_us=1000000"
mnic_switch_start "$out/switch"
SAN=1 MNIC_IVSH_MAX_PEERS=4 "$MNIC_ROOT/qemu-board/nic.sh" --board qemu-virt-a15 --name a --mac 52:54:00:74:00:01 \
  --switch "$out/switch" --bar "$out/a.bar" -- $poll >"$out/a.log" 2>&1 &
pid_a=$!; mnic_track $pid_a
MNIC_PCAP=$out/b.pcap "$fw" --name b --vde "$out/switch" --mac 52:54:00:74:00:02 --bar "$out/b.bar" \
  -- $poll >"$out/b.log" 2>&1 &
pid_b=$!; mnic_track $pid_b
for n in a b; do
  mnic_wait_line "$out/$n.log" "^MNIC READY" 60 "" || { cat "$out/$n.log"; mnic_die "$n not ready"; }
done
A=$out/a.bar B=$out/b.bar
[ -S "$A.ivsh" ] || mnic_die "no ivshmem server socket at $A.ivsh"
srv_pid=$(pgrep -f "mnic-ivshmem-server --socket $A.ivsh" | head -1)
[ -n "$srv_pid" ] || mnic_die "no mnic-ivshmem-server for $A"
mnic_track "$srv_pid"   # it exits by itself (step 3 checks); this is the safety net
grep -q "host BAR ivshmem-doorbell" "$out/a.log" || { cat "$out/a.log"; mnic_die "A's host BAR is not the ivshmem-doorbell"; }
. "$(dirname "$0")/../tools/doorbell-test-lib.sh"

# ---- 1. served at once --------------------------------------------------------
ms=$(ms_of "$DB" -n 20 -g 2000 -t a15 "$A" "$B" "$out/b.pcap")
cat "$out/last.out" "$out/last.err"
wire=$(max_of doorbell_to_wire <"$out/last.err") rtt=$(max_of cmd_rtt <"$out/last.err")
[ -n "$wire" ] && [ -n "$rtt" ] || mnic_die "mnic-db-bench: no max line"
[ "$wire" -lt 300000 ] || mnic_die "a doorbell took ${wire} us to reach B (1 s poll: the MSI did not wake the A15)"
[ "$rtt" -lt 300000 ] || mnic_die "a command took ${rtt} us (1 s poll: the ring or the host's vector did not work)"
echo "ok: 20 doorbells at B in at most ${wire} us, 20 commands in at most ${rtt} us (whole run ${ms} ms)"
rings=$(counter "$A" dbch_rings) raises=$(counter "$A" dbch_raises)
[ "$rings" -ge 20 ] && [ "$raises" -ge 20 ] || mnic_die "A counted $rings rings and $raises raises, want >= 20 each"
echo "ok: A counted $rings rings (MSI-X) and $raises raises (Doorbell writes)"
python3 "$MNIC_ROOT/tests/system/mnic_bar.py" "$A" >"$out/a.bar.txt"
grep -q "irq_nic_id=0 irq_hosts=none" "$out/a.bar.txt" || { cat "$out/a.bar.txt"; mnic_die "A's init segment: want NIC peer 0 and no host registered after the bench exited"; }
grep -q "peer 1 connected" "$A.ivsh.log" || { cat "$A.ivsh.log"; mnic_die "the bench never joined A's server"; }
echo "ok: init segment names NIC peer 0; the host's irq_host_ids slot was freed at exit"

# ---- 2. a host that never rings ------------------------------------------------
ms=$(ms_of env MNIC_DOORBELL_CHANNEL=off "$M" -d "$A" info)
grep -qE "state +READY" "$out/last.out" || mnic_die "mnicctl info without the channel: no READY"
[ "$ms" -ge 500 ] || mnic_die "mnicctl info without the channel took ${ms} ms: faster than a 1 s poll allows"
echo "ok: a host that never rings is served by the fallback poll (mnicctl info in ${ms} ms)"

# ---- 3. hostile clients of the server, then its exit ----------------------------
python3 - "$A.ivsh" <<'PY' || mnic_die "hostile ivshmem clients: see above"
import socket, sys, time
path = sys.argv[1]
talker = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); talker.connect(path)
talker.sendall(b"hello, server")           # the protocol is one-way
time.sleep(0.3)
many = []
for i in range(6):                          # 4 IDs: the NIC has one
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); many.append(s)
time.sleep(0.5)
for s in many: s.close()
talker.close()
PY
sleep 0.5
grep -q "dropped: sent data on a one-way protocol" "$A.ivsh.log" || { cat "$A.ivsh.log"; mnic_die "the server did not drop a talking client"; }
grep -q "refused a client: all 4 peers connected" "$A.ivsh.log" || { cat "$A.ivsh.log"; mnic_die "the server did not refuse a 5th peer"; }
ms=$(ms_of "$M" -d "$A" info)
[ "$ms" -lt 500 ] || mnic_die "after the hostile clients mnicctl info took ${ms} ms: the doorbell no longer works"
echo "ok: the server dropped the talker, refused the 5th peer, and still serves (mnicctl info in ${ms} ms)"
kill "$pid_a"; wait "$pid_a" 2>/dev/null || true
for _ in $(seq 100); do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$srv_pid" 2>/dev/null && mnic_die "mnic-ivshmem-server still runs after its NIC exited"
[ ! -e "$A.ivsh" ] || mnic_die "the server left its socket behind"
tail -1 "$A.ivsh.log"
# A NIC's QEMU that dies before it connects leaves no server behind: the
# server started with --owner (nic.sh names itself, then execs QEMU) goes
# as soon as that process exits, not --linger (30 s) later.
srv=$MNIC_ROOT/build/host-asan/qemu-board/mnic-ivshmem-server
sleep 1 & owner=$!
"$srv" --socket "$out/own.ivsh" --shm "$A" --vectors 4 --linger 30 --owner $owner 2>"$out/own.log" &
own_srv=$!; mnic_track $own_srv
wait $owner || true
for _ in $(seq 40); do kill -0 $own_srv 2>/dev/null || break; sleep 0.05; done
kill -0 $own_srv 2>/dev/null && { cat "$out/own.log"; mnic_die "the server outlived its --owner by 2 s (linger 30)"; }
grep -q "the owner process exited" "$out/own.log" || { cat "$out/own.log"; mnic_die "the server did not say why it went"; }
[ ! -e "$out/own.ivsh" ] || mnic_die "the server left its socket behind after its owner exited"
"$srv" --socket "$out/own.ivsh" --shm "$A" --owner 999999999 2>"$out/own2.log" && mnic_die "--owner of no process accepted"
grep -q -- "--owner" "$out/own2.log" || { cat "$out/own2.log"; mnic_die "--owner refusal does not say what is wrong"; }
echo "ok: a server whose owner (the NIC's QEMU) exits goes at once; a bad --owner is refused"
echo "PASS doorbell_irq_a15"
