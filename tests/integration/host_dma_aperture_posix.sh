#!/usr/bin/env bash
# The host-memory aperture of a POSIX NIC (docs/host-interface.md "Host
# memory and translation"): two NICs, each with a BAR file and a
# --hostmem file, run verified RC traffic (firmware/rcx.c: SEND, WRITE,
# READ, atomics, every byte and completion checked).  The engine's DMA
# goes to the host-memory file: its rings and buffers are there, and the
# BAR's DMA window is left as it was (zero); without --hostmem the same
# run lays them out in the window, as before.  The aperture's size comes
# from the file, or from --hostmem-size.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/host-dma-aperture; rm -rf "$out"; mkdir -p "$out"
mnic_switch_start "$out/switch"
fw=$MNIC_ROOT/build/posix/mnic-fw
[ -x "$fw" ] || mnic_die "$fw missing: run make BOARD=posix"

# Non-zero bytes of FILE from byte OFFSET on.
nonzero() {
  python3 - "$1" "$2" <<'EOF'
import sys
with open(sys.argv[1], "rb") as f:
    f.seek(int(sys.argv[2]))
    data = f.read()
print(len(data) - data.count(0))
EOF
}

run_pair() {   # name: with or without host memory
  local name=$1 pids=() i rc=0
  for i in 1 2; do
    local me=52:54:00:61:00:0$i peer=52:54:00:61:00:0$((3 - i)) host=()
    if [ "$name" = hostmem ]; then
      truncate -s 32M "$out/$name-nic$i.mem"       # nic1: the file's size
      host=(--hostmem "$out/$name-nic$i.mem")
      [ $i = 2 ] && host+=(--hostmem-size 48M)     # nic2: grown to the size given
    fi
    "$fw" --name nic$i --vde "$out/switch" --mac $me --bar "$out/$name-nic$i.bar" \
      --bar-size 16M "${host[@]}" \
      -- rcx peer=$peer qps=2 msgs=300 max_size=65536 mtu=4 timeout_ms=120000 \
      >"$out/$name-nic$i.log" 2>&1 &
    pids+=($!); mnic_track $!
  done
  for i in 0 1; do mnic_wait_pid "${pids[$i]}" 300; [ "$MNIC_RC" = 0 ] || rc=1; done
  grep -h "^RCX" "$out/$name"-nic*.log || true
  [ $rc = 0 ] || { tail -n 20 "$out/$name"-nic*.log; mnic_die "$name: a NIC failed"; }
  for i in 1 2; do
    grep -q "^RCX PASS qps=2 msgs=300 ops=600 " "$out/$name-nic$i.log" \
      || mnic_die "$name nic$i: not every operation completed"
  done
}

run_pair hostmem
for i in 1 2; do
  grep -q "host memory $out/hostmem-nic$i.mem" "$out/hostmem-nic$i.log" \
    || mnic_die "nic$i: the log does not name its host-memory file"
  win=$(nonzero "$out/hostmem-nic$i.bar" $((1 << 20)))
  mem=$(nonzero "$out/hostmem-nic$i.mem" 0)
  echo "hostmem nic$i: $mem non-zero bytes in host memory, $win in the BAR's DMA window"
  [ "$win" = 0 ] || mnic_die "nic$i: the engine wrote into the BAR's window, not host memory"
  [ "$mem" -gt 65536 ] || mnic_die "nic$i: host memory holds no rings or buffers ($mem bytes)"
done
[ "$(stat -c %s "$out/hostmem-nic1.mem")" = $((32 << 20)) ] \
  || mnic_die "nic1: the host-memory file changed size"
[ "$(stat -c %s "$out/hostmem-nic2.mem")" = $((48 << 20)) ] \
  || mnic_die "nic2: --hostmem-size 48M did not grow the file"

# The control: without --hostmem the window is the aperture.
run_pair window
for i in 1 2; do
  win=$(nonzero "$out/window-nic$i.bar" $((1 << 20)))
  echo "window nic$i: $win non-zero bytes in the BAR's DMA window"
  [ "$win" -gt 65536 ] || mnic_die "nic$i: without host memory nothing went to the window"
done

# A host-memory file that is not whole pages is refused with a message.
truncate -s 4097 "$out/bad.mem"
if "$fw" --hostmem "$out/bad.mem" -- selftest >"$out/bad.log" 2>&1; then
  mnic_die "a host-memory file of 4097 bytes was accepted"
fi
grep -q "non-zero multiple of 4096" "$out/bad.log" || { cat "$out/bad.log"; mnic_die "no message"; }
echo "host_dma_aperture_posix: PASS"
