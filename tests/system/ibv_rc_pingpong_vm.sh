#!/usr/bin/env bash
# Unmodified rdma-core ibv_rc_pingpong on the mnic RDMA device against Linux
# SoftRoCE, both ends in x86_64 Debian VMs (issue 16):
#
#   switch --- POSIX NIC (nic.bar; aperture vm.ram) <-ivshmem-> mnic VM: mnic.ko,
#         |                                                    libmnic-rdmav34.so,
#         |                                                    ibv_rc_pingpong -d mnic0
#         \--- rxe VM (virtio-net on the switch): rdma_rxe, ibv_rc_pingpong -d rxe0
#
# The mnic VM's RAM is the file vm.ram, the POSIX NIC's host-memory aperture
# (qemu-board/nic.sh --hostmem, tests/vm/vm.sh --ram-file): the provider's
# rings and ibv_rc_pingpong's buffer are pinned by mnic.ko into MTTs, the
# data path runs in the VM's user space (WQEs, CQ polling, db_seq).  Both
# roles (mnic server / rxe client and the reverse), 1 B and 4 KiB, path MTU
# 1024, and 4 KiB with completion events (-e), ibv_rc_pingpong's -c check
# on both ends; the exchange goes through
# the VMs' restricted user nets (hostfwd / guestfwd on 127.0.0.1 only).
# The capture of our NIC's port decodes in tshark with no malformed frame;
# the mnic VM's dmesg has no WARNING/BUG/Oops.
#
#   IBV_VM_ITERS=100 (per run)
#   IBV_VM_MODE=perftest: unmodified perftest instead (tests/system/perftest_vm.sh):
#   ib_write_bw, ib_read_bw, ib_send_bw (4 KiB) and ib_send_lat, ib_write_lat,
#   ib_read_lat (64 B; -I 0 where perftest inlines) with mnic0 serving, ib_write_bw and ib_send_lat
#   the other way round; IBV_VM_PERF_ITERS=200
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/qemu-board/lib.sh"
. "$root/tests/interop/lib.sh"
mnic_init
# IBV_VM_MODE=perftest: the perftest programs instead (tests/system/perftest_vm.sh)
mode=${IBV_VM_MODE:-pingpong}
out=$root/build/test-system/$mode-vm
rm -rf "$out"; mkdir -p "$out"
RXE_OUT=$out
ITERS=${IBV_VM_ITERS:-100}
PERF_ITERS=${IBV_VM_PERF_ITERS:-200}
MNIC_MAC=52:54:00:00:09:01   # 10.0.9.1 (firmware: 10.mac[3].mac[4].mac[5])
RXE_MAC=52:54:00:00:09:f1
VM_MEM_MIB=256
fail() { echo "FAIL: $*"; exit 1; }

make -C "$root" --no-print-directory -s kmod hostdrv >/dev/null
[ -x "$root/build/posix/mnic-fw" ] || mnic_die "build/posix/mnic-fw not built; run: make BOARD=posix"
for b in ibv_rc_pingpong ibv_devices ibv_devinfo; do
  command -v $b >/dev/null || mnic_die "$b missing: run scripts/deps.sh (ibverbs-utils)"
done
perftest_bins=
if [ "$mode" = perftest ]; then
  for b in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat ib_read_lat; do
    p=$(command -v $b) || mnic_die "$b missing: run scripts/deps.sh (perftest)"
    perftest_bins="$perftest_bins $p"
  done
fi
base=$(mnic_free_ports 4 17400) || mnic_die "no free 127.0.0.1 ports"
CTL_M=$base CTL_R=$((base + 1)) PP_M=$((base + 2)) PP_R=$((base + 3))

# The mnic VM's initramfs: the module, the provider and its .driver file,
# Debian's libibverbs (with the programs' ldd) and the tools.
mnic_vm_build "$out/mnic-initrd.gz" "$perftest_bins"
rxe_build
mnic_switch_start "$out/sw"
RXE_SWITCH=$out/sw

t0=$(date +%s)
mnic_nic_start nic $MNIC_MAC "$out/vm.ram" $VM_MEM_MIB || fail "the POSIX NIC did not come up"

# mnic VM: its guest's 10.0.2.100:18515 is the rxe VM's ibv_rc_pingpong
# server (host PP_R), its own server is reached at host PP_M.
MNIC_VM_APPEND="MNIC_NEIGH=10.0.9.241@$RXE_MAC" \
  mnic_vm_start mnic-vm "$out/mnic-initrd.gz" "$out/vm.ram" $VM_MEM_MIB 10.0.9.1/24 "$CTL_M" nic \
  --hostfwd "$PP_M:18515" --guestfwd "18515:$PP_R"
RXE_APPEND="RXE_NEIGH=10.0.9.1@$MNIC_MAC" \
  rxe_vm_start rxe "$RXE_MAC" 10.0.9.241/24 "$CTL_R" --hostfwd "$PP_R:18515" --guestfwd "18515:$PP_M"
gidx=$(mnic_vm_ready mnic-vm 240) || fail "the mnic VM did not come up ($out/mnic-vm.log)"
rxe_vm_ready rxe 240 >/dev/null || fail "the rxe VM did not come up"
echo "setup: $(( $(date +%s) - t0 )) s; mnic0 RoCEv2 GID index $gidx; $ITERS iterations per run"
rxe_ctl "$CTL_M" "ibv_devinfo -v -d mnic0" >"$out/devinfo.txt" || fail "ibv_devinfo -v -d mnic0"
grep -q "link_layer:.*Ethernet" "$out/devinfo.txt" && grep -q "state:.*PORT_ACTIVE" "$out/devinfo.txt" &&
  grep -qE "GID\[ *$gidx\]:.*::ffff:10\.0\.9\.1, RoCE v2" "$out/devinfo.txt" ||
  { cat "$out/devinfo.txt"; fail "ibv_devinfo: mnic0 not an active Ethernet port with its RoCEv2 GID"; }

# unmodified perftest: one test, server on one VM, client on the other;
# both ends exit 0 and print their result line for all iterations (the
# client only for ib_read_lat, whose server is passive).
perf() {   # SERVER_CTL SERVER_DEV_ARGS CLIENT_CTL CLIENT_DEV_ARGS TEST ARGS SIZE TAG
  local sctl=$1 sdev=$2 cctl=$3 cdev=$4 t=$5 args=$6 size=$7 tag=$8 rc=0
  rxe_bg "$sctl" pf "$t $args $sdev -F -p 18515"
  rxe_ctl "$sctl" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 60 \
    || { rxe_fg "$sctl" pf 5; tail -40 "$out/mnic-vm.log"; fail "$tag: the perftest server never listened"; }
  rxe_ctl "$cctl" "$t $args $cdev -F -p 18515 10.0.2.100" 150 >"$out/$tag.client" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "$sctl" "killall $t" 5 >/dev/null 2>&1 || true
  rxe_fg "$sctl" pf 150 >"$out/$tag.server" 2>&1 || rc=$((rc + 100))
  # (ib_read_lat's server is passive: only the client measures)
  if [ $rc != 0 ] || { [ "$t" != ib_read_lat ] && ! grep -qE "^ *$size +$PERF_ITERS " "$out/$tag.server"; } ||
     ! grep -qE "^ *$size +$PERF_ITERS " "$out/$tag.client"; then
    echo "--- server"; cat "$out/$tag.server"; echo "--- client"; cat "$out/$tag.client"
    fail "$tag: $t did not complete $PERF_ITERS iterations on both ends (status $rc)"
  fi
  runs=$((runs + 1))
  printf '  %-28s ok: %s\n' "$tag" "$(grep -E "^ *$size +$PERF_ITERS " "$out/$tag.client" | tail -1 | tr -s ' \t' ' ')"
}

runs=0
if [ "$mode" = pingpong ]; then
  # one run: SERVER_CTL SERVER_ARGS CLIENT_CTL CLIENT_ARGS TAG
  run() {
    local sctl=$1 sargs=$2 cctl=$3 cargs=$4 tag=$5 rc=0
    rxe_bg "$sctl" pp "ibv_rc_pingpong $sargs -c -p 18515 -m 1024 -n $ITERS"
    rxe_ctl "$sctl" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 30 \
      || { rxe_fg "$sctl" pp 5; fail "$tag: the server never listened"; }
    rxe_ctl "$cctl" "ibv_rc_pingpong $cargs -c -p 18515 -m 1024 -n $ITERS 10.0.2.100" 120 \
      >"$out/$tag.client" 2>&1 || rc=$?
    [ $rc = 0 ] || rxe_ctl "$sctl" "killall ibv_rc_pingpong" 5 >/dev/null 2>&1 || true
    rxe_fg "$sctl" pp 120 >"$out/$tag.server" 2>&1 || rc=$((rc + 100))
    if [ $rc != 0 ] || ! grep -q "^$ITERS iters in " "$out/$tag.server" ||
       ! grep -q "^$ITERS iters in " "$out/$tag.client"; then
      echo "--- server"; cat "$out/$tag.server"; echo "--- client"; cat "$out/$tag.client"
      fail "$tag: $ITERS iterations not completed by both ends (status $rc)"
    fi
    runs=$((runs + 1))
    printf '  %-18s ok: server %s | client %s\n' "$tag" \
      "$(grep ' iters in ' "$out/$tag.server" | sed 's/.*= //')" "$(grep ' iters in ' "$out/$tag.client" | sed 's/.*= //')"
  }
  for sz in 1 4096; do
    run "$CTL_M" "-d mnic0 -g $gidx -s $sz" "$CTL_R" "-d rxe0 -g 1 -s $sz" "mnic-server-$sz"
    run "$CTL_R" "-d rxe0 -g 1 -s $sz" "$CTL_M" "-d mnic0 -g $gidx -s $sz" "rxe-server-$sz"
  done
  # -e on both ends: completion channels (mnic.ko wakes mnic0's from the
  # firmware's event queue)
  run "$CTL_M" "-d mnic0 -g $gidx -s 4096 -e" "$CTL_R" "-d rxe0 -g 1 -s 4096 -e" "mnic-server-4096-e"
  run "$CTL_R" "-d rxe0 -g 1 -s 4096 -e" "$CTL_M" "-d mnic0 -g $gidx -s 4096 -e" "rxe-server-4096-e"

else
  # The perftest programs the issue names, RC over RoCEv2, MTU 1024
  # (-m), on the RoCEv2 GIDs (-x); ib_send_lat and ib_write_lat with -I 0
  # (the provider has no inline data: MNIC_MAX_INLINE 0; ib_read_lat
  # sends none and refuses the option); ib_read_lat with -o 16, the
  # engine's outstanding reads (it takes the peer's count for its own QP,
  # and rxe offers 128: RTS would be refused).
  M="-d mnic0 -x $gidx" R="-d rxe0 -x 1"
  tests=${IBV_VM_PERF_TESTS:-ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat ib_read_lat}
  for t in $tests; do
    case $t in
      *_bw) perf "$CTL_M" "$M" "$CTL_R" "$R" $t "-s 4096 -n $PERF_ITERS -m 1024" 4096 "$t-mnic-server" ;;
      ib_read_lat) perf "$CTL_M" "$M" "$CTL_R" "$R" $t "-s 64 -n $PERF_ITERS -m 1024 -o 16" 64 "$t-mnic-server" ;;
      *_lat) perf "$CTL_M" "$M" "$CTL_R" "$R" $t "-s 64 -n $PERF_ITERS -m 1024 -I 0" 64 "$t-mnic-server" ;;
    esac
  done
  case " $tests " in *" ib_write_bw "*)
    perf "$CTL_R" "$R" "$CTL_M" "$M" ib_write_bw "-s 4096 -n $PERF_ITERS -m 1024" 4096 "ib_write_bw-rxe-server" ;;
  esac
  case " $tests " in *" ib_send_lat "*)
    perf "$CTL_R" "$R" "$CTL_M" "$M" ib_send_lat "-s 64 -n $PERF_ITERS -m 1024 -I 0" 64 "ib_send_lat-rxe-server" ;;
  esac
fi

# The mnic VM's kernel log: no warning of any kind.
rxe_ctl "$CTL_M" "dmesg" >"$out/mnic-dmesg.txt" || true
if grep -nE "WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t|list_(add|del) corruption" \
     "$out/mnic-dmesg.txt"; then
  fail "kernel warnings in the mnic VM's dmesg ($out/mnic-dmesg.txt)"
fi
# Every RoCEv2 frame both ends sent decodes in tshark, none malformed.
"$root/build/host/hostdrv/mnicctl" -d "$out/nic.bar" counters --engine >"$out/counters.txt" || true
sleep 1
rxe_pcap_check "$out/nic.pcap" "eth.src == $MNIC_MAC" || fail "our frames do not all decode ($out/nic.pcap)"
ours=$RXE_PCAP_FRAMES
rxe_pcap_check "$out/nic.pcap" "eth.src == $RXE_MAC" || fail "rxe's frames do not all decode ($out/nic.pcap)"
[ "$ours" -gt $((2 * ITERS)) ] || fail "too few RoCEv2 frames from mnic0 in the capture ($ours)"
echo "PASS $mode mnic0 (VM, provider) <-> rxe0 (VM): $runs runs in $(( $(date +%s) - t0 )) s"
