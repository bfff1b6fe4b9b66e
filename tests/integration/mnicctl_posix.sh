#!/usr/bin/env bash
# The host side end to end against real firmware: a switch and two POSIX
# NICs in run mode (fast doorbell polling), driven through their BAR files
# by the ASan+UBSan builds of mnicctl and mnic-pingpong (libmnic's BAR
# backend: command queue, mailboxes, rings, doorbells).
#   1. mnicctl info / --json (parsed; the signature policy of a board with
#      no key slot: open, said), counters, health
#   2. mnic-pingpong server on NIC A, client on NIC B: 1, 4096 and 65536
#      bytes, every byte verified; every object torn down afterwards
#   3. create objects, dump (image show: record counts), abort; migrate
#      A -> B with the user area; B holds the objects
#   4. bad input: device path, a file that is no BAR, corrupt and truncated
#      images, bad arguments, a command the device refuses: the right exit
#      code and message each time
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/test-integration/mnicctl-posix; rm -rf "$out"; mkdir -p "$out"
fw=$MNIC_ROOT/build/posix/mnic-fw
tools=$MNIC_ROOT/build/host-asan/hostdrv
M=$tools/mnicctl
PP=$tools/mnic-pingpong
for f in "$fw" "$M" "$PP"; do [ -x "$f" ] || mnic_die "$f missing: run make BOARD=posix hostdrv"; done
command -v python3 >/dev/null || mnic_die "python3 missing"

mnic_switch_start "$out/switch"
start_nic() {   # name mac
  "$fw" --name "$1" --vde "$out/switch" --mac "$2" --bar "$out/$1.bar" \
    -- run db_min_us=20 db_max_us=1000 >"$out/$1.log" 2>&1 &
  local pid=$!; mnic_track $pid
  mnic_wait_line "$out/$1.log" "^MNIC READY" 20 $pid || { cat "$out/$1.log"; mnic_die "$1 not ready"; }
}
start_nic a 52:54:00:71:00:01
start_nic b 52:54:00:71:00:02
A=$out/a.bar B=$out/b.bar

expect_rc() {   # want-rc description-regex command...
  local want=$1 re=$2 rc=0; shift 2
  "$@" >"$out/last.out" 2>"$out/last.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out/last.out" "$out/last.err"; mnic_die "'$*': exit $rc, want $want"; }
  grep -qE "$re" "$out/last.out" "$out/last.err" || { cat "$out/last.out" "$out/last.err"; mnic_die "'$*': no '$re' in its output"; }
  echo "ok: exit $want: $*"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- 1. identity, counters, health ----------------------------------------
expect_rc 0 "state +READY" "$M" -d "$A" info
# no boot flash, no key slot: the documented open policy, said (firmware-images.md)
expect_rc 0 "signature +not enforced: no key provisioned" "$M" -d "$A" info
[ "$("$M" -d "$A" --json info | json 'd["signature"]')" = open ] || mnic_die "info --json: signature policy"
[ "$("$M" -d "$A" --json info | json 'd["board"], d["mac"], d["cmdif_rev"], d["in_use"]["qp"]')" \
  = "posix 52:54:00:71:00:01 4 0" ] || mnic_die "info --json: wrong identity"
[ "$("$M" -d "$B" --json info | json 'd["ipv4"]')" = 10.113.0.2 ] || mnic_die "B's address"
n=$("$M" -d "$A" --json counters --mgmt | json 'd["mgmt"]["cmds_delivered"]')
[ "$n" -ge 2 ] || mnic_die "cmds_delivered=$n after two commands"
expect_rc 0 "engine counters" "$M" -d "$A" counters --engine
expect_rc 0 "state +READY" "$M" -d "$A" health

# ---- 2. ping-pong A <-> B ---------------------------------------------------
port=$((18700 + RANDOM % 500))
for size in 1 4096 65536; do
  port=$((port + 1))
  "$PP" -d "$A" -p $port -s $size -n 200 -m 1024 -V -T 30 >"$out/pp-srv-$size.log" 2>&1 &
  srv=$!; mnic_track $srv
  rc=0; "$PP" -d "$B" -p $port -s $size -n 200 -m 1024 -V -T 30 127.0.0.1 \
    >"$out/pp-cli-$size.log" 2>&1 || rc=$?
  mnic_wait_pid $srv 60
  [ $rc = 0 ] && [ "$MNIC_RC" = 0 ] || { cat "$out"/pp-*-$size.log; mnic_die "ping-pong $size: client $rc server $MNIC_RC"; }
  for side in srv cli; do
    grep -qE "^$((size * 400)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" "$out/pp-$side-$size.log" &&
    grep -qE "^200 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" "$out/pp-$side-$size.log" &&
    grep -q "^data verified: 200 messages received, every byte" "$out/pp-$side-$size.log" ||
      { cat "$out/pp-$side-$size.log"; mnic_die "ping-pong $size $side: result lines"; }
  done
  echo "ok: ping-pong $size bytes x 200, verified: $(grep Mbit "$out/pp-cli-$size.log")"
done
for d in "$A" "$B"; do
  [ "$("$M" -d "$d" --json info | json 'sum(d["in_use"].values())')" = 0 ] ||
    mnic_die "$d: objects left after ping-pong"
done

# ---- 3. objects, dump, image show, abort, migrate ---------------------------
pd=$("$M" -d "$A" --json create pd | json 'd["handle"]')
cq=$("$M" -d "$A" --json create cq 64 | json 'd["handle"]')
"$M" -d "$A" create mr "$pd" 65536 >/dev/null
qp1=$("$M" -d "$A" --json create qp "$pd" "$cq" | json 'd["handle"]')
"$M" -d "$A" create qp "$pd" "$cq" >/dev/null
expect_rc 0 "RESET" "$M" -d "$A" qp show "$qp1"
expect_rc 0 "QP +2 objects" "$M" -d "$A" dump -o "$out/a.img"
[ "$("$M" -d "$A" --json info | json 'd["stopped"]')" = 1 ] || mnic_die "not stopped after dump"
[ "$("$M" --json image show "$out/a.img" | json '[d["types"][t]["count"] for t in ("PD","MR","CQ","SRQ","QP")]')" \
  = "[1, 1, 1, 0, 2]" ] || mnic_die "image show: record counts"
expect_rc 0 "crc32c 0x[0-9a-f]{8} ok" "$M" image show "$out/a.img"
expect_rc 0 "abort: ok" "$M" -d "$A" abort
[ "$("$M" -d "$A" --json info | json 'd["stopped"]')" = 0 ] || mnic_die "still stopped after abort"
# A dump that cannot be kept leaves the context running: a path that cannot
# be opened is refused before anything stops; an image that cannot be put in
# place (the name is a directory) is aborted, resumed in place, said so.
expect_rc 3 "cannot write" "$M" -d "$A" dump -o "$out/no-such-dir/a.img"
[ "$("$M" -d "$A" --json info | json 'd["stopped"]')" = 0 ] || mnic_die "dump to a bad path stopped the context"
mkdir -p "$out/adir/x"
expect_rc 3 "dump aborted, the context runs on" "$M" -d "$A" dump -o "$out/adir"
[ "$("$M" -d "$A" --json info | json 'd["stopped"]')" = 0 ] || mnic_die "unkept dump left the context stopped"
[ ! -e "$out/adir.tmp" ] || mnic_die "unkept dump left $out/adir.tmp"
expect_rc 0 "migrated" "$M" migrate --from "$A" --to "$B" --copy-user-area
[ "$("$M" -d "$B" --json info | json '[d["in_use"][k] for k in ("pd","mr","cq","qp")]')" \
  = "[1, 1, 1, 2]" ] || mnic_die "B does not hold the migrated objects"
cmp <(dd if="$A" bs=1M skip=3 count=1 2>/dev/null) <(dd if="$B" bs=1M skip=3 count=1 2>/dev/null) ||
  mnic_die "user area not copied"
expect_rc 0 "destroyed qp" "$M" -d "$B" destroy qp "$qp1"

# ---- 4. bad input -----------------------------------------------------------
expect_rc 3 "cannot open" "$M" -d "$out/nonexistent.bar" info
head -c 4194304 /dev/zero >"$out/zero.bar"
expect_rc 3 "no mnic init segment" "$M" -d "$out/zero.bar" info
expect_rc 2 "no device" "$M" info
expect_rc 2 "unknown command" "$M" -d "$A" frobnicate
expect_rc 2 "no command" "$M"
expect_rc 2 "qp show QPN" "$M" -d "$A" qp show zz
expect_rc 2 "peer-override" "$M" -d "$B" restore -i "$out/a.img" --peer-override 10.0.0.1
expect_rc 1 "BAD_RES|BAD_PARAM" "$M" -d "$A" qp show 0x999
cp "$out/a.img" "$out/bad.img"; printf '\xff' | dd of="$out/bad.img" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_rc 1 "CRC32C mismatch" "$M" image show "$out/bad.img"
expect_rc 1 "CRC32C mismatch" "$M" -d "$A" restore -i "$out/bad.img"
head -c 100 "$out/a.img" >"$out/short.img"
expect_rc 1 "truncated" "$M" image show "$out/short.img"
printf 'not an image at all, clearly; longer than an image header' >"$out/junk.img"
expect_rc 1 "no MNICDUMP magic" "$M" image show "$out/junk.img"
expect_rc 3 "cannot open" "$M" image show "$out/missing.img"
# the same image again on B: its objects are already there -> refused
expect_rc 1 "RESTORE_OBJECT" "$M" -d "$B" restore -i "$out/a.img"
expect_rc 0 "state +READY" "$M" -d "$B" health
echo "mnicctl_posix: PASS"
