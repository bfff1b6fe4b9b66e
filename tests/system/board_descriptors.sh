#!/usr/bin/env bash
# qemu-board/gen-board.py: each descriptor yields the header, linker script
# and QEMU flags the firmware and scripts rely on; a broken descriptor is
# refused with a message naming the file, line and key.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gen=$root/qemu-board/gen-board.py
out=$root/build/test-system/boards; rm -rf "$out"; mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

python3 "$gen" "$root/qemu-board/boards/qemu-virt-a15.board" "$out/a15"
grep -q '^#define BOARD_ECAM_BASE 0x3f000000ull' "$out/a15/board.h" || fail "A15 ECAM"
grep -q 'ORIGIN = 0x40200000' "$out/a15/board.ld" || fail "A15 load address"
grep -q 'virt,highmem=off' "$out/a15/qemu.args" || fail "A15 needs highmem=off"
python3 "$gen" "$root/qemu-board/boards/qemu-virt-a72.board" "$out/a72"
grep -q '^#define BOARD_ECAM_BASE 0x4010000000ull' "$out/a72/board.h" || fail "A72 ECAM"
grep -q 'QEMU=qemu-system-aarch64' "$out/a72/qemu.args" || fail "A72 QEMU binary"
for b in a15 a72; do
  grep -q -- '-nic none' "$out/$b/qemu.args" || fail "$b: -nic none missing"
  grep -q -- 'force-legacy=false' "$out/$b/qemu.args" || fail "$b: modern virtio-mmio"
done
python3 "$gen" "$root/qemu-board/boards/posix.board" "$out/posix"
[ ! -e "$out/posix/qemu.args" ] || fail "posix has no QEMU flags"

bad() {   # descriptor text, expected message
  printf '%s\n' "$1" > "$out/bad.board"
  if msg=$(python3 "$gen" "$out/bad.board" "$out/bad" 2>&1); then fail "accepted: $1"; fi
  grep -q -- "$2" <<<"$msg" || fail "message '$msg' lacks '$2'"
  echo "ok: refused ($msg)"
}
bad "name x" "missing keys"
bad "$(sed 's/^ram_base .*/ram_base 0x4000zz/' "$root/qemu-board/boards/qemu-virt-a15.board")" "ram_base is not a number"
bad "$(cat "$root/qemu-board/boards/posix.board"; echo 'arch a32')" "duplicate key arch"
bad "$(sed 's/^arch .*/arch riscv/' "$root/qemu-board/boards/posix.board")" "arch must be"
bad "justakey" "expected 'key value'"
if python3 "$gen" "$out/none.board" "$out/x" 2>/dev/null; then fail "missing file accepted"; fi
echo "board descriptors ok"
