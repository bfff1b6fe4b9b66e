#!/usr/bin/env bash
# The Linux kernel module in a real x86_64 VM (Debian's kernel, a busybox
# initramfs built here; KVM when it works, else TCG; tests/vm/).
#
#   switch --- QEMU A15 NIC (BAR file a15.bar) <-ivshmem-doorbell-> x86 VM: mnic.ko, /dev/mnic0, netdev mnic0
#         |         second ivshmem-plain: vm.ram = the x86 VM's RAM (host-memory aperture)
#         |--- POSIX NIC   (BAR file posix.bar) <- host: mnic-pingpong client (BAR backend)
#         \--- the x86 VM's virtio NIC (MAC_PEER, its own netns): mnic0's IP peer
#
# Host memory (docs/host-interface.md "Host memory and translation"): the
# VM's 256 MiB of RAM is the file vm.ram, which the A15 NIC maps as its
# aperture; a page's guest-physical address is its offset in the file (the
# VM prints a page's GPA and pattern, the host checks the file there and
# answers in the page); MNIC_IOC_REG_MEM refusals and the tenant's MTT
# commands refused (mnic-mem-check hostile); a malloc'ed 64 MiB buffer and
# an mmap'ed file registered as MRs, a CQ on registered rings, every pin
# given back on dereg and on close (mnic-mem-check reg); libmnic's
# mnic_reg_mr of a read-only mapping and of a range with a hole refused
# with the module's reason (mnic-tenant badmr); RDMA WRITE and
# READ by the host's mnic-rw (POSIX NIC) into a registered 64 MiB heap
# buffer of the VM (mnic-rw-kmod, its passive side); mnic-pingpong
# --verify rounds (SEND/RECV both ways, every byte checked) whose VM-side
# buffer is not libmnic's: an mmap'ed file on the VM's tmpfs (the NIC's
# writes land in the file), the heap, main's stack (mnic_reg_mr of any
# buffer in kmem mode); the host's BAR backend refuses such a buffer with
# the reason.
#
# Doorbells and interrupts: the NIC's BAR is an ivshmem-doorbell served by
# mnic-ivshmem-server (qemu-board/nic.sh); the module rings the NIC's
# Doorbell register after every command and sleeps until MSI-X vector 0
# (counters irq_rings, irq_cmd; /proc/interrupts), the decoys are
# ivshmem-plain and stay polled.
#
# The Ethernet netdev mnic0 (checks netdev_*; hostdrv/kernel/mnic_netdev.c):
# MAC, MTU, carrier (off during the heartbeat stall), bound to the RDMA
# device; ip addr add/del -> a RoCE v2 GID pushed to / cleared in the
# firmware (SET_GID); the data path through the firmware's host Ethernet
# queues: the VM's own virtio NIC on the switch (--vde, MAC_PEER), moved
# into a network namespace, is the peer: ARP both ways with no static
# neighbour, ping, 256 KiB of TCP each way (md5), statistics, NAPI on
# MSI-X vector 1, the firmware's ethq counters; the peer's capture (vm.sh
# --pcap) holds mnic0's ARP, ICMP and TCP and nothing malformed (tshark).
#
# Inside the VM: modprobe ib_uverbs (with ib_core, from Debian's
# linux-image-amd64), insmod mnic.ko (two decoy ivshmem devices: no init
# segment -> left alone, another cmdif_rev -> refused with a message);
# the RDMA device mnic0 (checks ib_device_*: sysfs, iproute2's `rdma`,
# /dev/infiniband/uverbs0, mnic-ib-check on the raw uverbs write ABI:
# context = firmware context, QUERY_DEVICE/PORT = the firmware's, PDs,
# refusals, close and unbind leave nothing);
# /dev/mnic0 and sysfs health (state,
# command queue, board, a moving heartbeat); `mnicctl info`; create a PD
# and a CQ (gone with their mnicctl process); an RC ping-pong (mnic-pingpong --verify, every byte
# checked) against the POSIX NIC driven from the host, the out-of-band TCP
# exchange through the VM's restricted user netdev (127.0.0.1 hostfwd to a
# relay in the VM: the server listens on the VM's loopback);
# objects die with the file that made them; an unprivileged self-checkpoint
# through the ioctl and `image show`; driver counters (no timeouts, no
# delivery errors, every context freed); tenancy (mnic-tenancy-check:
# EPERM for nobody on the privileged set, two tenants isolated, SIGKILL
# leaves nothing); hostile ioctls and mmaps (mnic-ioctl-check: the init
# segment read-only); devlink (iproute2's `devlink`: dev info, flash of a
# good image, of a corrupt one the driver refuses and of another board's
# the NIC refuses, the "fw" health reporter through a heartbeat stall: the
# host SIGSTOPs the NIC's QEMU until the VM saw the error); PCI unbind
# under an open, mapped file and rebind (no context left); rmmod; insmod +
# rmmod again.  The A15 NIC boots as a board does (loader, slot A 1.0.0+1).  Fails on a failed check or any kernel WARNING/BUG/Oops/Call Trace
# in the VM's dmesg (printed to the serial log at the end).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
mnic_init
out=$root/build/test-system/kmod-vm
rm -rf "$out"; mkdir -p "$out"
ITERS=${KMOD_PP_ITERS:-200}
# the rounds whose VM buffer is a file, the heap, the stack: few iterations
MR_ITERS=${KMOD_PP_MR_ITERS:-20}
# unmodified ibv_rc_pingpong on mnic0 (the provider), 1 B and 4 KiB
IBV_ITERS=${KMOD_IBV_ITERS:-50}
# RDMA WRITE and READ of 2 MiB each (512 pages, in the kernel's physical
# order) and a FETCH_AND_ADD on a page's last 8 bytes into the VM's
# registered heap; the peer's buffer of twice that
# lives in its tenant range of the POSIX NIC's 16 MiB BAR (MNIC_CTX_MEM).
RW_LEN=${KMOD_RW_LEN:-2097152}
SIZE=${KMOD_PP_SIZE:-4096}
MAC_A=52:54:00:00:07:01      # IP 10.0.7.1 (firmware: 10.mac[3].mac[4].mac[5])
MAC_P=52:54:00:00:07:02      # IP 10.0.7.2
MAC_PEER=52:54:00:00:07:09   # the VM's virtio NIC on the switch: the netdev's peer, IP 10.0.7.9
# The VM's RAM, and the A15 NIC's host-memory aperture: a power of two
# that fits the A15's 32-bit PCI MMIO window beside the BAR (256 MiB at
# most, qemu-board/nic.sh --hostmem).
VM_MEM_MIB=256

make -C "$root" --no-print-directory -s kmod build/interop/mnic-rw build/host/hostdrv/mnic-tenant
mnic_rw=$root/build/interop/mnic-rw
rw_kmod=$root/build/kmod/mnic-rw-kmod
ko=$root/build/kmod/mnic.ko
mnicctl=$root/build/host/hostdrv/mnicctl-static
ioctl_check=$root/build/kmod/mnic-ioctl-check
tenancy_check=$root/build/kmod/mnic-tenancy-check
mem_check=$root/build/kmod/mnic-mem-check
ib_check=$root/build/kmod/mnic-ib-check
verbs_check=$root/build/kmod/mnic-verbs-check
provider_so=$root/build/host/provider/libmnic-rdmav34.so
provider_driver=$root/build/host/provider/mnic.driver
for b in ibv_devices ibv_devinfo ibv_rc_pingpong; do
  command -v $b >/dev/null || mnic_die "$b missing: run scripts/deps.sh (ibverbs-utils)"
done
pingpong=$root/build/host/hostdrv/mnic-pingpong
tenant=$root/build/host/hostdrv/mnic-tenant
mnicctl_host=$root/build/host/hostdrv/mnicctl
devlink=$(command -v devlink || echo /usr/sbin/devlink)
[ -x "$devlink" ] || mnic_die "iproute2's devlink missing: run scripts/deps.sh"
iproute_ip=$(command -v ip || echo /usr/sbin/ip)   # /bin/ip in the VM: netns moves
[ -x "$iproute_ip" ] || mnic_die "iproute2's ip missing: run scripts/deps.sh"
command -v tshark >/dev/null || mnic_die "tshark missing: run scripts/deps.sh"
rdma=$(command -v rdma || echo /usr/bin/rdma)
[ -x "$rdma" ] || mnic_die "iproute2's rdma missing: run scripts/deps.sh"
# The RDMA device (mnic_ib.c) links against ib_core; ib_uverbs (which the
# VM loads first, with ib_core) is its soft dependency.
ko_depends=$(modinfo -F depends "$ko"); ko_softdep=$(modinfo -F softdep "$ko")
for f in "$root/build/qemu-virt-a15/mnic-fw.elf" "$root/build/qemu-virt-a72/mnic-fw.elf" \
         "$root/build/qemu-virt-a15/loader/flash0.bin" "$root/build/posix/mnic-fw" "$mnicctl" \
         "$mnicctl_host" "$pingpong"; do
  [ -f "$f" ] || mnic_die "$f not built; run: make images"
done
kver=$("$root/tests/vm/kver.sh")
rev=$(sed -n 's/^#define MNIC_CMDIF_REV *\([0-9]*\)u.*/\1/p' "$root/abi/include/mnic/abi.h")
[ -n "$rev" ] || mnic_die "cannot read MNIC_CMDIF_REV from abi/include/mnic/abi.h"

# ---- firmware images for devlink (/lib/firmware/mnic/ in the VM): slot A
# boots 1.0.0+1; good.img (1.1.0+2) goes to slot B; corrupt.img is it with
# one payload byte flipped (the driver's digest check refuses it);
# a72.img is a good image for the other board (the NIC refuses it at
# FW_FLASH_BEGIN: syndrome site 0x100 + FWIMG_E_BOARD, mnic/fwimage.h MNIC_FWIMG_ERR_LIST)
fwdir=$out/firmware/mnic; mkdir -p "$fwdir"
"$mnicctl_host" image build --board qemu-virt-a15 --version 1.0.0+1 -o "$out/v1.img" \
  "$root/build/qemu-virt-a15/mnic-fw.elf" >/dev/null
"$mnicctl_host" image build --board qemu-virt-a15 --version 1.1.0+2 -o "$fwdir/good.img" \
  "$root/build/qemu-virt-a15/mnic-fw.elf" >/dev/null
"$mnicctl_host" image build --board qemu-virt-a72 --version 9.0.0 -o "$fwdir/a72.img" \
  "$root/build/qemu-virt-a72/mnic-fw.elf" >/dev/null
# The board enforces signatures (a key slot in flash0 beside the loader,
# docs/firmware-images.md "Signed images"): the factory and the good image
# are signed by k1; an unsigned newer one passes the driver's checks and is
# the NIC's to refuse, by name, through devlink.
"$mnicctl_host" image build --board qemu-virt-a15 --version 1.2.0+3 -o "$fwdir/unsigned.img" \
  "$root/build/qemu-virt-a15/mnic-fw.elf" >/dev/null
"$mnicctl_host" image keygen -o "$out/k1" >/dev/null
cp "$root/build/qemu-virt-a15/loader/flash0.bin" "$out/flash0.bin"
"$mnicctl_host" image keyslot "$out/flash0.bin" --pubkey "$out/k1.pub:1" >/dev/null
"$mnicctl_host" image sign --key "$out/k1" "$out/v1.img" >/dev/null
"$mnicctl_host" image sign --key "$out/k1" "$fwdir/good.img" >/dev/null
cp "$fwdir/good.img" "$fwdir/corrupt.img"
head -c 4096 "$fwdir/good.img" > "$fwdir/truncated.img"
{ cat "$fwdir/good.img"; printf 'junk'; } > "$fwdir/trailing.img"
python3 - "$fwdir/corrupt.img" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(128 + 4096); b = f.read(1); f.seek(128 + 4096); f.write(bytes([b[0] ^ 0x01]))
PY
"$mnicctl_host" image verify "$fwdir/corrupt.img" >/dev/null 2>&1 && mnic_die "corrupt.img still verifies"
"$mnicctl_host" image flash-file -o "$out/flash1.bin" --slot-a "$out/v1.img" >/dev/null
board_check=$(awk '/X\(FWIMG_/ { if ($0 ~ /FWIMG_E_BOARD,/) { print n; exit } n++ }' \
  "$root/abi/include/mnic/fwimage.h")
[ -n "$board_check" ] || mnic_die "cannot find FWIMG_E_BOARD in abi/include/mnic/fwimage.h"
board_site=$(printf '0x%x' $((0x100 + board_check)))

# ---- the NICs
mnic_switch_start "$out/sw"
truncate -s ${VM_MEM_MIB}M "$out/vm.ram"
"$root/qemu-board/nic.sh" --board qemu-virt-a15 --name kmod-a15 --mac $MAC_A --switch "$out/sw" \
  --bar "$out/a15.bar" --hostmem "$out/vm.ram" --flash "$out/flash1.bin" --boot-flash "$out/flash0.bin" -- run db_min_us=200 db_max_us=2000 >"$out/a15.log" 2>&1 &
a15=$!; mnic_track $a15
"$root/qemu-board/nic.sh" --board posix --name kmod-posix --mac $MAC_P --switch "$out/sw" \
  --bar "$out/posix.bar" -- run db_min_us=100 db_max_us=1000 >"$out/posix.log" 2>&1 &
posix=$!; mnic_track $posix
for bar in a15 posix; do
  ok=0
  for _ in $(seq 300); do
    if [ -s "$out/$bar.bar" ] && python3 "$root/tests/system/mnic_bar.py" "$out/$bar.bar" 2>/dev/null \
         | grep -q "state=2"; then ok=1; break; fi
    if ! kill -0 $a15 2>/dev/null || ! kill -0 $posix 2>/dev/null; then break; fi
    sleep 0.1
  done
  [ $ok = 1 ] || { tail -20 "$out/$bar.log"; mnic_die "$bar NIC did not reach READY"; }
done
echo "NICs ready: A15 (BAR $out/a15.bar), POSIX (BAR $out/posix.bar)"

# The host's BAR backend has no module to pin a buffer it did not
# allocate: mnic_reg_mr refuses one before any packet, saying why (the
# VM's /dev/mnic0 registers the same kinds below); a stack round larger
# than the tool's stack array is refused by the tool.
bar_refusals=ok
for m in heap stack "file=$out/pp-refused.buf"; do
  rc=0; "$pingpong" -d "$out/posix.bar" -n 1 --mr-mem "$m" 127.0.0.1 >"$out/refused.log" 2>&1 || rc=$?
  sed 's/^/  host refusal: /' "$out/refused.log"
  [ $rc = 3 ] && grep -q "is not memory of this handle (mnic_alloc): only /dev/mnicN on a NIC with host memory" \
    "$out/refused.log" || bar_refusals="--mr-mem $m not refused with the reason (exit $rc)"
done
rc=0; "$pingpong" -d "$out/posix.bar" --mr-mem stack -s 1048576 127.0.0.1 >"$out/refused.log" 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "stack holds messages of at most" "$out/refused.log" ||
  bar_refusals="--mr-mem stack -s 1048576 not refused (exit $rc)"

# ---- the VM's /init
# Host ports of the hostfwds: the ping-pong's, and mnic-rw's next to it.
port=$(mnic_free_ports 2) || mnic_die "no free 127.0.0.1 ports"; rw_port=$((port + 1))
cat > "$out/init" <<INIT
#!/bin/sh
# Generated by tests/system/kmod_vm.sh: the checks inside the VM.
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
mkdir -p /tmp; mount -t tmpfs tmp /tmp
chmod 755 /   # the initramfs root comes from a 0700 staging dir: the tenancy checks run as nobody
fails=0
check() { n=\$1; shift; if "\$@"; then echo "KMOD-CHECK \$n PASS"; else echo "KMOD-CHECK \$n FAIL"; fails=\$((fails + 1)); fi; }
eq() { [ "\$1" = "\$2" ] || { echo "  want '\$2', got '\$1'"; return 1; }; }
finish() {
  echo KMOD-DMESG-BEGIN; dmesg; echo KMOD-DMESG-END
  echo "KMOD-VM-DONE fails=\$fails"
  poweroff -f
}
H=/sys/class/misc/mnic0/health; C=/sys/class/misc/mnic0/counters; D=/dev/mnic0
modprobe virtio_pci; modprobe virtio_net
# by MAC: the user-net NIC (hostfwds) and the netdev checks' peer NIC on
# the switch (vm.sh: the --vde NIC is eth0, the user one eth1)
ifof() { for i in /sys/class/net/*; do [ "\$(cat \$i/address)" = "\$1" ] && echo \${i##*/}; done; }
UIF=\$(ifof 52:54:00:12:34:56); PIF=\$(ifof $MAC_PEER)
ip link set lo up; ip link set \$UIF up; ip addr add 10.0.2.15/24 dev \$UIF
# mnic.ko needs ib_core; ib_uverbs gives user space /dev/infiniband/uverbsN.
check ib_device_modules_loaded modprobe ib_uverbs
IB=/sys/class/infiniband/mnic0

check insmod insmod /lib/mnic.ko
check dev_node test -c \$D
[ -c \$D ] || finish
check one_device_bound eq "\$(ls /sys/bus/pci/drivers/mnic | grep -c '^0000:')" 1
check no_second_node test ! -e /dev/mnic1
dmesg > /tmp/dmesg.probe
check rev_mismatch_reported grep -q "revision $((rev - 1)), this driver speaks $rev" /tmp/dmesg.probe
check decoy_silent eq "\$(grep -c 'mnic 0000:00:01.0' /tmp/dmesg.probe)" 0
check hostmem_aperture grep -q "host memory $VM_MEM_MIB MiB" /tmp/dmesg.probe
# The NIC's BAR is an ivshmem-doorbell: the module found its peer IDs.
check doorbell_irq_probe grep -q "doorbells through ivshmem-doorbell: peer [0-9]*, NIC peer 0, MSI-X vector 0" /tmp/dmesg.probe
# This VM's RAM is the NIC's aperture: GPA = offset in vm.ram (the host
# checks the page there and answers in it).
check hostmem_gpa_is_file_offset mnic-mem-check gpa
check health_state eq "\$(cat \$H/state)" ready
check cmdq_status eq "\$(cat \$H/cmdq_status)" running
check board_name eq "\$(cat \$H/board_name)" qemu-virt-a15
check mac eq "\$(cat \$H/mac)" $MAC_A
check cmdif_rev eq "\$(cat \$H/cmdif_rev)" $rev
hb1=\$(cat \$H/heartbeat); sleep 1; hb2=\$(cat \$H/heartbeat)
check heartbeat_moves test "\$hb2" -gt "\$hb1"
for f in \$H/*; do echo "  health/\${f##*/} = \$(cat \$f)"; done

check mnicctl_info mnicctl -d \$D info
check mnicctl_health mnicctl -d \$D health

# The RDMA device (hostdrv/kernel/mnic_ib.c): ib_device mnic0 on the same
# PCI function, RoCEv2 on an Ethernet port, ACTIVE with the firmware READY.
check ib_device_sysfs test -d \$IB
check ib_device_probe_line grep -q "RDMA device mnic0 (RoCEv2, port 1)" /tmp/dmesg.probe
check ib_device_node_type eq "\$(cat \$IB/node_type)" "1: CA"
check ib_device_port_state eq "\$(cat \$IB/ports/1/state)" "4: ACTIVE"
check ib_device_port_phys_state eq "\$(cat \$IB/ports/1/phys_state)" "5: LinkUp"
check ib_device_link_layer eq "\$(cat \$IB/ports/1/link_layer)" Ethernet
check ib_device_pkey eq "\$(cat \$IB/ports/1/pkeys/0)" 0xffff
fwv=\$(cat \$H/fw_version)
check ib_device_fw_ver eq "\$(cat \$IB/fw_ver)" "\$((fwv >> 24)).\$(((fwv >> 16) & 255)).\$((fwv & 65535))"
check ib_device_parent_is_the_function eq "\$(readlink -f \$IB/device)" "\$(readlink -f /sys/class/misc/mnic0/device)"
for f in node_type node_guid sys_image_guid fw_ver hw_rev node_desc ports/1/state ports/1/link_layer ports/1/rate; do
  echo "  infiniband/mnic0/\$f = \$(cat \$IB/\$f 2>&1)"
done
rdma dev > /tmp/rdma.dev 2>&1; rdma link > /tmp/rdma.link 2>&1; sed 's/^/  rdma: /' /tmp/rdma.dev /tmp/rdma.link
check ib_device_rdma_dev grep -q "^[0-9]*: mnic0: node_type ca fw \$((fwv >> 24))\\.\$(((fwv >> 16) & 255))\\.\$((fwv & 65535))" /tmp/rdma.dev
check ib_device_rdma_link grep -q "^link mnic0/1 state ACTIVE physical_state LINK_UP" /tmp/rdma.link
check ib_device_uverbs_dev_node ls /dev/infiniband/uverbs0
check ib_device_uverbs_is_mnic0 eq "\$(cat /sys/class/infiniband_verbs/uverbs0/ibdev)" mnic0
# The raw uverbs write ABI (hostdrv/kernel/test/mnic_ib_check.c): context =
# firmware context, QUERY_DEVICE/PORT = the firmware's answers, PDs in the
# firmware, refusals, close frees all.
check ib_device_uverbs_verbs mnic-ib-check verbs mnic0 \$D
# The Ethernet netdev mnic0 (hostdrv/kernel/mnic_netdev.c) of the same
# function: the init segment's MAC, MTU 1500 up to the port's largest
# frame, carrier while the firmware serves, bound to the RDMA device (its
# RoCE GIDs follow the netdev's addresses and reach the firmware).
N=/sys/class/net/mnic0
# waitval FILE VALUE SECONDS: FILE reads VALUE within SECONDS
waitval() { i=0; while [ \$i -lt \$3 ]; do [ "\$(cat \$1 2>/dev/null)" = "\$2" ] && return 0; sleep 1; i=\$((i + 1)); done
            echo "  \$1: want '\$2', got '\$(cat \$1 2>&1)'"; return 1; }
# gidindex GID: the index of port 1's GID table entry that holds GID
gidindex() { for g in \$IB/ports/1/gids/*; do [ "\$(cat \$g 2>/dev/null)" = "\$1" ] && { echo \${g##*/}; return 0; }; done; return 1; }
waitgid() { i=0; while [ \$i -lt 10 ]; do gidindex \$1 > /dev/null && return 0; sleep 1; i=\$((i + 1)); done; echo "  no GID \$1"; return 1; }
fwip() { mnicctl -d \$D info | sed -n 's/.*ipv4 \([0-9.]*\).*/\1/p'; }
check netdev_exists test -d \$N
check netdev_mac eq "\$(cat \$N/address)" $MAC_A
check netdev_parent_is_the_function eq "\$(readlink -f \$N/device)" "\$(readlink -f /sys/class/misc/mnic0/device)"
check netdev_mtu eq "\$(cat \$N/mtu)" 1500
check netdev_probe_line grep -q "Ethernet mnic0: mac $MAC_A, mtu 1500 (max 9004)" /tmp/dmesg.probe
check netdev_max_mtu ip link set mnic0 mtu 9004
check netdev_mtu_too_big_refused eval '! ip link set mnic0 mtu 9005 2>/dev/null'
ip link set mnic0 mtu 1500
check netdev_up ip link set mnic0 up
check netdev_carrier_on waitval \$N/carrier 1 5
check netdev_ib_bound eq "\$(cat \$IB/ports/1/gid_attrs/ndevs/0)" mnic0
# ip addr add: a RoCEv2 GID ::ffff:192.168.77.1, which the firmware takes
# as the address it sends from (SET_GID); ip addr del gives the firmware
# its boot address (10.mac[3].mac[4].mac[5]) back.
gid0=\$(cat \$C/gid_add)
ip addr add 192.168.77.1/24 dev mnic0
check netdev_gid_ipv4 waitgid 0000:0000:0000:0000:0000:ffff:c0a8:4d01
gi=\$(gidindex 0000:0000:0000:0000:0000:ffff:c0a8:4d01)
check netdev_gid_type eq "\$(cat \$IB/ports/1/gid_attrs/types/\${gi:-x} 2>&1)" "RoCE v2"
check netdev_gid_ndev eq "\$(cat \$IB/ports/1/gid_attrs/ndevs/\${gi:-x} 2>&1)" mnic0
check netdev_gid_pushed eq "\$(cat \$C/gid_add)" \$((gid0 + 1))
check netdev_gid_fw_address eq "\$(fwip)" 192.168.77.1
ip addr del 192.168.77.1/24 dev mnic0
check netdev_gid_cleared waitval \$C/gid_del 1 10
check netdev_gid_gone eval '! gidindex 0000:0000:0000:0000:0000:ffff:c0a8:4d01'
check netdev_gid_fw_boot_address eq "\$(fwip)" 10.0.7.1
check netdev_gid_no_failure eq "\$(cat \$C/gid_failed)" 0
# The data path (the firmware's host Ethernet queues, NAPI on MSI-X vector
# 1): the peer is this VM's own virtio NIC on the switch, in a network
# namespace of its own, so every frame crosses the A15 NIC and the switch.
# ARP resolves both ways (no static neighbour anywhere), ping, and TCP
# (busybox nc) with every byte compared, each direction.
unshare -n sleep 100000 & peerns=\$!
sleep 1
pexec() { nsenter -t \$peerns -n "\$@"; }
/bin/ip link set dev \$PIF netns \$peerns
pexec /bin/ip link set lo up; pexec /bin/ip link set \$PIF up
pexec /bin/ip addr add 10.0.7.9/24 dev \$PIF
ip addr add 10.0.7.1/24 dev mnic0
check netdev_queue_created eq "\$(cat \$C/net_queue_create)" 1
check netdev_ping ping -c 3 -W 10 10.0.7.9
ip neigh show dev mnic0 > /tmp/neigh.txt; pexec ip neigh show > /tmp/pneigh.txt
sed 's/^/  neigh mnic0: /' /tmp/neigh.txt; sed 's/^/  neigh peer: /' /tmp/pneigh.txt
check netdev_arp_resolved grep -q "^10.0.7.9 lladdr $MAC_PEER" /tmp/neigh.txt
check netdev_arp_not_static eval '! grep -q PERMANENT /tmp/neigh.txt'
check netdev_peer_resolved_us grep -q "10.0.7.1 .*lladdr $MAC_A" /tmp/pneigh.txt
check netdev_ping_from_peer pexec ping -c 2 -W 10 10.0.7.1
dd if=/dev/urandom of=/tmp/tcp.a bs=1024 count=256 2>/dev/null
dd if=/dev/urandom of=/tmp/tcp.b bs=1024 count=256 2>/dev/null
# mnic0 receives: the peer serves /tmp/tcp.a (the time is printed, not judged)
uptime_cs() { read up _ < /proc/uptime; echo \${up%.*}\${up#*.}; }
pexec nc -l -p 5001 < /tmp/tcp.a & ncs=\$!
sleep 1
t0=\$(uptime_cs); timeout 60 nc 10.0.7.9 5001 > /tmp/tcp.a.got; t1=\$(uptime_cs); wait \$ncs
echo "  netdev TCP 256 KiB into mnic0: \$(( (t1 - t0) * 10 )) ms"
check netdev_tcp_rx_data eq "\$(md5sum < /tmp/tcp.a.got)" "\$(md5sum < /tmp/tcp.a)"
# mnic0 sends: it serves /tmp/tcp.b to the peer
nc -l -p 5002 < /tmp/tcp.b & ncs=\$!
sleep 1
t0=\$(uptime_cs); pexec timeout 60 nc 10.0.7.1 5002 > /tmp/tcp.b.got; t1=\$(uptime_cs); wait \$ncs
echo "  netdev TCP 256 KiB out of mnic0: \$(( (t1 - t0) * 10 )) ms"
ping -c 10 -i 0.2 -q 10.0.7.9 > /tmp/ping.txt 2>&1; sed 's/^/  /' /tmp/ping.txt
check netdev_tcp_tx_data eq "\$(md5sum < /tmp/tcp.b.got)" "\$(md5sum < /tmp/tcp.b)"
S=\$N/statistics
for f in rx_packets rx_bytes tx_packets tx_bytes rx_errors tx_errors rx_dropped tx_dropped; do echo "  mnic0 \$f = \$(cat \$S/\$f)"; done
check netdev_stats_rx test "\$(cat \$S/rx_bytes)" -gt 262144
check netdev_stats_tx test "\$(cat \$S/tx_bytes)" -gt 262144
check netdev_stats_no_errors eq "\$(cat \$S/rx_errors) \$(cat \$S/tx_errors)" "0 0"
check netdev_napi_irq test "\$(cat \$C/net_irq)" -gt 0
check netdev_irq_proc grep -q "mnic-net@" /proc/interrupts
mnicctl -d \$D counters --engine > /tmp/eng.txt 2>&1
grep -E "ethq" /tmp/eng.txt | sed 's/^/  /'
check netdev_fw_rx_counted grep -qE "rx_ethq_frames +[1-9]" /tmp/eng.txt
check netdev_fw_tx_counted grep -qE "tx_ethq_frames +[1-9]" /tmp/eng.txt
check netdev_fw_no_dma_errors grep -qE "ethq_dma_errors +0\$" /tmp/eng.txt
check netdev_mtu_busy_while_up eval '! ip link set mnic0 mtu 2000 2>/dev/null'
# The objects (mnic_ib_mr.c, mnic_ib_cq.c, mnic_ib_qp.c) with the
# driver-private udata of mnic/ib_abi.h, the doorbell page's mmap, the
# hostile variants, and a close that frees all (checks ib_objects_*).
check ib_verbs_objects mnic-ib-check objects mnic0 \$D
# The migration methods (mnic_ib_mig.c, the CRIU plugin's): DUMP's image
# and table, ABORT, hostile RESTOREs, the restore shells and their
# refusals, RESUME (checks ib_mig_*).
check ib_verbs_mig mnic-ib-check mig mnic0 \$D
# The rdma-core provider (hostdrv/provider/, libmnic-rdmav34.so with
# /etc/libibverbs.d/mnic.driver) under Debian's libibverbs 44: unmodified
# ibv_devices and ibv_devinfo see mnic0 and its attributes, and
# mnic-verbs-check (tests/tools/) drives every verb it serves
# (checks ib_verbs_provider_*).
fwstr="\$((fwv >> 24)).\$(((fwv >> 16) & 255)).\$((fwv & 65535))"
ibv_devices > /tmp/ibv.devices 2>&1; sed 's/^/  ibv_devices: /' /tmp/ibv.devices
check ib_verbs_ibv_devices grep -q "^ *mnic0 " /tmp/ibv.devices
ibv_devinfo -d mnic0 > /tmp/ibv.devinfo 2>&1; sed 's/^/  ibv_devinfo: /' /tmp/ibv.devinfo
check ib_verbs_ibv_devinfo_vendor grep -q "vendor_id:.*0x1af4" /tmp/ibv.devinfo
check ib_verbs_ibv_devinfo_fw grep -q "fw_ver:.*\$fwstr\$" /tmp/ibv.devinfo
check ib_verbs_ibv_devinfo_port grep -q "state:.*PORT_ACTIVE" /tmp/ibv.devinfo
check ib_verbs_ibv_devinfo_ethernet grep -q "link_layer:.*Ethernet" /tmp/ibv.devinfo
check ib_verbs_provider mnic-verbs-check mnic0 "\$fwstr"
# The health buffer through the ioctl backend's init-segment mapping: live.
hbj=\$(mnicctl -d \$D --json health | sed -n 's/.*"heartbeat": *\([0-9]*\).*/\1/p')
check mnicctl_health_heartbeat test "\${hbj:-0}" -gt 0
# Objects belong to the open file that created them (its firmware
# context): each mnicctl is a process of its own, and what it created is
# gone when it exits.
check create_pd mnicctl -d \$D create pd
check create_cq mnicctl -d \$D create cq 64
check qp_list mnicctl -d \$D qp list
check tenancy_objects_die_with_file mnic-tenancy-check empty \$D

# The server listens on the VM's loopback only (mnic-pingpong's network
# hygiene); a busybox relay on eth0:18516 (the hostfwd target) reaches it.
# One round per buffer kind, each announced by its tag (the host's client
# answers it): mnic_alloc (libmnic's own memory, as before), then buffers
# libmnic did not allocate, registered as they are (IOVA = VA, pinned by
# the module): a file on this tmpfs mmap'ed MAP_SHARED, the heap, main's stack.
nc -ll -p 18516 -e nc 127.0.0.1 18515 &
relay=\$!
ppserve() {   # check-name tag iterations [mnic-pingpong options]  (check() owns \$n)
  pp_name=\$1; pp_tag=\$2; pp_it=\$3; shift 3
  mnic-pingpong -d \$D -p 18515 -n \$pp_it -s $SIZE --verify -T 90 "\$@" > /tmp/pp-\$pp_tag.log 2>&1 &
  pp=\$!
  echo "KMOD-PINGPONG-SERVER \$pp_tag"
  rc=0; wait \$pp || rc=\$?
  sed "s/^/  server \$pp_tag: /" /tmp/pp-\$pp_tag.log
  check \$pp_name eq "\$rc" 0
  [ \$pp_tag = mnic_alloc ] && return
  check \${pp_name}_verified grep -q "^data verified: \$pp_it messages received, every byte" /tmp/pp-\$pp_tag.log
  check \${pp_name}_buffer grep -q "^  MR memory: \$pp_tag, $((2 * SIZE)) bytes at 0x" /tmp/pp-\$pp_tag.log
}
ring0=\$(cat \$C/ring_data)
ppserve pingpong mnic_alloc $ITERS
# libmnic rang the NIC's Doorbell register after its data-path stores
# (MNIC_IOC_RING; the mapped doorbell page holds no register)
check doorbell_irq_pingpong_rang test "\$(( \$(cat \$C/ring_data) - ring0 ))" -ge $ITERS
ppserve pingpong_mr_file file $MR_ITERS --mr-mem file=/tmp/pp-mr.buf
# The NIC wrote the host's last message into the file's page cache: byte 1
# of the receive half is the client's (side 1) pattern of the last iteration
# (mnic-pingpong.c pattern(): off 31 + iter 7 + side 101 + off >> 8).
check pingpong_mr_file_size eq "\$(stat -c %s /tmp/pp-mr.buf)" $((2 * SIZE))
check pingpong_mr_file_holds_last_message eq "\$(od -An -tu1 -j1 -N1 /tmp/pp-mr.buf | tr -d ' ')" \
  $(( (31 + (MR_ITERS - 1) * 7 + 101) & 255 ))
ppserve pingpong_mr_heap heap $MR_ITERS --mr-mem heap
ppserve pingpong_mr_stack stack $MR_ITERS --mr-mem stack
# Unmodified ibv_rc_pingpong on mnic0 through the provider (its data path
# in this process: WQEs, CQ polling, db_seq), RoCEv2 from the GID of
# mnic0's address 10.0.7.1 (the firmware's own), against the host's
# mnic-pingpong on the POSIX NIC (ibv_rc_pingpong's exchange and -c).
# modify_qp to RTR resolves the peer's MAC in the kernel: a static
# neighbour, as the POSIX NIC's host (libmnic) answers no ARP (checks
# ib_verbs_rc_pingpong_*).
ip addr show dev mnic0 | grep -q "inet 10.0.7.1/" || ip addr add 10.0.7.1/24 dev mnic0
arp -i mnic0 -s 10.0.7.2 $MAC_P      # busybox: permanent (ip neigh has show/flush only)
check ib_verbs_rc_gid waitgid 0000:0000:0000:0000:0000:ffff:0a00:0701
rgi=\$(gidindex 0000:0000:0000:0000:0000:ffff:0a00:0701)
check ib_verbs_rc_rtr_rts mnic-verbs-check rtr mnic0 \${rgi:-0} 10.0.7.2
# ibv_devinfo -v (libibverbs' ibv_query_gid_ex through the provider's
# context) lists the RoCEv2 GID of mnic0's address
ibv_devinfo -v -d mnic0 > /tmp/ibv.devinfo-v 2>&1; grep "GID\[" /tmp/ibv.devinfo-v | sed 's/^/  ibv_devinfo -v: /'
check ib_verbs_ibv_devinfo_gid grep -qE "GID\[ *\${rgi:-x}\]:.*::ffff:10\.0\.7\.1, RoCE v2" /tmp/ibv.devinfo-v
ibvserve() {   # tag size iterations [ibv_rc_pingpong options]
  ibv_tag=\$1; ibv_sz=\$2; ibv_n=\$3; shift 3
  ibv_rc_pingpong -d mnic0 -g \${rgi:-0} -p 18515 -s \$ibv_sz -m 1024 -n \$ibv_n -c "\$@" > /tmp/ibvpp-\$ibv_tag.log 2>&1 &
  pp=\$!
  echo "KMOD-PINGPONG-SERVER \$ibv_tag"
  rc=0; wait \$pp || rc=\$?
  sed "s/^/  ibv_rc_pingpong \$ibv_tag: /" /tmp/ibvpp-\$ibv_tag.log
  check ib_verbs_rc_pingpong_\$ibv_tag eq "\$rc" 0
  [ \$rc = 0 ] || { arp -n -i mnic0 -a; ip route; for c in ib_refused_qp_attr ib_refused_udata cmd_ok cmds; do echo "  \$c = \$(cat \$C/\$c)"; done; dmesg | tail -5; }
  check ib_verbs_rc_pingpong_\${ibv_tag}_iters grep -q "^\$ibv_n iters in" /tmp/ibvpp-\$ibv_tag.log
}
ibvserve 1b 1 $IBV_ITERS
ibvserve 4k 4096 $IBV_ITERS
# -e: ibv_rc_pingpong sleeps on its completion channel (ibv_req_notify_cq
# arms the CQ in its record; the firmware writes an EQE and raises MSI-X
# vector 2, whose handler has mnic.ko read the EQ and wake the channel:
# counters ib_events, ib_eq_irqs; the A15 NIC is an ivshmem-doorbell, so
# the jiffy poll of the EQs never runs: ib_eq_polls stays 0)
ev0=\$(cat \$C/ib_events); eqirq0=\$(cat \$C/ib_eq_irqs)
check ib_verbs_eq_msix grep -q "mnic-eq@" /proc/interrupts
ibvserve 4k_events 4096 $IBV_ITERS -e
check ib_verbs_rc_pingpong_events_counted test "\$(( \$(cat \$C/ib_events) - ev0 ))" -gt 0
check ib_verbs_rc_pingpong_events_msix test "\$(( \$(cat \$C/ib_eq_irqs) - eqirq0 ))" -gt 0
check ib_verbs_rc_pingpong_events_not_polled eq "\$(cat \$C/ib_eq_polls)" 0
check ib_verbs_rc_pingpong_no_event_dropped eq "\$(cat \$C/ib_event_dropped)" 0
# Hostile: ibv_rc_pingpong killed (SIGKILL) mid-traffic: its uverbs file
# closes with an RTS QP moving data, so the core destroys the QP in use,
# its CQ, MRs and PD, and the context goes; the firmware keeps nothing,
# every page pinned is unpinned, none orphaned or leaked, and no oops
# (the dmesg check at the end).
pin0=\$(cat \$C/mem_pages_pinned); unpin0=\$(cat \$C/mem_pages_unpinned)
ibv_rc_pingpong -d mnic0 -g \${rgi:-0} -p 18515 -s 4096 -m 1024 -n 1000000 > /tmp/ibvpp-kill.log 2>&1 &
pp=\$!
echo "KMOD-PINGPONG-SERVER kill"
# (its stdout is a file, so buffered until exit: the QP's state says it
# connected, mnicctl as root lists every QP of the NIC)
rts() { mnicctl -d \$D qp list > /tmp/qps.kill 2>&1; grep -q "^qp 0x[0-9a-f]*  RTS " /tmp/qps.kill; }
i=0; while [ \$i -lt 60 ] && ! rts; do sleep 0.5; i=\$((i + 1)); done
check ib_verbs_kill_mid_traffic_was_connected rts
sleep 2
dealloc0=\$(cat \$C/ctx_dealloc)   # (each mnicctl above had a context of its own)
kill -9 \$pp; wait \$pp 2>/dev/null
sed "s/^/  ibv_rc_pingpong kill: /" /tmp/ibvpp-kill.log /tmp/qps.kill
check ib_verbs_kill_frees_context eq "\$(cat \$C/ctx_dealloc)" \$((dealloc0 + 1))
check ib_verbs_kill_unpins_all eq "\$(( \$(cat \$C/mem_pages_pinned) - pin0 ))" "\$(( \$(cat \$C/mem_pages_unpinned) - unpin0 ))"
check ib_verbs_kill_nothing_orphaned eq "\$(cat \$C/ib_pages_orphaned) \$(cat \$C/ib_pages_leaked)" "0 0"
check ib_verbs_kill_nic_empty mnic-tenancy-check empty \$D
echo "KMOD-PINGPONG-KILLED"
kill \$relay
# Host-physical DMA: the host's mnic-rw (POSIX NIC) RDMA WRITEs into,
# READs from and FETCH_AND_ADDs in a malloc'ed 64 MiB buffer registered
# here (MNIC_IOC_REG_MEM);
# the A15 NIC, responder, translates every packet through the MTT into
# this VM's RAM.  Its READY line tells the host to start.
check hostmem_rdma_write_read mnic-rw-kmod \$D 18517 $RW_LEN $MAC_P

# devlink (hostdrv/kernel/mnic_devlink.c): the instance of the PCI function.
BDF=\$(basename "\$(readlink /sys/class/misc/mnic0/device)"); DL=pci/\$BDF
devlink dev show > /tmp/dl.list 2>&1
check devlink_dev_listed grep -qx "\$DL" /tmp/dl.list
# info: one JSON object; versions by group ({"fixed":{...},"running":{...},"stored":{...}})
dlinfo() { devlink -j dev info \$DL > /tmp/dl.json 2>&1 || return 1; cat /tmp/dl.json; }
group() { grep -o "\"\$1\":{[^}]*}" /tmp/dl.json; }
has() { case "\$1" in *"\$2"*) return 0 ;; esac; echo "  '\$2' not in '\$1'"; return 1; }
check devlink_info dlinfo
sed 's/^/  /' /tmp/dl.json; echo
check devlink_info_driver has "\$(cat /tmp/dl.json)" '"driver":"mnic"'
check devlink_info_serial has "\$(cat /tmp/dl.json)" '"serial_number":"$(echo $MAC_A | tr -d :)"'
check devlink_info_board has "\$(group fixed)" '"board.id":"1","board.name":"qemu-virt-a15"'
check devlink_info_running has "\$(group running)" '"fw":"1.0.0+1"'
check devlink_info_api has "\$(group running)" '"fw.mgmt.api":"$rev"'
check devlink_info_stored has "\$(group stored)" '"fw.slot_a":"1.0.0+1","fw":"1.0.0+1"'
check devlink_info_slot_b_empty eq "\$(group stored | grep -c slot_b)" 0
# A good image: streamed into slot B and verified; the NIC runs on 1.0.0+1.
devlink dev flash \$DL file mnic/good.img > /tmp/fl.out 2>&1; rc=\$?
tr '\r' '\n' < /tmp/fl.out | sed 's/^/  /'
check devlink_flash_good eq "\$rc" 0
check devlink_flash_progress grep -q "Flashing" /tmp/fl.out
check devlink_flash_verified grep -q "Slot B written and verified" /tmp/fl.out
dlinfo > /dev/null
check devlink_flash_good_stored has "\$(group stored)" '"fw.slot_a":"1.0.0+1","fw.slot_b":"1.1.0+2","fw":"1.0.0+1"'
check devlink_flash_good_running has "\$(group running)" '"fw":"1.0.0+1"'
check devlink_flash_ok_counted eq "\$(cat \$C/flash_ok)" 1
# A corrupt image: the driver's digest check refuses it, nothing is sent
# (as for the next two).
c1=\$(cat \$C/cmds)
devlink dev flash \$DL file mnic/corrupt.img > /tmp/fl.out 2>&1; rc=\$?
sed 's/^/  /' /tmp/fl.out
check devlink_flash_corrupt_refused test "\$rc" -ne 0
check devlink_flash_corrupt_reason grep -q "SHA-256 digest mismatch (corrupt image)" /tmp/fl.out
# Two more of the driver's checks: a file cut short, bytes after the image.
refuse() {
  devlink dev flash \$DL file mnic/\$1.img > /tmp/fl.out 2>&1 && { echo "  \$1.img accepted"; return 1; }
  sed 's/^/  /' /tmp/fl.out; grep -q "\$2" /tmp/fl.out
}
check devlink_flash_truncated_refused refuse truncated "image truncated: shorter than its header says"
check devlink_flash_trailing_refused refuse trailing "bytes after the image"
check devlink_flash_refused_not_sent eq "\$(cat \$C/cmds)" "\$c1"
check devlink_flash_refused_image_counted eq "\$(cat \$C/flash_refused_image)" 3
# Another board's image passes the driver's checks; the NIC refuses it at
# FW_FLASH_BEGIN, and the extack and the log say so with its status.
devlink dev flash \$DL file mnic/a72.img > /tmp/fl.out 2>&1; rc=\$?
tr '\r' '\n' < /tmp/fl.out | sed 's/^/  /'
check devlink_flash_fw_refused test "\$rc" -ne 0
check devlink_flash_fw_refused_status grep -q "the NIC refused the image: MNIC_CMD_STAT_BAD_PARAM" /tmp/fl.out
dmesg | grep "FW_FLASH_BEGIN refused by the NIC" > /tmp/fl.log
sed 's/^/  /' /tmp/fl.log
check devlink_flash_fw_refused_syndrome grep -q "status BAD_PARAM (0x3), syndrome 0x0016$(printf %04x $((0x100 + board_check))): errno 22, site $board_site" /tmp/fl.log
check devlink_flash_fw_refused_counted eq "\$(cat \$C/flash_refused_fw)" 1
dlinfo > /dev/null
check devlink_flash_refusals_kept_slots has "\$(group stored)" '"fw.slot_a":"1.0.0+1","fw.slot_b":"1.1.0+2","fw":"1.0.0+1"'
check devlink_flash_refusals_fw_alive mnicctl -d \$D info
# Unsigned, on a board that enforces signatures: the driver sends it (it
# checks no signature), the NIC refuses it at FW_FLASH_END and devlink
# names the device's check; the NIC keeps running its signed 1.0.0+1.
devlink dev flash \$DL file mnic/unsigned.img > /tmp/fl.out 2>&1; rc=\$?
tr '\r' '\n' < /tmp/fl.out | sed 's/^/  /'
check devlink_flash_unsigned_refused test "\$rc" -ne 0
check devlink_flash_unsigned_reason grep -q "not signed, and this board has a key provisioned" /tmp/fl.out
check devlink_flash_unsigned_counted eq "\$(cat \$C/flash_refused_fw)" 2
dlinfo > /dev/null
check devlink_flash_unsigned_running has "\$(group running)" '"fw":"1.0.0+1"'
check devlink_flash_unsigned_fw_alive mnicctl -d \$D info
# The health reporter "fw": healthy; then the host stops the NIC's QEMU
# (the heartbeat stalls) until the reporter has seen it, then lets it go on.
hshow() { devlink health show \$DL reporter fw > /tmp/h.out 2>&1; cat /tmp/h.out; }
waitfor() { i=0; while [ \$i -lt \$1 ]; do hshow | grep -q "\$2" && return 0; sleep 1; i=\$((i + 1)); done; cat /tmp/h.out; return 1; }
check devlink_health_show_healthy waitfor 1 "state healthy error 0"
devlink health diagnose \$DL reporter fw > /tmp/h.diag 2>&1
sed 's/^/  /' /tmp/h.diag
check devlink_health_diagnose_cause grep -q "cause: none" /tmp/h.diag
check devlink_health_diagnose_state grep -q "state: ready" /tmp/h.diag
check devlink_health_diagnose_heartbeat grep -q "heartbeat: [1-9]" /tmp/h.diag
echo KMOD-HEALTH-STALL
check devlink_health_stall_reported waitfor 60 "state error error 1"
# The netdev's carrier follows the firmware: off while its loop is stopped.
check netdev_carrier_off_on_stall waitval \$N/carrier 0 10
echo KMOD-HEALTH-SEEN
check devlink_health_recovered waitfor 60 "state healthy error 1"
check netdev_carrier_back waitval \$N/carrier 1 10
check netdev_carrier_counted eq "\$(cat \$C/net_carrier_off) \$(cat \$C/net_carrier_on)" "1 2"
sed 's/^/  /' /tmp/h.out
devlink health dump show \$DL reporter fw > /tmp/h.dump 2>&1
sed 's/^/  /' /tmp/h.dump
check devlink_health_dump_cause grep -q "cause: firmware heartbeat stalled" /tmp/h.dump
check devlink_health_dump_buffer grep -q "health_buffer:" /tmp/h.dump
check devlink_health_counted eq "\$(cat \$C/health_reports) \$(cat \$C/health_recovered)" "1 1"
check devlink_fw_alive_after_stall mnicctl -d \$D info

# An application checkpoints itself, unprivileged (nobody): DUMP_CONTEXT
# of its own context through the ioctl, the image read back by mnicctl.
check tenancy_self_checkpoint mnic-tenancy-check selfdump \$D /tmp/ctx.img
mnicctl image show /tmp/ctx.img > /tmp/img.txt 2>&1; rc=\$?
sed 's/^/  /' /tmp/img.txt
check image_show eq "\$rc" 0
check mnicctl_counters mnicctl -d \$D counters --mgmt
for f in \$C/*; do echo "  counters/\${f##*/} = \$(cat \$f)"; done
check cmds_issued test "\$(cat \$C/cmds)" -gt 10
# Commands rang the NIC's Doorbell register and were answered on MSI-X.
check doorbell_irq_rings test "\$(cat \$C/irq_rings)" -gt 10
check doorbell_irq_msix_taken test "\$(cat \$C/irq_cmd)" -gt 10
check doorbell_irq_proc_interrupts grep -q "mnic-cmd@" /proc/interrupts
check cmds_all_ok eq "\$(cat \$C/cmd_ok)" "\$(cat \$C/cmds)"
check no_timeouts eq "\$(cat \$C/cmd_timeout)" 0
check no_refusals eq "\$(cat \$C/refused_struct)\$(cat \$C/refused_len)\$(cat \$C/refused_opcode)" 000
check netdev_no_queue_failures eq "\$(cat \$C/net_queue_failed) \$(cat \$C/net_queue_leaked)" "0 0"
check contexts_all_freed eq "\$(cat \$C/ctx_dealloc_failed) \$(cat \$C/ctx_dealloc)" "0 \$(cat \$C/ctx_alloc)"
# Tenancy (hostdrv/kernel/test/mnic_tenancy_check.c): nobody vs root on the
# privileged set; two tenants that cannot reach each other's objects or
# memory; a SIGKILLed tenant leaves nothing.
check tenancy_privileged_set mnic-tenancy-check priv \$D
check tenancy_two_tenants mnic-tenancy-check isolate \$D
check tenancy_sigkill mnic-tenancy-check sigkill \$D
check tenancy_nic_empty mnic-tenancy-check empty \$D
# Host memory (hostdrv/kernel/test/mnic_mem_check.c): registration
# refusals, the tenant's page lists refused; 64 MiB of heap and an mmap'ed
# file pinned into MRs, rings, every pin back on dereg and close.
check hostmem_reg_hostile mnic-mem-check hostile \$D
check hostmem_reg mnic-mem-check reg \$D
# libmnic over it: mnic_reg_mr of a PROT_READ mapping for LOCAL_WRITE and
# of a range with a hole, refused by the module (its pin counter) with its
# reason in libmnic's message, nothing left pinned; a heap buffer still
# registers (tests/tools/mnic-tenant.c badmr).
pin0=\$(cat \$C/reg_refused_pin)
check hostmem_reg_mr_refused mnic-tenant badmr \$D
check hostmem_reg_mr_refusals_counted eq "\$(cat \$C/reg_refused_pin)" \$((pin0 + 2))
check hostmem_nic_empty mnic-tenancy-check empty \$D
# Hostile caller: malformed ioctls and mmaps refused and counted, valid
# commands (mailbox chains, 4 threads) still right (hostdrv/kernel/test/).
check ioctl_hostile mnic-ioctl-check \$D
# MNIC_IOC_RING reached the NIC's Doorbell register (an ivshmem-doorbell BAR)
check doorbell_irq_ring_ioctl test "\$(cat \$C/ring_data)" -ge 1
check fw_alive_after mnicctl -d \$D info
check unbind_open_file mnic-ioctl-check --unbind \$D
check rebound_info mnicctl -d \$D info
check devlink_rebound devlink dev info \$DL
# Unbind under a uverbs file with a context and a PD: disassociated, the
# firmware keeps nothing, the RDMA device is back after the rebind.
check ib_device_unbind_open_file mnic-ib-check unbind mnic0 \$D
check ib_device_rebound eq "\$(cat \$IB/ports/1/state)" "4: ACTIVE"
check netdev_rebound test -d \$N
check netdev_rebound_ib_bound eq "\$(cat \$IB/ports/1/gid_attrs/ndevs/0)" mnic0
# remove freed the context of the file it outlived.
check tenancy_rebound_nic_empty mnic-tenancy-check empty \$D

check rmmod rmmod mnic
check dev_gone test ! -e \$D
check devlink_gone_after_rmmod eq "\$(devlink dev show | grep -c "\$DL")" 0
check ib_device_gone_after_rmmod test ! -e \$IB
check ib_device_uverbs_gone_after_rmmod test ! -e /dev/infiniband/uverbs0
check netdev_gone_after_rmmod test ! -e \$N
check reinsmod insmod /lib/mnic.ko
check reprobe_dev_node test -c \$D
check ib_device_reprobe eq "\$(cat \$IB/ports/1/state)" "4: ACTIVE"
check netdev_reprobe eq "\$(cat \$N/address)" $MAC_A
check reprobe_info mnicctl -d \$D info
check rmmod_again rmmod mnic
finish
INIT

"$root/tests/vm/mkinitramfs.sh" -o "$out/initrd.gz" --kver "$kver" --init "$out/init" \
  --modules "virtio_net virtio_pci ib_uverbs" \
  --bins "$pingpong $tenant $devlink $rdma $iproute_ip $verbs_check $(command -v ibv_devices) $(command -v ibv_devinfo) $(command -v ibv_rc_pingpong)" \
  --files "$(for i in good corrupt truncated trailing a72 unsigned; do printf '%s ' "$fwdir/$i.img:/lib/firmware/mnic/$i.img"; done)$ko:/lib/mnic.ko $mnicctl:/bin/mnicctl $ioctl_check:/bin/mnic-ioctl-check $tenancy_check:/bin/mnic-tenancy-check $mem_check:/bin/mnic-mem-check $ib_check:/bin/mnic-ib-check $rw_kmod:/bin/mnic-rw-kmod $provider_so:/usr/lib/x86_64-linux-gnu/libibverbs/libmnic-rdmav34.so $provider_driver:/etc/libibverbs.d/mnic.driver"

# Two more ivshmem devices, probed before the NIC's: one with no init
# segment (some other ivshmem user: left alone without a word) and one with
# the magic but another command-interface revision (refused, with a message).
truncate -s 16M "$out/other.bar"
python3 - "$out/oldrev.bar" "$rev" <<'PY'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.truncate(16 << 20)
    f.write(struct.pack("<IIIII", 0x43494E4D, 1 << 16, int(sys.argv[2]) - 1, 1, 2))
PY

# ---- boot; the host plays the ping-pong client when the server is up
start=$(date +%s)
"$root/tests/vm/vm.sh" --kver "$kver" --initrd "$out/initrd.gz" --ivshmem "$out/other.bar" \
  --ivshmem "$out/oldrev.bar" --ivshmem "$out/a15.bar" --mem $VM_MEM_MIB --ram-file "$out/vm.ram" \
  --vde "$out/sw" --mac $MAC_PEER --pcap "$out/peer.pcap" \
  --hostfwd "$port:18516" --hostfwd "$rw_port:18517" --log "$out/vm.log" --append "loglevel=4" >"$out/qemu.log" 2>&1 &
vm=$!; mnic_track $vm
# GPA = file offset: the page the VM names holds its pattern at that
# offset of vm.ram; the host answers with ~pattern in the page's word 1.
gpa_rc=1
if mnic_wait_line "$out/vm.log" "^MEM-GPA " 150 $vm; then
  gpa_rc=0
  python3 - "$out/vm.ram" "$(grep -m1 '^MEM-GPA ' "$out/vm.log" | tr -d '\r')" <<'PY' || gpa_rc=$?
import re, struct, sys
m = re.search(r"gpa=0x([0-9a-f]+) pattern=0x([0-9a-f]+) words=(\d+)", sys.argv[2])
gpa, pat, n = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
with open(sys.argv[1], "r+b") as f:
    f.seek(gpa)
    got = struct.unpack("<%dQ" % n, f.read(8 * n))
    want = [(pat ^ (i * 0x9e3779b97f4a7c15)) & (2**64 - 1) for i in range(n)]
    if list(got) != want:
        bad = next(i for i in range(n) if got[i] != want[i])
        print("host: vm.ram at 0x%x word %d holds 0x%016x, want 0x%016x" % (gpa, bad, got[bad], want[bad]))
        sys.exit(1)
    f.seek(gpa + 8)
    f.write(struct.pack("<Q", ~pat & (2**64 - 1)))
print("host: vm.ram at GPA 0x%x holds the VM's page; answered" % gpa)
PY
fi
# The host's client of each ping-pong round the VM serves (its tag: where
# the VM's buffer lives), with the server's iteration count.
pp_client() {   # tag iterations
  local rc=1 try
  mnic_wait_line "$out/vm.log" "^KMOD-PINGPONG-SERVER $1" 150 $vm ||
    { echo "no ping-pong server '$1' in the VM" >"$out/client-$1.log"; return 1; }
  # The server listens once its objects exist; until then the forwarded
  # connection is refused inside the VM and the client exits: retry.
  for try in $(seq 30); do
    rc=0
    timeout 120 "$pingpong" -d "$out/posix.bar" -p "$port" -n "$2" -s "$SIZE" ${PP_CHECK:---verify} -T 90 \
      127.0.0.1 >"$out/client-$1.log" 2>&1 || rc=$?
    [ $rc = 0 ] && break
    grep -qiE "connect|exchange|read|socket" "$out/client-$1.log" || break
    echo "client $1 try $try: $(tail -1 "$out/client-$1.log")"
    sleep 1
  done
  return $rc
}
client_failed=
for round in "mnic_alloc $ITERS" "file $MR_ITERS" "heap $MR_ITERS" "stack $MR_ITERS"; do
  read -r tag n <<<"$round"
  pp_client "$tag" "$n" || client_failed="$client_failed $tag"
done
# The rounds of unmodified ibv_rc_pingpong in the VM (ibv_rc_pingpong's
# own check, -c): the same client, its size and MTU.
for round in "1b 1" "4k 4096" "4k_events 4096"; do
  read -r tag sz <<<"$round"
  SIZE=$sz PP_CHECK=-c pp_client "$tag" "$IBV_ITERS" || client_failed="$client_failed ibv_$tag"
done
# The round the VM kills mid-traffic: one client, which fails once its
# peer is gone (a short completion timeout); its exit status is not
# checked, the VM checks what the kill left.
if mnic_wait_line "$out/vm.log" "^KMOD-PINGPONG-SERVER kill" 150 $vm; then
  for try in $(seq 20); do
    rc=0
    timeout 60 "$pingpong" -d "$out/posix.bar" -p "$port" -n 1000000 -s 4096 -T 5 \
      127.0.0.1 >"$out/client-kill.log" 2>&1 || rc=$?
    grep -q "^  remote address:" "$out/client-kill.log" && break
    sleep 1
  done
  mnic_wait_line "$out/vm.log" "^KMOD-PINGPONG-KILLED" 120 $vm || true
fi
# The RDMA WRITE/READ into the VM's registered memory, once its passive
# side listens (a port of its own: a ping-pong client still retrying must
# not reach it).
rw_rc=1
if mnic_wait_line "$out/vm.log" "^KMOD-RW-READY" 240 $vm; then
  rw_rc=0
  MNIC_CTX_MEM=$((4 * RW_LEN)) timeout 150 "$mnic_rw" --dev "$out/posix.bar" --connect "127.0.0.1:$rw_port" --dmac $MAC_A \
    --timeout 120 --atomic >"$out/rw.log" 2>&1 || rw_rc=$?
  grep -q "^MNIC-RW PASS .* atomic=SUCCESS" "$out/rw.log" || rw_rc=1
fi
# The health reporter's check: the NIC's QEMU stopped (its heartbeat
# stalls) from the VM's STALL line until its SEEN line (or 90 s), always
# continued.
stall=0
if mnic_wait_line "$out/vm.log" "^KMOD-HEALTH-STALL" 240 $vm; then
  kill -STOP $a15; stall=1
  mnic_wait_line "$out/vm.log" "^KMOD-HEALTH-SEEN" 90 $vm || true
  kill -CONT $a15
fi
mnic_wait_pid $vm 240
vm_rc=$MNIC_RC
echo "VM ran $(( $(date +%s) - start )) s (exit $vm_rc, accel: $(cat "$root/build/vm/accel-vmlinuz-$kver" 2>/dev/null || echo '?'))"

# ---- verdict
sed 's/^/  vm: /' "$out/vm.log" | grep -v "^  vm: \[" | grep -vE "KMOD-DMESG|^  vm: *$" || true
for tag in mnic_alloc file heap stack; do
  [ ! -f "$out/client-$tag.log" ] || sed "s/^/  host client $tag: /" "$out/client-$tag.log"
done
[ ! -f "$out/rw.log" ] || sed 's/^/  host mnic-rw: /' "$out/rw.log"
fail=0
grep -q "^KMOD-VM-DONE fails=0" "$out/vm.log" || { echo "FAIL: the VM did not finish all checks"; fail=1; }
if grep -q "KMOD-CHECK .* FAIL" "$out/vm.log"; then
  grep "KMOD-CHECK .* FAIL" "$out/vm.log"; fail=1
fi
[ -z "$client_failed" ] || { echo "FAIL: host ping-pong client failed in round(s):$client_failed"; fail=1; }
[ "$bar_refusals" = ok ] || { echo "FAIL: the host's BAR backend: $bar_refusals"; fail=1; }
[ $stall = 1 ] || { echo "FAIL: the VM never asked for the heartbeat stall"; fail=1; }
[ $rw_rc = 0 ] || { echo "FAIL: host mnic-rw (RDMA WRITE/READ into the VM's registered memory) exited $rw_rc"; fail=1; }
[ $gpa_rc = 0 ] || { echo "FAIL: GPA = file offset not confirmed by the host (vm.ram)"; fail=1; }
# ib_umem_get (MRs, rings) is ib_uverbs': a hard dependency now.
case ",$ko_depends," in *,ib_core,*) ;; *) ko_depends="$ko_depends (no ib_core)";; esac
case ",$ko_depends," in *,ib_uverbs,*) [ -z "$ko_softdep" ] ;; *) false;; esac ||
  { echo "FAIL: ib_device_module_deps: modinfo depends '$ko_depends', softdep '$ko_softdep'"; fail=1; }
# What the netdev's peer received from mnic0 (through the A15 NIC's
# firmware and the switch), in its capture: ARP, ICMP and TCP from the
# init segment's MAC, nothing tshark finds malformed.
heur=()
for h in rpcrdma_infiniband smb_direct_infiniband iser_infiniband lnet_ib sdp_infiniband \
         eth_over_ib smcr_infiniband fc_infiniband; do heur+=(--disable-heuristic "$h"); done
pc() { tshark "${heur[@]}" -r "$out/peer.pcap" -Y "$1" 2>/dev/null | wc -l; }
if [ -s "$out/peer.pcap" ]; then
  arp=$(pc "eth.src == $MAC_A && arp"); icmp=$(pc "eth.src == $MAC_A && icmp")
  tcp=$(pc "eth.src == $MAC_A && ip.src == 10.0.7.1 && tcp"); bad=$(pc "_ws.malformed")
  echo "netdev capture: from mnic0 arp=$arp icmp=$icmp tcp=$tcp; malformed=$bad ($out/peer.pcap)"
  [ "$arp" -ge 1 ] && [ "$icmp" -ge 3 ] && [ "$tcp" -ge 100 ] && [ "$bad" = 0 ] ||
    { echo "FAIL: netdev_capture: the peer's capture does not hold mnic0's ARP, ICMP and TCP, or has malformed frames"; fail=1; }
else
  echo "FAIL: netdev_capture: no capture $out/peer.pcap"; fail=1
fi
sed -n '/^KMOD-DMESG-BEGIN/,/^KMOD-DMESG-END/p' "$out/vm.log" > "$out/dmesg.txt"
[ -s "$out/dmesg.txt" ] || { echo "FAIL: no dmesg from the VM"; fail=1; }
if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
     "$out/dmesg.txt"; then
  echo "FAIL: kernel warnings in the VM's dmesg (above; full log $out/vm.log)"; fail=1
fi
grep "mnic" "$out/dmesg.txt" | sed 's/^/  dmesg: /'
n=$(grep -c "KMOD-CHECK .* PASS" "$out/vm.log" || true)
if [ $fail = 0 ]; then echo "KMOD VM PASS checks=$n"; else echo "KMOD VM FAIL checks_passed=$n"; exit 1; fi
