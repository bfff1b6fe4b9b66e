# Shell helpers for tests against the rxe peer VM (Linux SoftRoCE);
# sourced after qemu-board/lib.sh (mnic_init, mnic_track: every VM started
# here dies with the test).  docs/interop.md explains the recipe.
#
#   rxe_vm_start NAME MAC IP/LEN CTLPORT [vm.sh options...]
#       boots the VM in the background on the switch $RXE_SWITCH; its console
#       goes to $RXE_OUT/NAME.log; extra kernel knobs in $RXE_APPEND
#       (RXE_MTU=, RXE_NEIGH=).  Sets RXE_PID_<NAME>.
#   rxe_vm_ready NAME [TIMEOUT_S]   wait for "RXE-READY"; prints the ready line
#   rxe_ctl PORT CMD [TIMEOUT_S]    run CMD in the VM; prints its output; returns its status
#   rxe_bg PORT JOB CMD             start CMD in the VM in the background (/tmp/JOB.log)
#   rxe_fg PORT JOB [TIMEOUT_S]     wait for JOB; prints its log; returns its status

RXE_OUT=${RXE_OUT:-$MNIC_ROOT/build/interop}
RXE_SWITCH=${RXE_SWITCH:-}
RXE_APPEND=${RXE_APPEND:-}

# rxe_build: the initramfs (rebuilt each time: about a second).
rxe_build() {
  mkdir -p "$RXE_OUT"
  "$MNIC_ROOT/tests/interop/build-rxe-initrd.sh" "$RXE_OUT/rxe-initrd.cpio.gz" >/dev/null
}

rxe_vm_start() {
  local name=$1 mac=$2 ip=$3 port=$4 pid
  shift 4
  [ -n "$RXE_SWITCH" ] || mnic_die "rxe_vm_start: set RXE_SWITCH to a started switch"
  rm -f "$RXE_OUT/$name.log"
  # TCG: the Debian kernel does not run reliably on this machine's KVM
  # (kvm_pvm: emulation failures); a 1-CPU guest boots in seconds anyway.
  "$MNIC_ROOT/tests/vm/vm.sh" --accel "${RXE_ACCEL:-tcg}" --initrd "$RXE_OUT/rxe-initrd.cpio.gz" \
    --log "$RXE_OUT/$name.log" --vde "$RXE_SWITCH" --mac "$mac" --hostfwd "$port:$port" \
    --append "quiet RXE_IP=$ip CTL_PORT=$port $RXE_APPEND" "$@" \
    </dev/null >"$RXE_OUT/$name.qemu.log" 2>&1 &
  pid=$!
  mnic_track "$pid"
  printf -v "RXE_PID_$name" '%s' "$pid"
}

rxe_vm_ready() {
  local name=$1 t=${2:-120} pid
  pid=RXE_PID_$name
  if ! mnic_wait_line "$RXE_OUT/$name.log" '^RXE-(READY|FAIL)' "$t" "${!pid}" ||
     ! grep -q '^RXE-READY' "$RXE_OUT/$name.log"; then
    echo "rxe VM $name not ready (console: $RXE_OUT/$name.log):" >&2
    tail -n 20 "$RXE_OUT/$name.log" "$RXE_OUT/$name.qemu.log" >&2 2>/dev/null
    return 1
  fi
  grep -m1 '^RXE-READY' "$RXE_OUT/$name.log" | tr -d '\r'
}

# One command per TCP connection to the VM's /bin/ctl.  A connection that
# brings back nothing at all never reached the guest's listener (slirp
# accepts on the host before the guest does): try again.
rxe_ctl() {
  local port=$1 cmd=$2 t=${3:-60} line got rc end
  end=$(( $(date +%s) + t ))
  while [ "$(date +%s)" -lt "$end" ]; do
    got=0; rc=
    if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
      printf '%s\n' "$cmd" >&3
      while IFS= read -r -t "$t" line <&3; do
        got=1
        case $line in
          CTL-RC=*) rc=${line#CTL-RC=} ;;
          *) printf '%s\n' "$line" ;;
        esac
      done
      exec 3<&-
    fi 2>/dev/null
    if [ -n "$rc" ]; then return "$rc"; fi
    if [ $got = 1 ]; then echo "rxe_ctl: connection to port $port dropped during '$cmd'" >&2; return 125; fi
    sleep 0.2
  done
  echo "rxe_ctl: no answer on 127.0.0.1:$port within ${t}s for '$cmd'" >&2
  return 124
}

rxe_bg() {
  local port=$1 job=$2 cmd=$3
  rxe_ctl "$port" "rm -f $job.rc; ( $cmd; echo \$? > $job.rc ) > $job.log 2>&1 & echo started $job" >/dev/null
}

rxe_fg() {
  local port=$1 job=$2 t=${3:-60} out rc
  # One line: /bin/ctl reads exactly one.
  out=$(rxe_ctl "$port" "i=0; while [ ! -s $job.rc ] && [ \$i -lt $((t * 10)) ]; do sleep 0.1; i=\$((i+1)); done; cat $job.log; [ -s $job.rc ] || { echo '$job: timed out after ${t}s'; exit 124; }; exit \$(cat $job.rc)" \
        $((t + 10)))
  rc=$?
  printf '%s\n' "$out"
  return $rc
}

# rxe_pcap_check FILE [DISPLAY_FILTER]: every UDP 4791 frame (matching the
# filter) decodes as RoCEv2 (InfiniBand BTH), none malformed or with an
# expert warning.  Wireshark's guessing of protocols carried over
# InfiniBand is off (payloads are test bytes; see rc_posix_impaired.sh).
# Prints "N roce frames, M bad" and the BTH opcode histogram; sets
# RXE_PCAP_FRAMES; returns 1 on any bad frame.
rxe_pcap_check() {
  local f=$1 flt=${2:-frame} h heur=() n all bad
  command -v tshark >/dev/null || mnic_die "tshark missing: run scripts/deps.sh"
  for h in rpcrdma_infiniband smb_direct_infiniband iser_infiniband lnet_ib sdp_infiniband \
           eth_over_ib smcr_infiniband fc_infiniband; do
    heur+=(--disable-heuristic "$h")
  done
  n=$(tshark "${heur[@]}" -r "$f" -Y "($flt) && infiniband" 2>/dev/null | wc -l)
  all=$(tshark "${heur[@]}" -r "$f" -Y "($flt) && udp.dstport == 4791" 2>/dev/null | wc -l)
  bad=$(tshark "${heur[@]}" -r "$f" -Y "($flt) && infiniband && (_ws.malformed || _ws.expert.severity >= warning)" \
        2>/dev/null | wc -l)
  echo "$(basename "$f"): $n RoCEv2 frames ($all to UDP 4791), $bad malformed or with expert warnings; BTH opcodes:"
  tshark "${heur[@]}" -r "$f" -Y "($flt) && infiniband" -T fields -e infiniband.bth.opcode 2>/dev/null |
    sort -n | uniq -c | awk '{ printf "  %s x%s", $2, $1 } END { print "" }'
  RXE_PCAP_FRAMES=$n
  [ "$bad" = 0 ] && [ "$n" = "$all" ]
}

# ---- the mnic verbs VM (tests/interop/mnic-vm-init) ------------------------
#   mnic_vm_build OUT [EXTRA_BINS]   its initramfs: mnic.ko, the provider and
#       its .driver file, Debian's libibverbs (the programs' ldd), the tools
#   mnic_nic_start NAME MAC RAMFILE MIB   a POSIX NIC on $RXE_SWITCH whose
#       host-memory aperture is RAMFILE (the VM's RAM); BAR $RXE_OUT/NAME.bar,
#       an ivshmem-doorbell for the VM (qemu-board/nic.sh --bar-kind doorbell:
#       the VM's mnic.ko and provider ring the NIC, it interrupts them);
#       $MNIC_NIC_POLL: the firmware's BAR poll (default db_min_us=200
#       db_max_us=2000, the fallback for whatever does not ring)
#   mnic_vm_start NAME INITRD RAMFILE MIB IP/LEN CTLPORT NIC [vm.sh options...]
#       the VM on NIC's BAR (mnic_nic_start NIC); console $RXE_OUT/NAME.log; extra kernel
#       knobs in $MNIC_VM_APPEND (MNIC_NEIGH=); sets MNIC_VM_PID_<NAME>
#   mnic_vm_ready NAME [TIMEOUT_S]   wait for MNIC-VM-READY; prints the GID index
#   $MNIC_VM_MODULES: more kernel modules, loaded by the VM's init
#   $MNIC_VM_FILES: more src:/dst files
mnic_vm_build() {
  local out=$1 extra=${2:-} kver mods
  kver=$("$MNIC_ROOT/tests/vm/kver.sh")
  mods=$(mktemp); printf '%s\n' ${MNIC_VM_MODULES:-} >"$mods"
  "$MNIC_ROOT/tests/vm/mkinitramfs.sh" -o "$out" --kver "$kver" \
    --init "$MNIC_ROOT/tests/interop/mnic-vm-init" --modules "virtio_net virtio_pci ib_uverbs ${MNIC_VM_MODULES:-}" \
    --bins "$(command -v ibv_rc_pingpong) $(command -v ibv_devices) $(command -v ibv_devinfo) $extra" \
    --files "$MNIC_ROOT/build/kmod/mnic.ko:/lib/mnic.ko $MNIC_ROOT/tests/interop/ctl:/bin/ctl $MNIC_ROOT/build/host/provider/libmnic-rdmav34.so:/usr/lib/x86_64-linux-gnu/libibverbs/libmnic-rdmav34.so $MNIC_ROOT/build/host/provider/mnic.driver:/etc/libibverbs.d/mnic.driver $mods:/etc/mnic-vm-modules ${MNIC_VM_FILES:-}" \
    >/dev/null
  rm -f "$mods"
}

mnic_nic_start() {
  local name=$1 mac=$2 ram=$3 mib=$4 i
  [ -n "$RXE_SWITCH" ] || mnic_die "mnic_nic_start: set RXE_SWITCH to a started switch"
  truncate -s "${mib}M" "$ram"
  MNIC_PCAP=$RXE_OUT/$name.pcap "$MNIC_ROOT/qemu-board/nic.sh" --board posix --name "$name" --mac "$mac" \
    --switch "$RXE_SWITCH" --bar "$RXE_OUT/$name.bar" --bar-kind doorbell --hostmem "$ram" -- run ${MNIC_NIC_POLL:-db_min_us=200 db_max_us=2000} \
    >"$RXE_OUT/$name.log" 2>&1 &
  mnic_track $!
  for i in $(seq 300); do
    "$MNIC_ROOT/build/host/hostdrv/mnicctl" -d "$RXE_OUT/$name.bar" info >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the POSIX NIC $name did not come up ($RXE_OUT/$name.log)" >&2
  return 1
}

mnic_vm_start() {
  local name=$1 initrd=$2 ram=$3 mib=$4 ip=$5 port=$6 nic=$7 pid
  shift 7
  "$MNIC_ROOT/tests/vm/vm.sh" --initrd "$initrd" --ivshmem "$RXE_OUT/$nic.bar" --mem "$mib" \
    --ram-file "$ram" --hostfwd "$port:$port" --log "$RXE_OUT/$name.log" \
    --append "quiet MNIC_IP=$ip CTL_PORT=$port ${MNIC_VM_APPEND:-}" "$@" \
    </dev/null >"$RXE_OUT/$name.qemu.log" 2>&1 &
  pid=$!
  mnic_track "$pid"
  printf -v "MNIC_VM_PID_${name//[^A-Za-z0-9_]/_}" '%s' "$pid"
}

mnic_vm_ready() {
  local name=$1 t=${2:-240} pid
  pid=MNIC_VM_PID_${name//[^A-Za-z0-9_]/_}
  mnic_wait_line "$RXE_OUT/$name.log" '^MNIC-VM-(READY|FAIL)' "$t" "${!pid}" || true
  if ! grep -q '^MNIC-VM-READY' "$RXE_OUT/$name.log"; then
    echo "mnic VM $name not ready (console: $RXE_OUT/$name.log):" >&2
    tail -n 30 "$RXE_OUT/$name.log" >&2
    return 1
  fi
  sed -n 's/^MNIC-VM-READY gidx=\([0-9]*\).*/\1/p' "$RXE_OUT/$name.log" | head -1
}
