#!/usr/bin/env bash
# mnic-switch's egress shaper (rate_mbps=, fabric/switch_core.h "egress
# shaper"): a port whose link is slower than its sender, the bottleneck
# the congestion-control tests need.  Two VDE clients of the test's own
# (tests/tools/vde_client.py): A sends N 1042-byte frames to B as fast as
# the switch takes them; B reads all the time.  With rate_mbps=20 and
# ecn_queue=8 on B's port, and a queue deep enough for all N:
#   - B receives all N, in order, no drop anywhere;
#   - they arrive paced: from the first to the last at least 90 % of
#     (N - 1) wire times ((1042 + 24) * 8 bits at 20 Mbit/s = 426.4 us
#     each), where the unshaped switch delivers the same burst at socket
#     speed;
#   - the queue behind the shaper builds (queue_max > 8) and frames that
#     join it at >= 8 are marked CE (ecn_marked > 0, B sees as many CE);
#   - the switch sleeps while the link is busy: its CPU time over the run
#     stays below half the run's wall time (it waits on a timeout, never
#     spins on POLLOUT);
#   - a bad rate (rate_mbps=0) is refused with a message.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/switch-rate; rm -rf "$out"; mkdir -p "$out"
n=400 rate=20
sw=$MNIC_ROOT/build/host-asan/fabric/mnic-switch
[ -x "$sw" ] || mnic_die "$sw not built; run: make images"
if "$sw" --dir "$out/bad" --impair 2:rate_mbps=0 2>"$out/bad.log"; then mnic_die "rate_mbps=0 accepted"; fi
grep -q "rate_mbps" "$out/bad.log" || { cat "$out/bad.log"; mnic_die "the refusal of rate_mbps=0 does not name it"; }
echo "ok: rate_mbps=0 refused: $(head -1 "$out/bad.log")"

run() {   # TAG SWITCH_ARGS: one burst A -> B; prints B's view
  local tag=$1
  SAN=1 MNIC_SWITCH=mnic MNIC_SWITCH_ARGS="--queue 512 --max-ports 2 $2" mnic_switch_start "$out/$tag"
  python3 - "$out/$tag" "$n" "$MNIC_ROOT/tests/tools" "$MNIC_SWITCH_PID" >"$out/$tag.log" 2>&1 <<'PY' ||
import os, struct, sys, time
sys.path.insert(0, sys.argv[3])
import vde_client

sw, n, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[4])
A, B = bytes.fromhex("525400640001"), bytes.fromhex("525400640002")
def cpu():   # the switch's user + system time, in seconds
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
ca, da = vde_client.join(sw, "A", tag="switch_rate")
cb, db = vde_client.join(sw, "B", tag="switch_rate")
db.send(b"\xff" * 6 + B + b"\x88\xb5" + bytes(46))   # B is learned
time.sleep(0.2)
db.settimeout(3.0)
c0, w0 = cpu(), time.monotonic()
for i in range(n):
    da.send(vde_client.frame(B, A, i))
got, stamps = [], []
while len(got) < n:
    try:
        f = db.recv(65536)
    except TimeoutError:
        break
    got.append(f)
    stamps.append(time.monotonic())
wall, used = time.monotonic() - w0, cpu() - c0
seqs = [struct.unpack("!I", f[42:46])[0] for f in got]
assert seqs == sorted(seqs), "frames reordered"
ce = sum(1 for f in got if f[15] & 3 == 3)
span = stamps[-1] - stamps[0] if len(stamps) > 1 else 0
print(f"received={len(got)} ce={ce} span_us={span * 1e6:.0f} wall_s={wall:.3f} cpu_s={used:.3f} len={len(got[0])}")
PY
    { cat "$out/$tag.log"; mnic_die "$tag: the VDE clients failed"; }
  cat "$out/$tag.log"
  mnic_switch_stats "$out/$tag"
  kill "$MNIC_SWITCH_PID"; wait "$MNIC_SWITCH_PID" 2>/dev/null || true
}
field() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p; s/^$2=\([0-9.]*\).*/\1/p" "$out/$1.log" | head -1; }

run shaped "--impair 2:rate_mbps=$rate,ecn_queue=8"
got=$(field shaped received) ce=$(field shaped ce) span=$(field shaped span_us) len=$(field shaped len)
[ "$got" = "$n" ] || mnic_die "shaped: B received $got of $n frames"
min_us=$(( (n - 1) * (len + 24) * 8 / rate * 9 / 10 ))
[ "$span" -ge "$min_us" ] || mnic_die "shaped: the burst arrived in $span us, under 90 % of $n frames at $rate Mbit/s ($min_us us)"
python3 "$MNIC_ROOT/tests/tools/switch_stats.py" "$out/shaped.stats.json" --show \
  --expect "ports[1]['tx'] == $n and ports[1]['dropped_queue_full'] == 0" \
  --expect "ports[1]['queue_max'] > 8 and ports[1]['ecn_marked'] == $ce > 0" || \
  mnic_die "shaped: the switch's counters are not what the clients saw"
python3 -c "import sys; w, c = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if c < w / 2 else 1)" \
  "$(field shaped wall_s)" "$(field shaped cpu_s)" || mnic_die "shaped: the switch used $(field shaped cpu_s) s of CPU in $(field shaped wall_s) s: it spins"
echo "ok: shaped to $rate Mbit/s: $n frames in $span us (>= $min_us), $ce marked CE behind the bottleneck"

run unshaped "--impair 2:ecn_queue=8"
span_u=$(field unshaped span_us)
[ "$(field unshaped received)" = "$n" ] || mnic_die "unshaped: B received $(field unshaped received) of $n"
[ "$span_u" -lt "$min_us" ] || mnic_die "unshaped: the same burst took $span_u us: the shaped run proves nothing on this machine"
echo "ok: the unshaped switch delivered the same burst in $span_u us"
echo "switch_rate: PASS"
