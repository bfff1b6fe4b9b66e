#!/usr/bin/env bash
# make demo (foundation stage): start the switch and four NICs (2 x A15 QEMU,
# 1 x A72 QEMU, 1 x POSIX), have every NIC exchange verified raw frames with
# every other, show progress live and print a summary.  The live-migration
# demo replaces this once the RoCEv2 engine and host interface land.
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
exit $rc
