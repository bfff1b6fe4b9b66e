#!/usr/bin/env bash
# libmnic resynchronises a command queue whose indices disagree with what
# it issued (docs/host-interface.md, "Resynchronisation"), against a real
# POSIX NIC whose BAR file this script corrupts (python3, pread/pwrite on
# the file: the same pages the NIC and libmnic map):
#   1. cmdq_pi moved 5 entries ahead between commands: the next mnicctl
#      command resets the queue and succeeds; the firmware counts the five
#      dropped entries as one resync (cmdq_resyncs 1).  Before the
#      handshake: "busy with an earlier command", exit 3, for ever.
#   2. cmdq_ci overwritten: reset and success; nothing was dropped, so the
#      firmware's count stays 1.
#   3. the doorbell moved back under a command in flight (the NIC stopped
#      with SIGSTOP while mnicctl creates a PD): the reset finds the entry
#      unserved, libmnic issues it once more; exactly one PD exists.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/cmdq-resync-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
M=$MNIC_ROOT/build/host-asan/hostdrv/mnicctl
for f in "$fw" "$M"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
command -v python3 >/dev/null || mnic_die "python3 missing"
command -v cc >/dev/null || mnic_die "cc missing"

# The init-segment offsets from the ABI header itself, not copied here.
printf '#include <stddef.h>\n#include <stdio.h>\n#include "mnic/abi.h"\nint main(void){printf("%%zu %%zu\\n", offsetof(struct mnic_init_seg, cmdq_pi), offsetof(struct mnic_init_seg, cmdq_ci));return 0;}\n' \
  >"$out/offsets.c"
cc -std=c11 -I"$MNIC_ROOT/abi/include" "$out/offsets.c" -o "$out/offsets"
read -r PI_OFF CI_OFF < <("$out/offsets")
reg() {   # FILE OFFSET [VALUE]: print the u32 at OFFSET, or write VALUE there
  python3 - "$@" <<'EOF'
import os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
off = int(sys.argv[2])
if len(sys.argv) > 3:
    os.pwrite(fd, struct.pack("<I", int(sys.argv[3]) & 0xffffffff), off)
else:
    print(struct.unpack("<I", os.pread(fd, 4, off))[0])
EOF
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
resyncs() { "$M" -d "$A" --json counters --mgmt | json 'd["mgmt"]["cmdq_resyncs"]'; }
expect_ok() {   # stderr-regex command...: exit 0 and the regex on stderr
  local re=$1 rc=0; shift
  "$@" >"$out/last.out" 2>"$out/last.err" || rc=$?
  [ "$rc" = 0 ] || { cat "$out/last.out" "$out/last.err"; mnic_die "'$*': exit $rc, want 0"; }
  grep -qE "$re" "$out/last.err" || { cat "$out/last.err"; mnic_die "'$*': no '$re' on stderr"; }
  echo "ok: $*: $(grep -E "$re" "$out/last.err" | head -1)"
}

mnic_switch_start "$out/switch"
"$fw" --name a --vde "$out/switch" --mac 52:54:00:72:00:01 --bar "$out/a.bar" \
  -- run db_min_us=20 db_max_us=1000 >"$out/a.log" 2>&1 &
nic=$!; mnic_track $nic
mnic_wait_line "$out/a.log" "^MNIC READY" 20 $nic || { cat "$out/a.log"; mnic_die "NIC not ready"; }
A=$out/a.bar
"$M" -d "$A" info >/dev/null
[ "$(resyncs)" = 0 ] || mnic_die "cmdq_resyncs not 0 on a fresh NIC"

# ---- 1. pi moved past entries nobody handed over ----------------------------
pi=$(reg "$A" "$PI_OFF")
[ "$(reg "$A" "$CI_OFF")" = "$pi" ] || mnic_die "queue not idle before the test"
reg "$A" "$PI_OFF" $((pi + 5))
expect_ok "out of step \(ci stays behind pi.*ci $pi, pi $((pi + 5))\): resetting it" \
  "$M" -d "$A" --timeout 3000 info
[ "$(resyncs)" = 1 ] || mnic_die "cmdq_resyncs $(resyncs) after one reset that dropped 5 entries, want 1"
"$M" -d "$A" info >"$out/info2.err" 2>&1
! grep -q "out of step" "$out/info2.err" || mnic_die "a second reset on a realigned queue"

# ---- 2. ci overwritten -------------------------------------------------------
ci=$(reg "$A" "$CI_OFF")
reg "$A" "$CI_OFF" $((ci - 3))
expect_ok "out of step \(ci stays behind pi" "$M" -d "$A" --timeout 3000 info
[ "$(resyncs)" = 1 ] || mnic_die "cmdq_resyncs $(resyncs): a reset that dropped nothing was counted"

# ---- 3. the doorbell moved back under a command in flight ----------------------
pi=$(reg "$A" "$PI_OFF")
kill -STOP $nic
"$M" -d "$A" --json create pd >"$out/pd.out" 2>"$out/pd.err" &
cli=$!; mnic_track $cli
for _ in $(seq 500); do
  [ "$(reg "$A" "$PI_OFF")" = $((pi + 1)) ] && break
  kill -0 $cli 2>/dev/null || break
  sleep 0.02
done
[ "$(reg "$A" "$PI_OFF")" = $((pi + 1)) ] || { kill -CONT $nic; cat "$out/pd.err"; mnic_die "mnicctl never rang"; }
reg "$A" "$PI_OFF" "$pi"
kill -CONT $nic
mnic_wait_pid $cli 30
[ "$MNIC_RC" = 0 ] || { cat "$out/pd.out" "$out/pd.err"; mnic_die "create pd: exit $MNIC_RC after the reset"; }
grep -q "doorbell moved under a command in flight" "$out/pd.err" ||
  { cat "$out/pd.err"; mnic_die "create pd: no reset reported"; }
echo "ok: create pd, doorbell moved back in flight: $(head -1 "$out/pd.err")"
[ "$("$M" -d "$A" --json info | json 'd["in_use"]["pd"]')" = 1 ] ||
  mnic_die "the retried CREATE ran $("$M" -d "$A" --json info | json 'd["in_use"]["pd"]') times, want once"
echo "cmdq_resync_posix: PASS"
