#!/usr/bin/env bash
# RoCEv2 RC between two QEMU A15 NICs (and an A72 with a POSIX NIC) on the
# switch: random opcodes and sizes, every byte verified (firmware/rcx.c).
# Loss here is real: a QEMU NIC's 32-entry receive ring overflows under
# bursts, so recovery (NAKs, retransmission, RNR) runs as well.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
run() {   # name topo args...
  local name=$1 topo=$2; shift 2
  local out=$root/build/test-system/$name
  rm -rf "$out"
  if ! "$root/qemu-board/topology.sh" "$topo" "$out" --timeout 200 -- "$@"; then
    for f in "$out"/*.log; do echo "--- $f"; tail -n 15 "$f"; done
    exit 1
  fi
  grep -h "^RCX" "$out"/*.log
  [ "$(cat "$out"/*.log | grep -c "^RCX PASS")" = 2 ] || { echo "$name: not both PASS"; exit 1; }
}
run rc-a15 "$root/qemu-board/topologies/two-a15-rc.topo" \
  rcx peer=@PEERS@ qps=2 msgs=300 max_size=65536 mtu=3 timeout_ms=150000
run rc-a72-posix "$root/qemu-board/topologies/a72-posix-rc.topo" \
  rcx peer=@PEERS@ qps=2 msgs=300 max_size=262144 mtu=5 timeout_ms=150000
