#!/usr/bin/env bash
# Unmodified rdma-core ibv_rc_pingpong and perftest on the mnic RDMA device,
# mnic <-> mnic and mnic <-> Linux SoftRoCE, all ends in x86_64 Debian VMs
# booted once, in parallel, on one switch (issue 16):
#
#   switch --- POSIX NIC A (nica.bar; aperture a.ram) <-ivshmem-> mnic VM A
#         |--- POSIX NIC B (nicb.bar; aperture b.ram) <-ivshmem-> mnic VM B
#         \--- rxe VM (virtio-net on the switch): rdma_rxe
#
# A mnic VM runs mnic.ko and the provider libmnic-rdmav34.so on its NIC,
# whose host-memory aperture is the VM's RAM (qemu-board/nic.sh --hostmem,
# tests/vm/vm.sh --ram-file): the provider's rings and the programs'
# buffers are pinned by mnic.ko into MTTs, the data path runs in the VM's
# user space.  Every port takes RoCEv2 frames of path MTU 4096: mnic0's
# and eth0's MTU 4200 (mnic0's active_mtu follows its netdev), the POSIX
# NICs take jumbo frames.
#
# ibv_rc_pingpong -c (every received buffer checked), one run per line of
# a matrix that has each size (1 B, 4 KiB, 64 KiB), each path MTU (1024,
# 4096), each pairing (mnic-rxe, mnic-mnic), each role of mnic0 against
# rxe and -e (completion events) on a mnic server and a mnic client, but
# not the cross product.  perftest ib_write_bw, ib_read_bw, ib_send_bw
# (4 KiB), ib_atomic_bw (FETCH_AND_ADD) and ib_send_lat, ib_write_lat,
# ib_read_lat (64 B) mnic A <-> mnic B and mnic A <-> rxe (ib_write_bw and
# ib_send_lat in both roles), each completing its iterations on both ends.
# The verified verbs workload (ibv-traffic) mnic <-> mnic and mnic <-> rxe
# in both roles.  No static neighbour anywhere: the programs' out-of-band
# TCP exchange runs over mnic0 itself (the netdev: ARP, IPv4, TCP through
# the firmware's Ethernet rings) to the server's 10.0.9.x address, and the
# kernel resolves each QP's destination MAC by ARP over the same path.
# The VMs' restricted user nets carry only the control channel.
# Both NICs' captures decode in tshark with no malformed frame; the mnic
# VMs' dmesg have no WARNING/BUG/Oops.
#
# Doorbells: each POSIX NIC serves its VM through an ivshmem-doorbell
# (qemu-board/nic.sh --bar-kind doorbell, hal/posix/ivsh_peer.c) and polls
# its BAR once a second only (db_min_us = db_max_us = 1000000): mnic.ko
# rings it after commands and transmits, the provider through the
# Doorbell register page mnic.ko maps into every ucontext (ib_uar; BAR0
# has a page of its own, tests/vm/vm.sh), after each post and arm, and the
# NIC interrupts the VM (MSI-X) for commands, Ethernet and completion
# events.  Hundreds of exchanges per run finishing in seconds were rung,
# not found by the poll.
#
#   IBV_VM_ITERS=100 (per ibv_rc_pingpong run), IBV_VM_PERF_ITERS=100,
#   IBV_VM_PERF_TESTS="ib_write_bw ..." (a subset), IBV_VM_OUT (work folder)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
mnic_init
out=${IBV_VM_OUT:-$root/build/test-system/ibv-vm}
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
ITERS=${IBV_VM_ITERS:-100}
PERF_ITERS=${IBV_VM_PERF_ITERS:-100}
MAC_A=52:54:00:00:09:01 MAC_B=52:54:00:00:09:02 MAC_R=52:54:00:00:09:f1
IP_A=10.0.9.1 IP_B=10.0.9.2 IP_R=10.0.9.241   # (firmware: 10.mac[3].mac[4].mac[5])
VM_MEM_MIB=256
ETH_MTU=4200
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv ibv-traffic >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
for b in ibv_rc_pingpong ibv_devices ibv_devinfo; do
  command -v $b >/dev/null || mnic_die "$b missing: run scripts/deps.sh (ibverbs-utils)"
done
perf_tests=${IBV_VM_PERF_TESTS:-ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat}
perftest_bins=
for b in $perf_tests; do
  p=$(command -v "$b") || mnic_die "$b missing: run scripts/deps.sh (perftest)"
  perftest_bins="$perftest_bins $p"
done
base=$(mnic_free_ports 3 17400) || mnic_die "no free 127.0.0.1 ports"
declare -A CTL IP DEV GDEV NAME
CTL=([a]=$base [b]=$((base + 1)) [r]=$((base + 2)))
IP=([a]=$IP_A [b]=$IP_B [r]=$IP_R)
NAME=([a]="mnic A" [b]="mnic B" [r]=rxe)

# The mnic VMs' initramfs: the module, the provider and its .driver file,
# Debian's libibverbs (with the programs' ldd) and the tools.
mnic_vm_build "$out/mnic-initrd.gz" "$perftest_bins $root/build/host/tools/ibv-traffic"
rxe_build
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

# The three VMs boot together: the rxe VM first (it needs no NIC), the
# NICs come up while it boots.
t0=$(date +%s)
export MNIC_NIC_POLL="db_min_us=1000000 db_max_us=1000000"
RXE_APPEND="RXE_MTU=$ETH_MTU" rxe_vm_start rxe "$MAC_R" $IP_R/24 "${CTL[r]}"
mnic_nic_start nica $MAC_A "$out/a.ram" $VM_MEM_MIB || fail "the POSIX NIC A did not come up"
MNIC_VM_APPEND="MNIC_MTU=$ETH_MTU" \
  mnic_vm_start mnic-a "$out/mnic-initrd.gz" "$out/a.ram" $VM_MEM_MIB $IP_A/24 "${CTL[a]}" nica
mnic_nic_start nicb $MAC_B "$out/b.ram" $VM_MEM_MIB || fail "the POSIX NIC B did not come up"
MNIC_VM_APPEND="MNIC_MTU=$ETH_MTU" \
  mnic_vm_start mnic-b "$out/mnic-initrd.gz" "$out/b.ram" $VM_MEM_MIB $IP_B/24 "${CTL[b]}" nicb
ga=$(mnic_vm_ready mnic-a 300) || fail "the mnic VM A did not come up ($out/mnic-a.log)"
gb=$(mnic_vm_ready mnic-b 300) || fail "the mnic VM B did not come up ($out/mnic-b.log)"
rxe_vm_ready rxe 300 >/dev/null || fail "the rxe VM did not come up ($out/rxe.log)"
echo "setup: $(( $(date +%s) - t0 )) s; RoCEv2 GID index: mnic A $ga, mnic B $gb, rxe 1"
# -g for ibv_rc_pingpong, -x for perftest
DEV=([a]="-d mnic0 -g $ga" [b]="-d mnic0 -g $gb" [r]="-d rxe0 -g 1")
GDEV=([a]="-d mnic0 -x $ga" [b]="-d mnic0 -x $gb" [r]="-d rxe0 -x 1")

for v in a b; do
  g=$ga; [ $v = a ] || g=$gb
  ip=$IP_A; [ $v = a ] || ip=$IP_B
  rxe_ctl "${CTL[$v]}" "ibv_devinfo -v -d mnic0" >"$out/devinfo-$v.txt" || fail "ibv_devinfo -v -d mnic0 (${NAME[$v]})"
  grep -q "link_layer:.*Ethernet" "$out/devinfo-$v.txt" && grep -q "state:.*PORT_ACTIVE" "$out/devinfo-$v.txt" &&
    grep -qE "GID\[ *$g\]:.*::ffff:${ip//./\\.}, RoCE v2" "$out/devinfo-$v.txt" ||
    { cat "$out/devinfo-$v.txt"; fail "ibv_devinfo: ${NAME[$v]}'s mnic0 not an active Ethernet port with its RoCEv2 GID"; }
  # mnic0's MTU 4200 carries path MTU 4096 (query_port follows the netdev)
  grep -qE "active_mtu:[[:space:]]*4096" "$out/devinfo-$v.txt" ||
    { grep mtu "$out/devinfo-$v.txt"; rxe_ctl "${CTL[$v]}" "ip link show mnic0; dmesg | grep -i mtu"; fail "${NAME[$v]}: mnic0's active_mtu is not 4096 at netdev MTU $ETH_MTU"; }
done

# listening VM: wait until its server listens on guest port 18515
listening() {
  rxe_ctl "${CTL[$1]}" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 60
}

# pingpong SERVER CLIENT SIZE MTU EXTRA: one ibv_rc_pingpong -c run
runs=0
pingpong() {
  local s=$1 c=$2 sz=$3 mtu=$4 extra=$5 tag rc=0
  tag=pp-$s-serves-$c-$sz-m$mtu${extra:+-e}
  rxe_bg "${CTL[$s]}" pp "ibv_rc_pingpong ${DEV[$s]} -s $sz -m $mtu $extra -c -p 18515 -n $ITERS"
  listening "$s" || { rxe_fg "${CTL[$s]}" pp 5; fail "$tag: the server never listened"; }
  rxe_ctl "${CTL[$c]}" "ibv_rc_pingpong ${DEV[$c]} -s $sz -m $mtu $extra -c -p 18515 -n $ITERS ${IP[$s]}" 150 \
    >"$out/$tag.client" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "${CTL[$s]}" "killall ibv_rc_pingpong" 5 >/dev/null 2>&1 || true
  rxe_fg "${CTL[$s]}" pp 150 >"$out/$tag.server" 2>&1 || rc=$((rc + 100))
  if [ $rc != 0 ] || ! grep -q "^$ITERS iters in " "$out/$tag.server" ||
     ! grep -q "^$ITERS iters in " "$out/$tag.client"; then
    echo "--- server"; cat "$out/$tag.server"; echo "--- client"; cat "$out/$tag.client"
    fail "$tag: $ITERS iterations not completed by both ends (status $rc)"
  fi
  runs=$((runs + 1))
  printf '  %-32s ok: server %s | client %s\n' "$tag" \
    "$(grep ' iters in ' "$out/$tag.server" | sed 's/.*= //')" "$(grep ' iters in ' "$out/$tag.client" | sed 's/.*= //')"
}

# perf SERVER CLIENT TOOL ARGS SIZE: one perftest run; both ends exit 0 and
# print their result line for all iterations (the client only for
# ib_read_lat, whose server is passive).
perf() {
  local s=$1 c=$2 t=$3 args=$4 size=$5 tag rc=0
  tag=$t-$s-serves-$c
  rxe_bg "${CTL[$s]}" pf "$t $args ${GDEV[$s]} -F -p 18515"
  listening "$s" || { rxe_fg "${CTL[$s]}" pf 5; fail "$tag: the perftest server never listened"; }
  rxe_ctl "${CTL[$c]}" "$t $args ${GDEV[$c]} -F -p 18515 ${IP[$s]}" 150 >"$out/$tag.client" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "${CTL[$s]}" "killall $t" 5 >/dev/null 2>&1 || true
  rxe_fg "${CTL[$s]}" pf 150 >"$out/$tag.server" 2>&1 || rc=$((rc + 100))
  if [ $rc != 0 ] || { [ "$t" != ib_read_lat ] && ! grep -qE "^ *$size +$PERF_ITERS " "$out/$tag.server"; } ||
     ! grep -qE "^ *$size +$PERF_ITERS " "$out/$tag.client"; then
    echo "--- server"; cat "$out/$tag.server"; echo "--- client"; cat "$out/$tag.client"
    fail "$tag: $t did not complete $PERF_ITERS iterations on both ends (status $rc)"
  fi
  runs=$((runs + 1))
  printf '  %-32s ok: %s\n' "$tag" "$(grep -E "^ *$size +$PERF_ITERS " "$out/$tag.client" | tail -1 | tr -s ' \t' ' ')"
}

# ---- ibv_rc_pingpong ------------------------------------------------------------
#         server client size   MTU  extra   covers
pingpong a      r      1       1024 ""      # mnic serves rxe, 1 B, MTU 1024
pingpong r      a      4096    4096 ""      # rxe serves mnic, 4 KiB, MTU 4096
pingpong a      b      65536   4096 ""      # mnic <-> mnic, 64 KiB
pingpong r      a      65536   1024 -e      # -e on a mnic client, 64 KiB at 1024
pingpong a      r      4096    4096 -e      # -e on a mnic server
pingpong b      a      1       1024 -e      # mnic <-> mnic with -e, 1 B
t_pp=$(( $(date +%s) - t0 ))

# ---- perftest -------------------------------------------------------------------
# RC over RoCEv2, path MTU 1024 (-m), on the RoCEv2 GIDs (-x); ib_send_lat
# and ib_write_lat with perftest's default inline data (the provider
# copies the 64 bytes into the WQE, IBV_SEND_INLINE, up to MNIC_MAX_INLINE
# 448: the lat runs fail without it; ib_read_lat sends none);
# ib_read_lat with -o 16, the engine's outstanding reads (perftest takes
# the peer's count for its own QP, and rxe offers 128: RTS would be
# refused).
perf_args() {   # TOOL -> "ARGS SIZE"
  case $1 in
    ib_atomic_bw) echo "-A FETCH_AND_ADD -n $PERF_ITERS -m 1024 -o 16|8" ;;
    *_bw) echo "-s 4096 -n $PERF_ITERS -m 1024|4096" ;;
    ib_read_lat) echo "-s 64 -n $PERF_ITERS -m 1024 -o 16|64" ;;
    *_lat) echo "-s 64 -n $PERF_ITERS -m 1024|64" ;;
  esac
}
for t in $perf_tests; do
  IFS='|' read -r args size <<<"$(perf_args "$t")"
  perf a b "$t" "$args" "$size"
  perf a r "$t" "$args" "$size"
  case $t in ib_write_bw|ib_send_lat) perf r a "$t" "$args" "$size" ;; esac
done

# ---- the verified verbs workload (tests/tools/ibv-traffic.c) -------------------
# The same binary as on rxe <-> rxe (tests/system/interop_rxe_selfcheck.sh):
# SEND, WRITE_WITH_IMM, READ, FETCH_ADD, CMP_SWAP both ways, every byte and
# every atomic result checked, both ends' PASS line.
TRAFFIC_N=${IBV_VM_TRAFFIC_N:-400}
traffic() {   # SERVER CLIENT SIZE MTU
  local s=$1 c=$2 sz=$3 mtu=$4 tag rc=0
  tag=traffic-$s-serves-$c-$sz-m$mtu
  rxe_bg "${CTL[$s]}" tr "ibv-traffic ${DEV[$s]} -m $mtu -s $sz -n $TRAFFIC_N -p 18515 -t 60"
  listening "$s" || { rxe_fg "${CTL[$s]}" tr 5; fail "$tag: ibv-traffic never listened"; }
  rxe_ctl "${CTL[$c]}" "ibv-traffic ${DEV[$c]} -m $mtu -s $sz -n $TRAFFIC_N -p 18515 -t 60 ${IP[$s]}" 120 \
    >"$out/$tag.client" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "${CTL[$s]}" "killall ibv-traffic" 5 >/dev/null 2>&1 || true
  rxe_fg "${CTL[$s]}" tr 120 >"$out/$tag.server" 2>&1 || rc=$((rc + 100))
  if [ $rc != 0 ] || ! grep -q "^ibv-traffic: PASS ops $TRAFFIC_N .* bad_atomic 0 errors 0 peer PASS" "$out/$tag.server" ||
     ! grep -q "^ibv-traffic: PASS ops $TRAFFIC_N .* bad_atomic 0 errors 0 peer PASS" "$out/$tag.client"; then
    echo "--- server"; cat "$out/$tag.server"; echo "--- client"; cat "$out/$tag.client"
    fail "$tag: ibv-traffic did not verify on both ends (status $rc)"
  fi
  runs=$((runs + 1))
  printf '  %-32s ok: %s\n' "$tag" "$(grep '^ibv-traffic: PASS' "$out/$tag.client" | cut -d' ' -f3-)"
}
traffic a b 4096 4096
traffic a r 8192 1024
traffic r a 4096 4096

# ---- the mnic VMs' kernel logs: no warning of any kind ----------------------------
for v in a b; do
  # every ucontext (each program's) got the Doorbell register page
  uc=$(rxe_ctl "${CTL[$v]}" "cat /sys/class/misc/mnic0/counters/ib_ucontext") || uc=
  uar=$(rxe_ctl "${CTL[$v]}" "cat /sys/class/misc/mnic0/counters/ib_uar") || uar=
  [ -n "$uc" ] && [ "$uc" -gt 0 ] && [ "$uar" = "$uc" ] ||
    fail "${NAME[$v]}: ucontexts ${uc:-?}, with the doorbell register page ${uar:-?} (want all)"
  echo "${NAME[$v]}: $uc ucontexts, each with the doorbell register page"
  rxe_ctl "${CTL[$v]}" "dmesg" >"$out/mnic-$v-dmesg.txt" || true
  if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
       "$out/mnic-$v-dmesg.txt"; then
    fail "kernel warnings in ${NAME[$v]}'s dmesg ($out/mnic-$v-dmesg.txt)"
  fi
done
# Every RoCEv2 frame each end sent decodes in tshark, none malformed: NIC
# A's port sees its own, B's and rxe's frames to it, NIC B's its own.
for n in a b; do
  "$root/build/host/hostdrv/mnicctl" -d "$out/nic$n.bar" counters --engine >"$out/counters-$n.txt" || true
done
# perftest's latency runs posted inline WQEs (IBV_SEND_INLINE): the
# firmware sent their payload from the WQE itself.
for n in a b; do
  inl=$(awk '$1 == "req_inline_pkts" { print $2 }' "$out/counters-$n.txt")
  [ "${inl:-0}" -gt 0 ] || fail "NIC $n sent no inline packet (req_inline_pkts ${inl:-missing})"
  echo "NIC $n: req_inline_pkts $inl"
done
sleep 1
rxe_pcap_check "$out/nica.pcap" "eth.src == $MAC_A" || fail "mnic A's frames do not all decode ($out/nica.pcap)"
fa=$RXE_PCAP_FRAMES
rxe_pcap_check "$out/nica.pcap" "eth.src == $MAC_R" || fail "rxe's frames do not all decode ($out/nica.pcap)"
fr=$RXE_PCAP_FRAMES
rxe_pcap_check "$out/nicb.pcap" "eth.src == $MAC_B" || fail "mnic B's frames do not all decode ($out/nicb.pcap)"
fb=$RXE_PCAP_FRAMES
for f in "mnic A:$fa" "rxe:$fr" "mnic B:$fb"; do
  [ "${f#*:}" -gt $((2 * ITERS)) ] || fail "too few RoCEv2 frames from ${f%:*} in the capture (${f#*:})"
done
# No static neighbour: each mnic VM resolved its peers by ARP through mnic0
# (its ARP requests or replies are on its NIC's port, its neighbour entries are not
# PERMANENT), and the out-of-band exchanges' TCP ran over mnic0 both ways.
for v in a b; do
  m=$MAC_A; [ $v = a ] || m=$MAC_B
  narp=$(tshark -r "$out/nic$v.pcap" -Y "arp && eth.src == $m" 2>/dev/null | wc -l)
  ntcp=$(tshark -r "$out/nic$v.pcap" -Y "tcp.port == 18515 && eth.src == $m" 2>/dev/null | wc -l)
  ntcp_in=$(tshark -r "$out/nic$v.pcap" -Y "tcp.port == 18515 && eth.dst == $m" 2>/dev/null | wc -l)
  rxe_ctl "${CTL[$v]}" "ip neigh show dev mnic0" >"$out/neigh-$v.txt" || true
  [ "$narp" -gt 0 ] && [ "$ntcp" -gt 0 ] && [ "$ntcp_in" -gt 0 ] && grep -q lladdr "$out/neigh-$v.txt" &&
    ! grep -q PERMANENT "$out/neigh-$v.txt" ||
    { cat "$out/neigh-$v.txt"; fail "${NAME[$v]}: ARP frames sent $narp, TCP out $ntcp / in $ntcp_in over mnic0: neighbours or the exchange did not use the NIC"; }
  echo "${NAME[$v]}: ARP frames sent $narp, exchange TCP frames out $ntcp / in $ntcp_in over mnic0; neighbours: $(grep -c lladdr "$out/neigh-$v.txt") learnt"
done
echo "PASS mnic0 (VM A) <-> mnic0 (VM B) and <-> rxe0 (VM): $runs runs ($t_pp s to the end of ibv_rc_pingpong) in $(( $(date +%s) - t0 )) s"
