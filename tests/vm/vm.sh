#!/usr/bin/env bash
# Boot an x86_64 Linux test VM (Debian's kernel + an initramfs from
# tests/vm/mkinitramfs.sh) under QEMU, in the foreground (exec: the caller's
# $! is QEMU's pid; track it with mnic_track and it dies with the test).
#
#   tests/vm/vm.sh --initrd FILE
#        [--kver VER]          kernel /boot/vmlinuz-VER (default: tests/vm/kver.sh)
#        [--kernel FILE]       another kernel image
#        [--append "ARGS"]     extra kernel command line (after console=ttyS0 panic=-1)
#        [--log FILE]          serial console to FILE (default: stdout)
#        [--mem MB]            RAM (default 512)       [--smp N]  CPUs (default 1)
#        [--ram-file FILE]     the RAM is FILE (memory-backend-file, share=on: another
#                              process, a NIC's host-memory aperture, maps the same
#                              bytes); file offset = guest-physical address for
#                              --mem <= 2816 (q35 puts all RAM below 4 GiB then;
#                              docs/host-interface.md "GPA and the RAM file")
#        [--accel auto|kvm|tcg] default auto: KVM if /dev/kvm really works, else TCG
#        [--ivshmem BARFILE]   an ivshmem PCI device whose BAR2 is BARFILE: an
#                              ivshmem-doorbell on BARFILE.ivsh when a NIC's
#                              mnic-ivshmem-server listens there (qemu-board/
#                              nic.sh; MSI-X to and from the NIC), else an
#                              ivshmem-plain over the file
#                              (shared, size = the file's size; repeatable)
#        [--vde SWITCHDIR --mac MAC]  a virtio-net-pci NIC on a vde switch (eth order:
#                              the --vde NIC first, then the --hostfwd one)
#        [--hostfwd HOSTPORT:GUESTPORT]  a virtio-net-pci NIC on QEMU user networking,
#                              restrict=on (no outside traffic), host 127.0.0.1:HOSTPORT
#                              forwarded to the guest's GUESTPORT (repeatable; one NIC);
#                              the guest is 10.0.2.15/24
#        [--guestfwd GUESTPORT:HOSTPORT]  on the --hostfwd NIC: the guest's TCP connections
#                              to 10.0.2.100:GUESTPORT reach 127.0.0.1:HOSTPORT (QEMU runs
#                              `busybox nc` per connection; repeatable)
#        [--pcap FILE]         capture the --vde NIC's frames (QEMU filter-dump, pcap)
#        [--dry-run]           print the QEMU command line
#
# Always -nic none -nodefaults: no NIC exists unless asked for.  -no-reboot
# with panic=-1: a kernel panic ends QEMU instead of looping.  Guests need
# the virtio_pci and virtio_net modules for --vde/--hostfwd NICs.
# Exit status: QEMU's (0 after the guest's poweroff).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "vm.sh: $*" >&2; exit 1; }

initrd=; kver=; kernel=; append=; log=; mem=512; smp=1; accel=auto; dry=0
vde=; mac=; fwds=(); gfwds=(); bars=(); pcap=; ramfile=
while [ $# -gt 0 ]; do
  case $1 in
    --initrd) initrd=${2:?}; shift 2 ;;
    --kver) kver=${2:?}; shift 2 ;;
    --kernel) kernel=${2:?}; shift 2 ;;
    --append) append=${2?}; shift 2 ;;
    --log) log=${2:?}; shift 2 ;;
    --mem) mem=${2:?}; shift 2 ;;
    --ram-file) ramfile=${2:?}; shift 2 ;;
    --smp) smp=${2:?}; shift 2 ;;
    --accel) accel=${2:?}; shift 2 ;;
    --ivshmem) bars+=("${2:?}"); shift 2 ;;
    --vde) vde=${2:?}; shift 2 ;;
    --mac) mac=${2:?}; shift 2 ;;
    --hostfwd) fwds+=("${2:?}"); shift 2 ;;
    --guestfwd) gfwds+=("${2:?}"); shift 2 ;;
    --pcap) pcap=${2:?}; shift 2 ;;
    --dry-run) dry=1; shift ;;
    *) die "unknown option '$1' (see the usage at the top of tests/vm/vm.sh)" ;;
  esac
done
[ -n "$initrd" ] || die "--initrd FILE is required (build one with tests/vm/mkinitramfs.sh)"
[ -f "$initrd" ] || die "no initramfs $initrd"
if [ -z "$kernel" ]; then
  [ -n "$kver" ] || kver=$("$here/kver.sh")
  kernel=/boot/vmlinuz-$kver
fi
[ -r "$kernel" ] || die "cannot read kernel $kernel (run scripts/deps.sh as root: linux-image-amd64)"
qemu="qemu-system-x86_64"
command -v "$qemu" >/dev/null || die "$qemu not found; run scripts/deps.sh as root (qemu-system-x86)"

# KVM only if it really works here: a /dev/kvm node can exist without
# usable virtualisation (a container, a nested guest whose hypervisor
# refuses some MSRs, "failed to set MSR 0x10a", or stalls the kernel right
# after its real-mode setup while firmware still runs).  The probe boots
# this kernel with no root file system and needs its panic ("VFS: Unable to
# mount root") within 15 s; the answer is cached per kernel in
# build/vm/accel-<kernel> (delete it to probe again).
kvm_cpu() {
  local c out rc
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
  out=$(mktemp)
  for c in host host,-arch-capabilities; do
    rc=0
    timeout 15 "$qemu" -M q35 -accel kvm -cpu "$c" -m 256 -nodefaults -nic none -display none \
      -no-reboot -kernel "$kernel" -append "console=ttyS0 panic=-1 root=/dev/mnic-none" \
      -serial "file:$out" </dev/null >/dev/null 2>&1 || rc=$?
    if grep -q "Unable to mount root" "$out"; then rm -f "$out"; echo "$c"; return 0; fi
    [ $rc != 124 ] || break   # the guest hung: another CPU model will not help
  done
  rm -f "$out"
  return 1
}
cache=$here/../../build/vm/accel-$(basename "$kernel")
case $accel in
  auto|kvm)
    if [ -f "$cache" ] && [ "$accel" = auto ]; then
      read -r accel cpu < "$cache"
    elif cpu=$(kvm_cpu); then accel=kvm
    elif [ "$accel" = kvm ]; then die "--accel kvm: KVM does not boot $kernel here (probe failed)"
    else accel=tcg; cpu=max; fi
    mkdir -p "$(dirname "$cache")" && echo "$accel $cpu" > "$cache" ;;
  tcg) cpu=max ;;
  *) die "--accel wants auto, kvm or tcg" ;;
esac

# ivshmem's register BAR0 is 256 bytes; a page of its own (the kernel
# reassigns it, size and alignment 2^12) lets mnic.ko map it to RDMA
# applications as their doorbell register without exposing a neighbour's
# registers (hostdrv/kernel/mnic_irq.c user_doorbell).
pci_align="pci=resource_alignment=12@pci:1af4:1110"
cmd=("$qemu" -M q35 -accel "$accel" -cpu "$cpu" -m "$mem" -smp "$smp"
     -nodefaults -nic none -display none -no-reboot -no-user-config
     -kernel "$kernel" -initrd "$initrd"
     -append "console=ttyS0 panic=-1 $pci_align $append")
if [ -n "$log" ]; then cmd+=(-serial "file:$log"); else cmd+=(-serial stdio); fi
if [ -n "$ramfile" ]; then
  # q35 (QEMU 7.2 pc_q35_init): RAM below 4 GiB is all of it while it is
  # under 0xb0000000 (2816 MiB), else 2 GiB with the rest from 4 GiB on;
  # only the first case keeps file offset = guest-physical address.
  [[ $mem =~ ^[0-9]+$ ]] && [ "$mem" -le 2816 ] || die "--ram-file wants --mem <= 2816 (MiB): file offset = GPA only while all RAM is below the 32-bit hole"
  cmd+=(-object "memory-backend-file,id=ram,share=on,mem-path=$ramfile,size=${mem}M"
        -machine memory-backend=ram)
fi
i=0
for b in "${bars[@]}"; do
  [ -f "$b" ] || die "--ivshmem: no BAR file $b (start the NIC first)"
  size=$(stat -c %s "$b")
  [ "$size" -gt 0 ] || die "--ivshmem: $b is empty"
  if [ -S "$b.ivsh" ]; then
    # the NIC's board descriptor (host_vectors), written by qemu-board/nic.sh
    vectors=$(cat "$b.ivsh.vectors" 2>/dev/null) || die "--ivshmem: $b.ivsh has no $b.ivsh.vectors (start the NIC with qemu-board/nic.sh)"
    [[ $vectors =~ ^[1-9][0-9]?$ ]] || die "--ivshmem: $b.ivsh.vectors holds '$vectors', not a vector count"
    cmd+=(-chardev "socket,id=ivsh$i,path=$b.ivsh" -device "ivshmem-doorbell,chardev=ivsh$i,vectors=$vectors")
  else
    cmd+=(-object "memory-backend-file,id=bar$i,share=on,mem-path=$b,size=$size"
          -device "ivshmem-plain,memdev=bar$i")
  fi
  i=$((i + 1))
done
if [ -n "$vde" ]; then
  [ -S "$vde/ctl" ] || die "--vde: no switch at $vde (qemu-board/switch.sh start $vde)"
  [[ $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] || die "--vde needs --mac xx:xx:xx:xx:xx:xx"
  cmd+=(-netdev "vde,id=vde0,sock=$vde" -device "virtio-net-pci,netdev=vde0,mac=$mac")
  [ -z "$pcap" ] || cmd+=(-object "filter-dump,id=dump0,netdev=vde0,file=$pcap")
fi
[ -z "$pcap" ] || [ -n "$vde" ] || die "--pcap captures the --vde NIC: give --vde too"
[ ${#gfwds[@]} -eq 0 ] || [ ${#fwds[@]} -gt 0 ] || die "--guestfwd needs a --hostfwd NIC"

if [ ${#fwds[@]} -gt 0 ]; then
  nd="user,id=user0,restrict=on"
  for f in "${fwds[@]}"; do
    [[ $f =~ ^[0-9]+:[0-9]+$ ]] || die "--hostfwd wants HOSTPORT:GUESTPORT, got '$f'"
    nd+=",hostfwd=tcp:127.0.0.1:${f%%:*}-:${f#*:}"
  done
  for f in "${gfwds[@]}"; do
    [[ $f =~ ^[0-9]+:[0-9]+$ ]] || die "--guestfwd wants GUESTPORT:HOSTPORT, got '$f'"
    nd+=",guestfwd=tcp:10.0.2.100:${f%%:*}-cmd:busybox nc 127.0.0.1 ${f#*:}"
  done
  cmd+=(-netdev "$nd" -device "virtio-net-pci,netdev=user0,mac=52:54:00:12:34:56")
fi
if [ $dry = 1 ]; then printf '%q ' "${cmd[@]}"; echo; exit 0; fi
exec "${cmd[@]}"
