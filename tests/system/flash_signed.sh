#!/usr/bin/env bash
# Signed firmware on the QEMU boards (A15 and A72; BOARDS= to pick), booted
# through the loader with a key slot provisioned in flash0 (`mnicctl image
# keyslot`, docs/firmware-images.md "Signed images").  Per board:
#   1. the loader says signatures are enforced; the factory image (1.0.0+1,
#      signed by the provisioned key) boots, and `mnicctl info` / `fw` say so
#   2. each refused by FW_FLASH_END with its own reason, the NIC answering
#      and still running 1.0.0+1 afterwards: an unsigned image, one signed
#      by another key, one payload bit flipped, one header bit flipped
#      (digest mismatch), one header bit flipped with the digest redone (a
#      forger's edit: signature fails), one signature bit flipped
#   3. 1.1.0+2 signed by the key: flashed, activated, test-booted, confirmed
#   4. the loader itself refuses an unsigned slot: an unsigned factory image
#      on the provisioned board is refused and nothing boots (exit 4)
# `mnicctl image verify --pubkey` (the device's verifier on the host) agrees
# with the board on each image.
set -euo pipefail
. "$(dirname "$0")/../../qemu-board/lib.sh"
mnic_init
BOARDS=${BOARDS:-qemu-virt-a15 qemu-virt-a72}
root=$MNIC_ROOT/build/test-system/flash-signed
# (a run for one board of several leaves its siblings' output alone)
[ -n "${FLASH_BOARD_N:-}" ] || { rm -rf "$root"; mkdir -p "$root"; }
M=$MNIC_ROOT/build/host-asan/hostdrv/mnicctl
[ -x "$M" ] || mnic_die "$M missing: run make images"
command -v python3 >/dev/null || mnic_die "python3 missing"

. "$MNIC_ROOT/tests/tools/flash-test-lib.sh"
start_nic() { flash_nic sig --flash "$1" --boot-flash "$out/flash0.bin"; }   # flash1
# flip FILE BYTE_OFFSET [redigest]: one bit; redigest recomputes the header digest
flip() {
  python3 - "$@" <<'PY'
import hashlib, struct, sys
path, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
b[off] ^= 0x01
if len(sys.argv) > 3:
    plen = struct.unpack_from("<I", b, 40)[0]           # mnic/fwimage.h header layout
    hdr = bytes(b[:48]) + bytes(32) + bytes(b[80:128])   # digest field zeroed
    b[48:80] = hashlib.sha256(hdr + bytes(b[128:128 + plen])).digest()
open(path, "wb").write(bytes(b))
PY
}
refused() {   # IMG reason-regex verify-regex: refused by the NIC, the NIC unchanged
  expect_rc 1 "$3" "$M" image verify --pubkey "$out/k1.pub" "$1"
  expect_rc 1 "the NIC refused the image: $2" "$M" -d "$A" flash --no-host-check "$1"
  [ "$(fwq '(d["running"]["version"], d["confirmed"], d["slots"][1]["state"] != "valid", d["bootrec"]["test"])')" \
    = "('1.0.0+1', True, True, -1)" ] || fail "after refusing $1: $("$M" -d "$A" --json fw)"
  "$M" -d "$A" info >/dev/null || fail "the NIC stopped answering after refusing $1"
}

flash_per_board   # the boards at the same time, one run each
cd "$MNIC_ROOT"
n=$((FLASH_BOARD_N - 1))
for board in $BOARDS; do
  n=$((n + 1))
  out=$root/$board; mkdir -p "$out"
  A=$out/a.bar; mac=52:54:00:7e:10:0$n
  elf=build/$board/mnic-fw.elf
  for f in "$elf" "build/$board/loader/flash0.bin"; do [ -f "$f" ] || mnic_die "$f missing: run make images"; done
  "$M" image keygen -o "$out/k1" >/dev/null
  "$M" image keygen -o "$out/k2" >/dev/null
  cp "build/$board/loader/flash0.bin" "$out/flash0.bin"
  "$M" image keyslot "$out/flash0.bin" --pubkey "$out/k1.pub:1" >/dev/null
  "$M" image build --board "$board" --version 1.0.0+1 -o "$out/v1.img" "$elf" >/dev/null
  "$M" image build --board "$board" --version 1.1.0+2 -o "$out/unsigned.img" "$elf" >/dev/null
  cp "$out/unsigned.img" "$out/v1-unsigned.img"
  "$M" image sign --key "$out/k1" "$out/v1.img" >/dev/null
  "$M" image sign --key "$out/k1" -o "$out/v2.img" "$out/unsigned.img" >/dev/null
  "$M" image sign --key "$out/k2" -o "$out/otherkey.img" "$out/unsigned.img" >/dev/null
  size=$(stat -c %s "$out/v2.img")
  for t in payload header forged sig; do cp "$out/v2.img" "$out/$t.img"; done
  flip "$out/payload.img" $((128 + 5000))
  flip "$out/header.img" 96                     # a byte of the name field
  flip "$out/forged.img" 20 redigest            # version.build, digest recomputed
  flip "$out/sig.img" $((size - 10))            # inside the ED25519 value
  expect_rc 0 "signature ok" "$M" image verify --pubkey "$out/k1.pub" "$out/v2.img"
  "$M" image flash-file -o "$out/flash1.bin" --slot-a "$out/v1.img" >/dev/null

  # ---- 1. boot the signed factory image -------------------------------------
  mnic_switch_start "$out/sw"
  start_nic "$out/flash1.bin"
  mnic_wait_line "$out/nic.log" "^MNIC READY" 30 $nic_pid || fail "not ready"
  grep -q "^LOADER: signed images only" "$out/nic.log" || fail "the loader does not enforce signatures"
  grep -q "^LOADER: slot A 1.0.0+1" "$out/nic.log" || fail "the loader did not boot slot A"
  wait_running 1.0.0+1
  [ "$(fwq '(d["signature"]["policy"], d["signature"]["key_versions"])')" = "('enforced', [1, 0])" ] ||
    fail "fw --json: $("$M" -d "$A" --json fw)"
  expect_rc 0 "signature +enforced: only images signed by a provisioned key" "$M" -d "$A" info
  echo "ok: $board: signed 1.0.0+1 booted through the enforcing loader"

  # ---- 2. refusals ---------------------------------------------------------------
  refused "$out/unsigned.img" "not signed, and this board has a key provisioned" "signature MISSING"
  refused "$out/otherkey.img" "signed by a key this board does not hold" "signature OTHER KEY"
  refused "$out/payload.img" "SHA-256 digest mismatch" "SHA-256 digest mismatch"
  refused "$out/header.img" "SHA-256 digest mismatch" "SHA-256 digest mismatch"
  refused "$out/forged.img" "signature does not verify" "signature BAD"
  refused "$out/sig.img" "signature does not verify" "signature BAD"
  echo "ok: $board: unsigned, other key, payload/header/signature bit flips all refused; still 1.0.0+1"

  # ---- 3. a signed update goes through ------------------------------------------
  expect_rc 0 "written to slot B and verified" "$M" -d "$A" flash "$out/v2.img"
  expect_rc 0 "activated as test" "$M" -d "$A" fw activate
  wait_running 1.1.0+2
  grep -q "^LOADER: slot B 1.1.0+2 test boot 1" "$out/nic.log" || fail "no test boot of slot B"
  grep -q "^FW SELFTEST PASS slot B version 1.1.0+2 confirmed" "$out/nic.log" || fail "B not confirmed"
  echo "ok: $board: signed 1.1.0+2 activated, test-booted, confirmed"
  kill "$nic_pid" 2>/dev/null || true; mnic_wait_pid "$nic_pid" 10

  # ---- 4. the loader refuses an unsigned slot ----------------------------------
  "$M" image flash-file -o "$out/flash1-unsigned.bin" --slot-a "$out/v1-unsigned.img" >/dev/null
  : >"$out/nic.log"
  start_nic "$out/flash1-unsigned.bin"
  mnic_wait_pid "$nic_pid" 60
  [ "$MNIC_RC" = 4 ] || fail "loader exit $MNIC_RC on an unsigned slot, want 4 (nothing bootable)"
  grep -q "^LOADER: slot A refused: not signed, and this board has a key provisioned" "$out/nic.log" ||
    fail "the loader did not refuse the unsigned slot"
  grep -q "^LOADER: no bootable slot" "$out/nic.log" || fail "no 'no bootable slot'"
  echo "ok: $board: the loader refuses an unsigned slot, nothing boots"
  mnic_cleanup
done
echo "flash_signed: PASS ($BOARDS)"
