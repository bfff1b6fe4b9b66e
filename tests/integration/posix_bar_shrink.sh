#!/usr/bin/env bash
# A POSIX NIC whose BAR file shrinks under it (hal/posix/bar_shm.c) stops
# with a clear report naming the file and both sizes and exit status 3
# (platform failed), instead of dying of SIGBUS:
#   1. truncated to half while idle: the size check in the platform's poll
#      sees it ("the file shrank to 8388608 bytes under the NIC's mapping
#      of 16777216 bytes");
#   2. truncated to nothing: whichever comes first, the size check or the
#      SIGBUS handler on the next doorbell poll (both say "shrank");
#   3. truncated to half under traffic (mnic-pingpong A <-> B): A stops the
#      same way, B is unharmed and its BAR file keeps its size.
# Before: killed by SIGBUS (status 135) in 2 and 3, running on in 1.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/posix-bar-shrink; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl PP=$tools/mnic-pingpong
for f in "$fw" "$M" "$PP"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
SIZE=16777216

mnic_switch_start "$out/switch"
start_nic() {   # name mac; sets NIC_PID
  "$fw" --name "$1" --vde "$out/switch" --mac "$2" --bar "$out/$1.bar" --bar-size $SIZE \
    -- run db_min_us=20 db_max_us=1000 >"$out/$1.log" 2>&1 &
  NIC_PID=$!; mnic_track $NIC_PID
  mnic_wait_line "$out/$1.log" "^MNIC READY" 20 $NIC_PID || { cat "$out/$1.log"; mnic_die "$1 not ready"; }
}
expect_stop() {   # name pid message-regex
  mnic_wait_pid "$2" 10
  [ "$MNIC_RC" = 3 ] || { tail -5 "$out/$1.log"; mnic_die "NIC $1: exit status $MNIC_RC after its BAR shrank, want 3"; }
  grep -qE "$3" "$out/$1.log" || { tail -5 "$out/$1.log"; mnic_die "NIC $1: no '$3' in its log"; }
  echo "ok: NIC $1 stopped, exit 3: $(grep -E "$3" "$out/$1.log" | head -1)"
}

# ---- 1. half, idle ------------------------------------------------------------
start_nic a 52:54:00:73:00:01
"$M" -d "$out/a.bar" info >/dev/null
truncate -s $((SIZE / 2)) "$out/a.bar"
expect_stop a $NIC_PID "posix: BAR .*/a\.bar: the file shrank to $((SIZE / 2)) bytes under the NIC's mapping of $SIZE bytes"
[ "$(stat -c %s "$out/a.bar")" = $((SIZE / 2)) ] || mnic_die "a.bar was written after the shrink"

# ---- 2. nothing -----------------------------------------------------------------
start_nic b 52:54:00:73:00:02
truncate -s 0 "$out/b.bar"
expect_stop b $NIC_PID "posix: BAR .*/b\.bar: .*shrank .*$SIZE bytes"
[ "$(stat -c %s "$out/b.bar")" = 0 ] || mnic_die "b.bar was written after the shrink"

# ---- 3. half, under traffic -------------------------------------------------------
start_nic c 52:54:00:73:00:03; C_PID=$NIC_PID
start_nic d 52:54:00:73:00:04; D_PID=$NIC_PID
port=$((19300 + RANDOM % 500))
"$PP" -d "$out/d.bar" -p $port -s 65536 -n 100000 -T 60 >"$out/pp-srv.log" 2>&1 &
srv=$!; mnic_track $srv
"$PP" -d "$out/c.bar" -p $port -s 65536 -n 100000 -T 60 127.0.0.1 >"$out/pp-cli.log" 2>&1 &
cli=$!; mnic_track $cli
qps() { "$M" -d "$out/c.bar" --json info 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["in_use"]["qp"])' 2>/dev/null || echo 0; }
for _ in $(seq 200); do [ "$(qps)" -gt 0 ] && break; sleep 0.05; done
[ "$(qps)" -gt 0 ] || { cat "$out/pp-cli.log"; mnic_die "ping-pong never connected"; }
sleep 0.5
tx=$("$M" -d "$out/c.bar" --json health | python3 -c 'import json,sys; print(json.load(sys.stdin)["tx_frames"])')
[ "$tx" -gt 100 ] || mnic_die "no traffic under way (c tx_frames $tx)"
truncate -s $((SIZE / 2)) "$out/c.bar"
expect_stop c $C_PID "posix: BAR .*/c\.bar: .*shrank .*$SIZE bytes"
kill -0 $D_PID 2>/dev/null || { tail -5 "$out/d.log"; mnic_die "NIC d died with its peer"; }
[ "$(stat -c %s "$out/d.bar")" = $SIZE ] || mnic_die "d.bar changed size"
"$M" -d "$out/d.bar" health >"$out/d-health.out" 2>&1 || { cat "$out/d-health.out"; mnic_die "NIC d unhealthy"; }
echo "posix_bar_shrink: PASS"
