# Shell helpers for CRIU migrations between mnic VMs (issue 17), sourced
# after tests/interop/lib.sh by tests/system/criu_migrate_vm.sh and
# scripts/demo.sh.  The caller keeps the VMs' control ports and addresses in
# the associative arrays CTL and IP (keys: the VM names) and the migrated
# process's pid in $pid; $RXE_OUT is the work folder.
#
#   criu_vm_build OUT    the mnic VM initramfs with CRIU (binary and
#       libraries), mnic_criu_plugin.so in /usr/lib/criu/, the socket-diag
#       and nf_tables modules (TCP repair's network lock), and ibv-traffic
#   criu_hosts PREFIX VM...   a POSIX NIC (nic<VM>) and an x86 VM (console
#       PREFIX-<VM>.log) per name, booted together; waits for each, sets its
#       NIC's migration policy (60 s pause bound, 30 s RESUME budget: both
#       ends may move at once; unkeyed: verbs QPs carry no key) and puts its
#       RoCEv2 GID index in G[VM]; uses $CRIU_INITRD and
#       the arrays IP, MAC, CTL; with IP6[VM] set (all eight groups) mnic0
#       gets that IPv6 address too and G6[VM] its GID index;
#       $CRIU_SAY (a command) hears "VM up" lines
#   criu_mnicctl VM ARGS...   mnicctl on the VM's /dev/mnic0 (through its
#       mnic.ko: never on the NIC's BAR from this host while the VM's driver
#       runs, the two would share one command queue)
#   criu_listening VM PORT   wait until something listens on the VM's TCP PORT
#   criu_vm_clock VM     the VM's wall clock minus this host's, in ms (busybox
#       adjtimex: the VMs' clocks come from an RTC of 1 s resolution)
#   criu_svc VM ADDR PEER   give VM the service address ADDR (/32 on mnic0)
#       and make it the source of its connections to PEER: the address a
#       migrated process's TCP connections use, which moves with it
#   criu_migrate FROM TO N [FILES]   checkpoint $pid on VM FROM with criu dump
#       (pages to a `criu page-server` on TO when TO differs), the other
#       images and FILES (the process's own files, e.g. its log) over mnic0
#       (tar | nc), the service address $CRIU_SVC (for peer $CRIU_SVC_PEER)
#       moved to TO (the process's TCP connection), criu restore on TO;
#       (with $CRIU_RESTORE_ENV before it, e.g. MNIC_CRIU_OVERRIDE=...);
#       checks CRIU's and the plugin's lines; writes $RXE_OUT/mig$N.env
#       (epochs in host ms, phase times, image bytes, CRIU's own times) and
#       prints a summary line
CRIU_MODULES="crc32c_generic inet_diag tcp_diag udp_diag unix_diag netlink_diag af_packet_diag nf_tables"

criu_vm_build() {
  local criu
  criu=$(command -v criu) || mnic_die "criu missing: run scripts/deps.sh (criu)"
  MNIC_VM_MODULES=$CRIU_MODULES \
  MNIC_VM_FILES="$MNIC_ROOT/build/host/criu/mnic_criu_plugin.so:/usr/lib/criu/mnic_criu_plugin.so" \
    mnic_vm_build "$1" "$MNIC_ROOT/build/host/tools/ibv-traffic $MNIC_ROOT/build/host/criu/mnic-criu $MNIC_ROOT/build/host/hostdrv/mnicctl $criu"
}

# IP6[VM] when the caller declared IP6 (an associative array), else empty
# (under set -u an undeclared array would be taken as indexed, VM as a
# variable name).
_criu_ip6() {
  if declare -p IP6 >/dev/null 2>&1; then echo "${IP6[$1]:-}"; fi
}

criu_hosts() {
  local pre=$1 v
  shift
  for v in "$@"; do
    mnic_nic_start nic$v ${MAC[$v]} "$RXE_OUT/$v.ram" 256 || fail "the POSIX NIC $v did not come up ($RXE_OUT/nic$v.log)"
    MNIC_VM_APPEND="${MNIC_VM_APPEND:-}$(_criu_ip6 $v | sed 's|.\+| MNIC_IP6=&/64|')" \
      mnic_vm_start $pre-$v "$CRIU_INITRD" "$RXE_OUT/$v.ram" 256 ${IP[$v]}/24 "${CTL[$v]}" nic$v
  done
  for v in "$@"; do
    G[$v]=$(mnic_vm_ready $pre-$v 300) || fail "VM $v did not come up ($RXE_OUT/$pre-$v.log)"
    if [ -n "$(_criu_ip6 $v)" ]; then
      G6[$v]=$(sed -n 's/^MNIC-VM-READY .*gidx6=\([0-9]*\).*/\1/p' "$RXE_OUT/$pre-$v.log" | head -1)
      [ -n "${G6[$v]}" ] || fail "VM $v: no IPv6 GID index ($RXE_OUT/$pre-$v.log)"
    fi
    criu_mnicctl $v mig-config --pause-ms 60000 --resume-budget-ms 30000 --unkeyed >"$RXE_OUT/mig-config-$v.txt" ||
      fail "mig-config on NIC $v"
    ${CRIU_SAY:-:} "host $v up: mnic0 ${IP[$v]} (RoCEv2 GID index ${G[$v]})"
  done
}

criu_mnicctl() {
  local v=$1
  shift
  rxe_ctl "${CTL[$v]}" "mnicctl -d /dev/mnic0 $*" 30
}

criu_listening() {
  rxe_ctl "${CTL[$1]}" "i=0; until netstat -ltn | grep -q ':$2 '; do i=\$((i+1)); [ \$i -lt 400 ] || exit 1; sleep 0.05; done" 60
}

criu_vm_clock() {
  local t1 t2 s us
  t1=$(date +%s%3N)
  read -r s us < <(rxe_ctl "${CTL[$1]}" "adjtimex | sed -n 's/.*time.tv_sec: *//p; s/.*time.tv_usec: *//p' | tr '\n' ' '; echo" 10)
  t2=$(date +%s%3N)
  [ -n "$us" ] || { echo 0; return; }
  # the kernel reports nanoseconds there when its clock runs in STA_NANO
  [ "$us" -lt 1000000 ] && us=$((us * 1000))
  echo $(( s * 1000 + us / 1000000 - (t1 + t2) / 2 ))
}

criu_svc() {
  rxe_ctl "${CTL[$1]}" "ip addr add $2/32 dev mnic0 && ip route replace $3/32 dev mnic0 src $2 && arping -c 1 -U -I mnic0 $2 >/dev/null" 20
}

_criu_ms() { echo $(( ($2 - $1) / 1000000 )); }
# the last "(SS.UUUUUU)" stamp of a CRIU log before LINE, in ms
_criu_log_ms() { awk -v pat="$2" '/^\(/ { t = substr($0, 2, index($0, ")") - 2) } $0 ~ pat { print int(t * 1000); exit }' "$1"; }

criu_migrate() {
  [ -n "${CRIU_SVC:-}" ] && [ -n "${CRIU_SVC_PEER:-}" ] || mnic_die "criu_migrate: set CRIU_SVC and CRIU_SVC_PEER (criu_svc)"
  local from=$1 to=$2 n=$3 files=${4:-} t1 t2 t3 t4 img=/tmp/img$3 ps= o=$RXE_OUT
  rxe_ctl "${CTL[$from]}" "kill -0 $pid" 10 ||
    { rxe_ctl "${CTL[$from]}" "tail -5 ${CRIU_LOG:-/dev/null}" 10 || true; fail "migration $n: the process $pid is not running on $from"; }
  if [ "$from" != "$to" ]; then
    rxe_bg "${CTL[$to]}" ps$n "mkdir -p $img && criu page-server -D $img --address ${IP[$to]} --port 27000 -v4 -o ps.log"
    criu_listening "$to" 27000 || { rxe_fg "${CTL[$to]}" ps$n 5; fail "migration $n: no page server on $to"; }
    ps="--page-server --address ${IP[$to]} --port 27000"
  fi
  t1=$(date +%s%N)
  rxe_ctl "${CTL[$from]}" "mkdir -p $img && criu dump -t $pid -D $img $ps --tcp-established --network-lock nftables -v4 -o dump.log; rc=\$?; grep -E 'mnic-criu|Error' $img/dump.log | tail -20; exit \$rc" 120 \
    >"$o/dump$n.txt" 2>&1 || { cat "$o/dump$n.txt"; rxe_ctl "${CTL[$from]}" "tail -40 $img/dump.log" 5 || true; fail "migration $n: criu dump on $from"; }
  t2=$(date +%s%N)
  if [ "$from" != "$to" ]; then
    rxe_fg "${CTL[$to]}" ps$n 30 >"$o/page-server$n.txt" 2>&1 || { cat "$o/page-server$n.txt"; fail "migration $n: the page server on $to"; }
    # the images CRIU does not send (and the process's own files) over
    # mnic0; the process's address moves with it (its TCP connection)
    # (nc -e: the receiver reads the socket to its end; busybox nc would
    # stop at its own stdin's end)
    rxe_bg "${CTL[$to]}" rx$n "printf '#!/bin/sh\\nexec cat >/tmp/images$n.tar\\n' >/tmp/rx$n.sh && chmod +x /tmp/rx$n.sh && nc -l -p 27001 -e /tmp/rx$n.sh && tar xf /tmp/images$n.tar -C / && ls -l /tmp/images$n.tar $img"
    criu_listening "$to" 27001 || fail "migration $n: no receiver on $to"
    rxe_ctl "${CTL[$from]}" "tar cf /tmp/images$n.tar $img $files && nc ${IP[$to]} 27001 </tmp/images$n.tar && ip route del $CRIU_SVC_PEER/32 && ip addr del $CRIU_SVC/32 dev mnic0" 60 ||
      fail "migration $n: sending the images from $from"
    rxe_fg "${CTL[$to]}" rx$n 60 >"$o/rx$n.txt" 2>&1 || { cat "$o/rx$n.txt"; fail "migration $n: receiving the images on $to"; }
    criu_svc "$to" "$CRIU_SVC" "$CRIU_SVC_PEER" || fail "migration $n: moving $CRIU_SVC to $to"
  fi
  t3=$(date +%s%N)
  rxe_ctl "${CTL[$to]}" "${CRIU_RESTORE_ENV:-} criu restore -D $img --tcp-established -d -v4 -o restore.log; rc=\$?; grep -E 'mnic-criu|Error' $img/restore.log | tail -20; exit \$rc" 120 \
    >"$o/restore$n.txt" 2>&1 || { cat "$o/restore$n.txt"; rxe_ctl "${CTL[$to]}" "tail -60 $img/restore.log; cat $img/mnic-criu.log" 5 || true; fail "migration $n: criu restore on $to"; }
  t4=$(date +%s%N)
  rxe_ctl "${CTL[$from]}" "cat $img/dump.log" 20 >"$o/dump$n.log" 2>&1 || true
  rxe_ctl "${CTL[$to]}" "cat $img/mnic-criu.log" 10 >"$o/mnic-criu$n.log" 2>&1 || true
  rxe_ctl "${CTL[$to]}" "cat $img/restore.log" 20 >"$o/restore$n.log" 2>&1 || true
  rxe_ctl "${CTL[$to]}" "du -sb $img | cut -f1" 10 >"$o/img-bytes$n.txt" 2>&1 || true
  grep -q "mnic-criu: \[[0-9]*\] pid $pid .*dumped" "$o/dump$n.txt" || fail "migration $n: the plugin did not dump the context"
  grep -q "Restore finished successfully" "$o/restore$n.log" || fail "migration $n: criu did not finish the restore ($o/restore$n.log)"
  grep -q "mnic-criu: \[[0-9]*\] pid $pid fd [0-9]*: context [0-9]* resumed" "$o/mnic-criu$n.log" ||
    fail "migration $n: the plugin did not resume the context ($o/mnic-criu$n.log)"
  grep -h "mnic-criu" "$o/dump$n.txt" "$o/mnic-criu$n.log" | awk '!seen[$0]++' | sed 's/^/    /'
  cat >"$o/mig$n.env" <<EOT
from=$from
to=$to
epoch_dump_ms=$((t1 / 1000000))
epoch_dumped_ms=$((t2 / 1000000))
epoch_transferred_ms=$((t3 / 1000000))
epoch_restored_ms=$((t4 / 1000000))
checkpoint_ms=$(_criu_ms $t1 $t2)
transfer_ms=$(_criu_ms $t2 $t3)
restore_ms=$(_criu_ms $t3 $t4)
image_bytes=$(cat "$o/img-bytes$n.txt")
criu_dump_ms=$(_criu_log_ms "$o/dump$n.log" 'Dumping finished successfully')
criu_restore_ms=$(_criu_log_ms "$o/restore$n.log" 'Restore finished successfully')
EOT
  echo "migration $n ($from -> $to): checkpoint $(_criu_ms $t1 $t2) ms, transfer $(_criu_ms $t2 $t3) ms, restore $(_criu_ms $t3 $t4) ms, images $(cat "$o/img-bytes$n.txt") bytes"
}
