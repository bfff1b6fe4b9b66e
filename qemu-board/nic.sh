#!/usr/bin/env bash
# Start one NIC in the foreground (exec: the caller's $! is the NIC's pid).
#
#   qemu-board/nic.sh --board BOARD --name NAME [--mac MAC] [--switch DIR]
#                     [--selftest] [--bar FILE] [--hostmem FILE] [--impair SPEC] [--gdb]
#                     [--pcap FILE] [--image ELF] [--flash FLASH1]
#                     [--boot-flash FLASH0] [--bar-kind doorbell|plain] [--dry-run]
#                     [-- FIRMWARE ARGS...]
#
# QEMU boards: -nic none, the NIC's port on the switch (-netdev vde), and
# the host BAR FILE (default build/nics/NAME.bar), --bar-kind (default
# doorbell, or MNIC_BAR_KIND):
#   doorbell  an ivshmem-doorbell whose memory and eventfds come from our
#             mnic-ivshmem-server (build/host/qemu-board/), started here on
#             FILE.ivsh (log FILE.ivsh.log) before QEMU; it exits by itself
#             when its last client (this NIC, a host VM, libmnic) has gone.
#             Hosts ring the NIC and take its interrupts (docs/host-interface.md
#             "Doorbells and interrupts").  MNIC_IVSH_MAX_PEERS (default 8,
#             at most 32): peers it admits, the NIC included.
#   plain     an ivshmem-plain over FILE: no interrupts, the NIC polls.
# --hostmem FILE: the host-memory aperture (docs/host-interface.md "Host
# memory and translation"): QEMU boards get FILE, an x86 host VM's RAM
# file (tests/vm/vm.sh --ram-file), as a second ivshmem-plain device after
# the BAR's; its size must be a power of two that fits the board's 32-bit
# PCI MMIO window beside the BAR (256 MiB at most: naturally aligned in
# 0x10000000..0x3eff0000).  posix: passed on as mnic-fw --hostmem FILE.
# --selftest: two ports joined by QEMU's internal hub instead of the switch,
# so the self-test sends frames from one port to the other.
# posix: runs build/posix[-asan]/mnic-fw with the same switch and BAR file;
# its doorbell channel is the unix socket FILE.db (mnic/dbch.h) for libmnic
# processes, unless --bar-kind doorbell is given on the command line: then
# mnic-ivshmem-server on FILE.ivsh as for a QEMU board, which the NIC joins
# (mnic-fw --ivshmem), so a host VM's ivshmem-doorbell rings it and takes
# its interrupts (POSIX_HOST_VECTORS vectors).
# --flash FLASH1: boot as a board does, from pflash instead of -kernel: the
# first-stage loader (build/BOARD/loader/flash0.bin, read-only bank 0)
# picks and verifies a slot in FLASH1 (bank 1, 64 MiB, made by `mnicctl
# image flash-file`; written by the NIC when it updates itself).  The
# firmware's command line travels as semihosting arguments (no -append
# without -kernel); a PSCI reset reboots through the loader in place.
# --boot-flash FLASH0: that bank 0 instead of the build's (a copy with a
# provisioned key slot: `mnicctl image keyslot`).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bar_kind=${MNIC_BAR_KIND:-doorbell}
bar_kind_given=0
POSIX_HOST_VECTORS=4
board=; name=; mac=; sw=; selftest=0; bar=; hostmem=; impair=; gdb=0; dry=0; pcap=; image=; san=${SAN:-0}; flash1=; flash0=
while [ $# -gt 0 ]; do
  case $1 in
    --board) board=${2:?--board needs a value}; shift 2 ;;
    --name) name=${2:?--name needs a value}; shift 2 ;;
    --mac) mac=${2:?--mac needs a value}; shift 2 ;;
    --switch) sw=${2:?--switch needs a value}; shift 2 ;;
    --bar) bar=${2:?--bar needs a value}; shift 2 ;;
    --hostmem) hostmem=${2:?--hostmem needs a value}; shift 2 ;;
    --impair) impair=${2:?--impair needs a value}; shift 2 ;;
    --pcap) pcap=${2:?--pcap needs a value}; shift 2 ;;
    --image) image=${2:?--image needs a value}; shift 2 ;;
    --flash) flash1=${2:?--flash needs a value}; shift 2 ;;
    --boot-flash) flash0=${2:?--boot-flash needs a value}; shift 2 ;;
    --bar-kind) bar_kind=${2:?--bar-kind needs a value}; bar_kind_given=1; shift 2 ;;
    --selftest) selftest=1; shift ;;
    --gdb) gdb=1; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; break ;;
    *) mnic_die "nic.sh: unknown option '$1' (see the usage at the top of qemu-board/nic.sh)" ;;
  esac
done
[ -n "$board" ] || mnic_die "nic.sh: --board is required (qemu-virt-a15, qemu-virt-a72 or posix)"
[ -f "$MNIC_ROOT/qemu-board/boards/$board.board" ] || \
  mnic_die "nic.sh: unknown board '$board' (have: $(cd "$MNIC_ROOT/qemu-board/boards" && ls | sed 's/\.board$//' | tr '\n' ' '))"
[ -n "$name" ] || mnic_die "nic.sh: --name is required"
[ -z "$mac" ] || [[ $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] || mnic_die "nic.sh: bad --mac '$mac' (want xx:xx:xx:xx:xx:xx)"
if [ $selftest = 0 ]; then
  [ -n "$sw" ] || mnic_die "nic.sh: --switch DIR is required (or --selftest)"
  [ -n "$mac" ] || mnic_die "nic.sh: --mac is required with --switch"
  [ -S "$sw/ctl" ] || mnic_die "nic.sh: no switch at $sw (start one with qemu-board/switch.sh start $sw)"
fi
case $bar_kind in doorbell|plain) ;; *) mnic_die "nic.sh: --bar-kind wants doorbell or plain, not '$bar_kind'" ;; esac
bar=${bar:-$MNIC_ROOT/build/nics/$name.bar}
mkdir -p "$(dirname "$bar")"
if [ -n "$hostmem" ]; then
  [ -f "$hostmem" ] || mnic_die "nic.sh: --hostmem: no file $hostmem (create it with its size first: truncate -s 256M FILE)"
  hostmem_size=$(stat -c %s "$hostmem")
  # A PCI BAR is a power of two, naturally aligned (PCI LB 3.0 6.2.5.1).
  [ "$hostmem_size" -gt 0 ] && [ $((hostmem_size & (hostmem_size - 1))) = 0 ] || \
    mnic_die "nic.sh: --hostmem: $hostmem is $hostmem_size bytes, not a power of two (a PCI BAR)"
  [ "$board" = posix ] || [ "$hostmem_size" -le $((256 << 20)) ] || \
    mnic_die "nic.sh: --hostmem: $hostmem_size bytes do not fit the board's 32-bit PCI MMIO window beside the BAR (256 MiB at most)"
fi

if [ "$board" = posix ]; then
  if [ "$san" = 1 ]; then variant=posix-asan; mk="BOARD=posix SAN=1"; else variant=posix; mk=BOARD=posix; fi
  exe=$MNIC_ROOT/build/$variant/mnic-fw
  [ -x "$exe" ] || mnic_die "nic.sh: $exe not built; run: make $mk"
  [ $selftest = 0 ] || mnic_die "nic.sh: --selftest is for QEMU boards; POSIX drivers are unit-tested"
  cmd=("$exe" --name "$name" --vde "$sw" --mac "$mac" --bar "$bar")
  if [ $bar_kind_given = 1 ] && [ "$bar_kind" = doorbell ]; then
    cmd+=(--ivshmem "$bar.ivsh")
    HOST_VECTORS=$POSIX_HOST_VECTORS
    BAR_SIZE=$(awk '$1 == "bar_size" { print $2 }' "$MNIC_ROOT/qemu-board/boards/posix.board")
  fi
  [ -z "$hostmem" ] || cmd+=(--hostmem "$hostmem")
  [ -z "$impair" ] || cmd+=(--impair "$impair")
  cmd+=(-- "$@")
else
  [ -z "$impair" ] || mnic_die "nic.sh: --impair is implemented by the POSIX backend only"
  mnic_board_args "$board"
  # rawx, rcx (the lab's traffic generators) and selftest (the driver
  # self-test) are in the lab image only (firmware/modes.h)
  [ $selftest = 0 ] || set -- selftest "$@"
  case "${1:-}" in
    rawx|rcx|selftest) elf=${image:-$MNIC_ROOT/build/$board/mnic-fw-lab.elf} ;;
    *) elf=${image:-$MNIC_ROOT/build/$board/mnic-fw.elf} ;;
  esac
  [ -f "$elf" ] || mnic_die "nic.sh: $elf not built; run: make BOARD=$board"
  # shellcheck disable=SC2206
  cmd=("$QEMU" $QEMU_BOARD_ARGS -kernel "$elf")
  fwargs=("$@")
  if [ -n "$flash1" ]; then
    flash0=${flash0:-$MNIC_ROOT/build/$board/loader/flash0.bin}
    [ -f "$flash0" ] || mnic_die "nic.sh: $flash0 not built; run: make BOARD=$board"
    [ -f "$flash1" ] || mnic_die "nic.sh: no slot flash $flash1 (make one: mnicctl image flash-file)"
    sh_args=enable=on,target=native,arg=mnic-fw
    for a in "${fwargs[@]}"; do sh_args+=",arg=${a//,/,,}"; done   # QEMU escapes ',' as ',,'
    # shellcheck disable=SC2206
    cmd=("$QEMU" $QEMU_BOARD_ARGS
         -drive "if=pflash,format=raw,unit=0,readonly=on,file=$flash0"
         -drive "if=pflash,format=raw,unit=1,file=$flash1"
         -semihosting-config "$sh_args")
  fi
  if [ $selftest = 1 ]; then
    cmd+=(-netdev hubport,id=n0,hubid=0 -device "virtio-net-device,netdev=n0,mac=${mac:-52:54:00:5e:00:01}"
          -netdev hubport,id=n1,hubid=0 -device virtio-net-device,netdev=n1,mac=52:54:00:5e:00:02)
  else
    cmd+=(-netdev "vde,id=n0,sock=$sw" -device "virtio-net-device,netdev=n0,mac=$mac")
    [ -z "$pcap" ] || cmd+=(-object "filter-dump,id=dump0,netdev=n0,file=$pcap")
  fi
  [ -n "$flash1" ] || cmd+=(-append "${fwargs[*]}")
  if [ "$bar_kind" = plain ]; then
    cmd+=(-object "memory-backend-file,id=bar,share=on,mem-path=$bar,size=$BAR_SIZE"
          -device ivshmem-plain,memdev=bar)
  else
    # The server maps FILE for every peer: it must have the BAR's size
    # (growing or shrinking keeps what a restarted NIC's host left there).
    cmd+=(-chardev "socket,id=ivsh,path=$bar.ivsh"
          -device "ivshmem-doorbell,chardev=ivsh,vectors=$HOST_VECTORS")
  fi
  # The second ivshmem-plain function (after the BAR's on the bus, which
  # is how the board tells them apart): the host's memory.
  [ -z "$hostmem" ] || cmd+=(-object "memory-backend-file,id=hostmem,share=on,mem-path=$hostmem,size=$hostmem_size"
                             -device ivshmem-plain,memdev=hostmem)
  [ $gdb = 0 ] || cmd+=(-s -S)
fi
if [ $dry = 1 ]; then printf '%q ' "${cmd[@]}"; echo; exit 0; fi
if [ "$bar_kind" = doorbell ] && { [ "$board" != posix ] || [ $bar_kind_given = 1 ]; }; then
  srv=$MNIC_ROOT/build/host/qemu-board/mnic-ivshmem-server
  [ "$san" != 1 ] || srv=$MNIC_ROOT/build/host-asan/qemu-board/mnic-ivshmem-server
  [ -x "$srv" ] || mnic_die "nic.sh: $srv not built; run: make ivshmem-server"
  [ ! -e "$bar" ] || [ -f "$bar" ] || mnic_die "nic.sh: --bar $bar is not a regular file (the ivshmem server maps a file of the BAR's size; --bar-kind plain hands QEMU anything)"
  [ "$(stat -c %s "$bar" 2>/dev/null || echo 0)" = "$((BAR_SIZE))" ] || truncate -s "$((BAR_SIZE))" "$bar"
  rm -f "$bar.ivsh"
  # Not tracked by the caller: it stops when QEMU (its first client) and
  # any later client have disconnected, or 30 s after starting without
  # any, or at once when this process (which becomes QEMU: exec below)
  # exits, so a QEMU that fails before it connects leaves no server.
  # Hosts (tests/vm/vm.sh) read the vector count from $bar.ivsh.vectors:
  # QEMU's ivshmem-doorbell wants it on its command line, and a client
  # with fewer vectors than the server's peers ignores the rest.
  echo "$HOST_VECTORS" >"$bar.ivsh.vectors"
  "$srv" --socket "$bar.ivsh" --shm "$bar" --vectors "$HOST_VECTORS" --linger 30 --owner $$ \
    --max-peers "${MNIC_IVSH_MAX_PEERS:-8}" \
    </dev/null >/dev/null 2>"$bar.ivsh.log" &
  srv_pid=$!
  for _ in $(seq 200); do
    [ -S "$bar.ivsh" ] && break
    kill -0 $srv_pid 2>/dev/null || mnic_die "nic.sh: mnic-ivshmem-server did not start: $(tail -1 "$bar.ivsh.log")"
    sleep 0.02
  done
  [ -S "$bar.ivsh" ] || { kill $srv_pid 2>/dev/null; mnic_die "nic.sh: mnic-ivshmem-server: no socket $bar.ivsh after 4 s"; }
fi
exec "${cmd[@]}"
