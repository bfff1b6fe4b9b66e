#!/usr/bin/env bash
# mnic-switch's egress queue and ECN marking, frame by frame, with two
# VDE clients of this test's own (Python, speaking the protocol that
# fabric/mnic_switch.c's header comment documents): A sends N ECN-capable
# (ECT(0)) IPv4/UDP frames to B, which does not read until A is done, so
# B's socket fills (net.unix.max_dgram_qlen), then the switch's queue for
# B (--queue 32), then the switch drops.  With ecn_queue=4 on B's port:
#   - B receives exactly the frames the switch counted as tx, in order;
#   - ecn_marked = 32 - 4 = 28 (a frame joining a queue of >= 4 is marked;
#     one the full queue drops is not), and B sees exactly those 28 CE
#     frames, each with a correct IPv4 header checksum, the rest ECT(0);
#   - dropped_queue_full = N - tx, and the conservation rules hold;
#   - a request with a wrong magic, and a join beyond --max-ports 2, are
#     refused and counted (refused_joins).
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/switch-queue-ecn; rm -rf "$out"; mkdir -p "$out"
MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue 32 --max-ports 2 --impair 2:ecn_queue=4" mnic_switch_start "$out/switch"
qlen=$(cat /proc/sys/net/unix/max_dgram_qlen)
n=$((qlen + 300))
python3 - "$out/switch" "$n" "$MNIC_ROOT/tests/tools" >"$out/clients.log" 2>&1 <<'PY' || { cat "$out/clients.log"; mnic_die "the VDE clients failed"; }
import struct, sys, time
sys.path.insert(0, sys.argv[3])
import vde_client

sw, n = sys.argv[1], int(sys.argv[2])
A, B = bytes.fromhex("525400630001"), bytes.fromhex("525400630002")
csum = vde_client.csum
def join(name, magic=0xfeedface):
    return vde_client.join(sw, name, magic, tag="switch_queue_ecn")
def frame(seq):
    return vde_client.frame(B, A, seq)

c, d = join("bad", magic=0xdeadbeef)
assert c is None, "a request with a wrong magic was answered"
ca, da = join("A")                      # port 1
cb, db = join("B")                      # port 2
c, d = join("C")
assert c is None, "a third port was answered beyond --max-ports 2"
db.send(b"\xff" * 6 + B + b"\x88\xb5" + bytes(46))   # B is learned
time.sleep(0.2)
for i in range(n):
    da.send(frame(i))                   # blocking: the switch reads them all
time.sleep(1.0)                         # the switch has queued or dropped each
db.setblocking(False)
got, idle = [], 0
while idle < 50:                        # read until 0.5 s of silence
    try:
        f = db.recv(65536)
    except BlockingIOError:
        idle += 1
        time.sleep(0.01)
        continue
    idle = 0
    got.append(f)
seqs = [struct.unpack("!I", f[42:46])[0] for f in got]
assert seqs == sorted(seqs), "frames reordered"
ce = [f for f in got if f[15] & 3 == 3]
assert all(f[15] & 3 in (2, 3) for f in got), "a frame neither ECT(0) nor CE"
for f in ce:
    assert csum(f[14:34][:10] + b"\0\0" + f[14:34][12:]) == struct.unpack("!H", f[24:26])[0], \
        "a CE frame's IPv4 checksum is wrong"
print(f"received={len(got)} ce={len(ce)} first={seqs[0]} last={seqs[-1]}")
PY
cat "$out/clients.log"
mnic_switch_stats "$out/switch"
got=$(sed -n 's/^received=\([0-9]*\) .*/\1/p' "$out/clients.log")
ce=$(sed -n 's/.* ce=\([0-9]*\) .*/\1/p' "$out/clients.log")
python3 "$MNIC_ROOT/tests/tools/switch_stats.py" "$out/switch.stats.json" --show \
  --expect "ports[1]['tx'] == $got" \
  --expect "ports[1]['ecn_marked'] == 28 == $ce" \
  --expect "ports[1]['dropped_queue_full'] == ports[1]['offered'] - ports[1]['tx'] > 0" \
  --expect "ports[1]['queue_max'] == 32 and ports[1]['offered'] == $n" \
  --expect "ports[0]['rx'] == $n" \
  --expect "stats['refused_joins'] == 2 and stats['joins'] == 2" || \
  mnic_die "the switch's counters are not what the clients saw"
echo "switch_queue_ecn: PASS"
