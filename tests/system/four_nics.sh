#!/usr/bin/env bash
# Four NICs on one switch (2 x A15 QEMU, 1 x A72 QEMU, 1 x POSIX) exchange
# 1,000 raw frames with every other NIC in each direction, content verified
# end to end (rawx: CRC32 + regenerated payload, exactly once, in order).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/test-system/four-nics; rm -rf "$out"
if ! "$root/qemu-board/topology.sh" "$root/qemu-board/topologies/four-nics.topo" "$out" \
     --timeout 150 -- rawx peers=@PEERS@ count=1000 timeout_ms=90000; then
  for f in "$out"/*.log; do echo "--- $f"; tail -15 "$f"; done
  exit 1
fi
grep -h "^RAWX" "$out"/*.log
n=$(grep -h "^RAWX PASS peers=3 count=1000 delivered=6000 " "$out"/*.log | wc -l)
[ "$n" = 4 ] || { echo "expected 4 NICs to deliver 6000 frames each, got $n"; exit 1; }
