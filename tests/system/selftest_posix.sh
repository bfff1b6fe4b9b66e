#!/usr/bin/env bash
# The POSIX NIC (ASan+UBSan build) runs the same self-test as the boards,
# with two ports on a real switch: eth loopback through the switch, timers
# through poll(), the BAR file, the DMA window.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-system/selftest-posix; rm -rf "$out"; mkdir -p "$out"
mnic_switch_start "$out/sw"
"$MNIC_ROOT/build/posix-asan/mnic-fw" --name st --vde "$out/sw" --mac 52:54:00:50:00:01 \
  --vde "$out/sw" --mac 52:54:00:50:00:02 --bar "$out/st.bar" -- selftest >"$out/st.log" 2>&1 &
pid=$!; mnic_track $pid
mnic_wait_pid $pid 60
cat "$out/st.log"
[ "$MNIC_RC" = 0 ] || mnic_die "POSIX self-test exited $MNIC_RC"
grep -q "^SELFTEST RESULT PASS" "$out/st.log" || mnic_die "no PASS marker"
grep -q "^SELFTEST eth_loopback .* PASS" "$out/st.log" || mnic_die "eth loopback did not run"
python3 "$(dirname "$0")/mnic_bar.py" "$out/st.bar"
