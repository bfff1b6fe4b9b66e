#!/usr/bin/env bash
# The product firmware fits its text budget on each ARM board: `size`'s text
# (code + rodata: what the A/B slots carry and the CPU runs) of
# build/<board>/mnic-fw.elf is at most the board descriptor's text_budget
# (qemu-board/boards/<board>.board; docs/ARCHITECTURE.md "Footprint").  The
# lab image (mnic-fw-lab.elf: rawx, rcx, selftest) is reported, not bounded.
# Sizes are read from the ELFs themselves, not from a cached size.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
for board in qemu-virt-a15 qemu-virt-a72; do
  desc=$root/qemu-board/boards/$board.board
  budget=$(awk '$1 == "text_budget" { print $2 }' "$desc")
  [ -n "$budget" ] || { echo "FAIL: $board: no text_budget in $desc"; fail=1; continue; }
  budget=$((budget))
  case $board in
    qemu-virt-a15) size=arm-none-eabi-size ;;
    qemu-virt-a72) size=aarch64-linux-gnu-size ;;
  esac
  for img in mnic-fw mnic-fw-lab; do
    elf=$root/build/$board/$img.elf
    [ -f "$elf" ] || { echo "FAIL: $board: $elf not built (make BOARD=$board)"; fail=1; continue 2; }
    read -r text _ < <("$size" "$elf" | tail -1)
    case $text in ''|*[!0-9]*) echo "FAIL: $board: cannot read the text size of $elf"; fail=1; continue ;; esac
    if [ "$img" = mnic-fw-lab ]; then
      echo "$board lab image: text $text bytes (no budget)"
    elif [ "$text" -gt "$budget" ]; then
      echo "FAIL: $board product image: text $text bytes > budget $budget ($((text - budget)) over)"
      fail=1
    else
      echo "ok: $board product image: text $text bytes <= budget $budget (headroom $((budget - text)))"
    fi
  done
done
[ $fail = 0 ] || exit 1
echo "text budget kept on both boards"
