#!/usr/bin/env bash
# make demo (until the migration demo of issue #6): start the switch and
# four NICs (2 x A15 QEMU, 1 x A72 QEMU, 1 x POSIX), have every NIC exchange
# verified raw frames with every other, show progress live and print a
# summary; then run verified RoCEv2 RC traffic between two A15 NICs.
#   COUNT=N (frames per direction per pair, default 5000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
count=${COUNT:-5000}
out=$root/build/demo
rm -rf "$out"
echo "demo: switch + 4 NICs (qemu-board/topologies/four-nics.topo), $count frames each way per pair"
rc=0
"$root/qemu-board/topology.sh" "$root/qemu-board/topologies/four-nics.topo" "$out" --follow \
  --timeout 300 -- rawx peers=@PEERS@ count="$count" || rc=$?
echo
echo "summary (one line per NIC; delivered = frames sent and acked + frames received in order):"
for f in "$out"/*.log; do
  [ "$(basename "$f")" = switch.log ] && continue
  printf '  %-10s %s\n' "$(basename "$f" .log)" "$(grep -h '^RAWX' "$f" || echo 'no result (see log)')"
done
echo "logs: $out/*.log"
[ $rc = 0 ] || exit $rc

# RoCEv2: two QEMU A15 NICs run verified RC traffic (SEND, WRITE, READ,
# atomics; firmware/rcx.c plays the host on each NIC).
echo
echo "demo: RoCEv2 RC between two QEMU A15 NICs (qemu-board/topologies/two-a15-rc.topo)"
"$root/qemu-board/topology.sh" "$root/qemu-board/topologies/two-a15-rc.topo" "$out/rc" \
  --timeout 200 -- rcx peer=@PEERS@ qps=2 msgs=${RC_MSGS:-500} max_size=65536 mtu=3 || rc=$?
for f in "$out"/rc/a15-*.log; do
  printf '  %-10s %s\n' "$(basename "$f" .log)" "$(grep -h '^RCX' "$f" || echo 'no result (see log)')"
done
exit $rc
