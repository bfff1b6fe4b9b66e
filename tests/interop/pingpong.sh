# Interop runs between one of our NICs (mnic-pingpong, mnic-rw on libmnic)
# and the rxe peer VM (rdma-core's unmodified ibv_rc_pingpong, rdma_rw).
# Sourced by tests/system/interop_rxe_*.sh after tests/interop/lib.sh.
#
# Set by the caller:
#   IOP_BAR       our NIC's BAR file          IOP_CTL   the VM's control port (hostfwd)
#   IOP_PP        host port -> VM :18515      IOP_RW    host port -> VM :18516 (rdma_rw)
#   IOP_SRV       host port our servers listen on; the VM reaches it as
#                 10.0.2.100:18515 (vm.sh --guestfwd 18515:IOP_SRV)
#   IOP_LOG       directory for the per-run outputs
#   IOP_SWITCH    (optional) the mnic-switch's directory (mnic_switch_start):
#                 its drop counters excuse loss recovery, iop_check_our_counters
# The VM must have been booted with --hostfwd IOP_PP:18515 --hostfwd IOP_RW:18516
# --guestfwd 18515:IOP_SRV.

IOP_PINGPONG=$MNIC_ROOT/build/host/hostdrv/mnic-pingpong
IOP_MNICRW=$MNIC_ROOT/build/interop/mnic-rw
IOP_MNICCTL=$MNIC_ROOT/build/host/hostdrv/mnicctl
IOP_RUNS=0

iop_fail() { echo "FAIL: $*"; exit 1; }

# iop_iters_ok FILE N: the ibv_rc_pingpong result line for N iterations.
iop_iters_ok() { grep -q "^$2 iters in " "$1"; }

# rxe ibv_rc_pingpong server <-> our mnic-pingpong client.
iop_rxe_server() {
  local size=$1 mtu=$2 n=$3 tag=rxesrv-$1-$2
  rxe_bg "$IOP_CTL" pp "ibv_rc_pingpong -g 1 -c -p 18515 -s $size -m $mtu -n $n"
  # Connect only once the server listens: through the hostfwd an early
  # connection is accepted by QEMU and then dropped.
  rxe_ctl "$IOP_CTL" "i=0; until netstat -ltn | grep -q ':18515 '; do i=\$((i+1)); [ \$i -lt 200 ] || exit 1; sleep 0.05; done" 20 \
    || { rxe_fg "$IOP_CTL" pp 5; iop_fail "$tag: ibv_rc_pingpong server never listened"; }
  local rc=0
  "$IOP_PINGPONG" -d "$IOP_BAR" -p "$IOP_PP" -c -s "$size" -m "$mtu" -n "$n" --timeout 60 127.0.0.1 \
    >"$IOP_LOG/$tag.ours" 2>&1 || rc=$?
  # Our side gave up: do not wait for the VM's own timeout.
  [ $rc = 0 ] || rxe_ctl "$IOP_CTL" "killall ibv_rc_pingpong" 5 >/dev/null 2>&1 || true
  rxe_fg "$IOP_CTL" pp 90 >"$IOP_LOG/$tag.rxe" 2>&1 || rc=$((rc + 100))
  iop_report "$tag" "$n" $rc
}

# our mnic-pingpong server <-> rxe ibv_rc_pingpong client.
iop_our_server() {
  local size=$1 mtu=$2 n=$3 tag=oursrv-$1-$2 pid rc=0
  "$IOP_PINGPONG" -d "$IOP_BAR" -p "$IOP_SRV" -c -s "$size" -m "$mtu" -n "$n" --timeout 60 \
    >"$IOP_LOG/$tag.ours" 2>&1 &
  pid=$!
  mnic_track "$pid"
  for _ in $(seq 200); do
    ss -Hltn "sport = :$IOP_SRV" 2>/dev/null | grep -q . && break
    sleep 0.05
  done
  rxe_ctl "$IOP_CTL" "ibv_rc_pingpong -g 1 -c -p 18515 -s $size -m $mtu -n $n 10.0.2.100" 90 \
    >"$IOP_LOG/$tag.rxe" 2>&1 || rc=100
  mnic_wait_pid "$pid" 60
  rc=$((rc + MNIC_RC))
  iop_report "$tag" "$n" $rc
}

iop_report() {
  local tag=$1 n=$2 rc=$3
  if [ "$rc" != 0 ] || ! iop_iters_ok "$IOP_LOG/$tag.ours" "$n" || ! iop_iters_ok "$IOP_LOG/$tag.rxe" "$n"; then
    echo "--- ours ($IOP_LOG/$tag.ours)"; cat "$IOP_LOG/$tag.ours"
    echo "--- rxe ($IOP_LOG/$tag.rxe)"; cat "$IOP_LOG/$tag.rxe"
    iop_fail "$tag: $n iterations not completed by both sides (status $rc)"
  fi
  grep -i "invalid\|error" "$IOP_LOG/$tag.rxe" && iop_fail "$tag: ibv_rc_pingpong reported bad data"
  IOP_RUNS=$((IOP_RUNS + 1))
  printf '  %-22s ok: %s | rxe: %s\n' "$tag" "$(grep ' iters in ' "$IOP_LOG/$tag.ours")" \
    "$(grep ' iters in ' "$IOP_LOG/$tag.rxe" | sed 's/.*= //')"
}

# RDMA WRITE into and RDMA READ from an rxe MR (rdma_rw in the VM, mnic-rw here).
iop_rdma_rw() {
  local len=$1 mtu=$2 tag=rw-$1-$2 rc=0
  rxe_bg "$IOP_CTL" rw "rdma_rw -p 18516 -s $len -m $mtu -t 60"
  "$IOP_MNICRW" --dev "$IOP_BAR" --connect "127.0.0.1:$IOP_RW" --dmac "$IOP_VM_MAC" --mtu "$mtu" \
    --timeout 60 >"$IOP_LOG/$tag.ours" 2>&1 || rc=$?
  [ $rc = 0 ] || rxe_ctl "$IOP_CTL" "killall rdma_rw" 5 >/dev/null 2>&1 || true
  rxe_fg "$IOP_CTL" rw 70 >"$IOP_LOG/$tag.rxe" 2>&1 || rc=$((rc + 100))
  if [ $rc != 0 ] || ! grep -q '^MNIC-RW PASS' "$IOP_LOG/$tag.ours" || ! grep -q '^RDMA-RW PASS' "$IOP_LOG/$tag.rxe"; then
    cat "$IOP_LOG/$tag.ours" "$IOP_LOG/$tag.rxe"
    iop_fail "$tag: RDMA WRITE/READ against the rxe MR failed (status $rc)"
  fi
  IOP_RUNS=$((IOP_RUNS + 1))
  printf '  %-22s ok: %s\n' "$tag" "$(grep '^RDMA-RW PASS' "$IOP_LOG/$tag.rxe")"
}

# Our engine's error counters must all be zero (ICRC, header checks,
# sequence errors and NAKs, protection and DMA faults).  rx_stale_qp is
# not among them: a packet for a QP this NIC has destroyed, which rxe's
# late retransmissions (docs/interop.md) produce when they arrive after
# our side's run has ended; it is printed.  rx_no_qp (a QPN the NIC never
# issued) stays an error.
IOP_ZERO_COUNTERS="rx_short rx_bad_ip rx_bad_udp rx_bad_icrc rx_bad_tver rx_bad_opcode rx_bad_pkey
  rx_bad_pad rx_no_qp rx_bad_state rx_bad_src comp_naks_fatal comp_retry_exceeded
  comp_rnr_exceeded comp_bad_resp resp_inv_req_naks resp_rem_acc_naks
  resp_rem_op_naks resp_bad_packet resp_bad_state sge_prot_errors dma_errors cq_overflows"
# Loss recovery (IBA 9.7.5.2.2 PSN sequence error: the responder NAKs, the
# requester goes back): correct protocol, but only a frame lost on the way
# starts it.  Zero, unless the switch (IOP_SWITCH) counted a dropped frame.
IOP_LOSS_COUNTERS="comp_naks_seq comp_out_of_seq resp_out_of_seq"
iop_check_our_counters() {
  local f=$IOP_LOG/counters.txt c v bad= loss= drops=0
  "$IOP_MNICCTL" -d "$IOP_BAR" counters --engine >"$f" || iop_fail "mnicctl counters failed"
  for c in $IOP_ZERO_COUNTERS $IOP_LOSS_COUNTERS; do
    v=$(awk -v c="$c" '$1 == c { print $2 }' "$f")
    [ -n "$v" ] || iop_fail "counter $c missing from mnicctl counters ($f)"
    [ "$v" = 0 ] && continue
    if [[ " $IOP_LOSS_COUNTERS " == *" $c "* ]]; then loss="$loss $c=$v"; else bad="$bad $c=$v"; fi
  done
  if [ -n "${IOP_SWITCH:-}" ]; then
    mnic_switch_stats "$IOP_SWITCH"
    drops=$(python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
d=0
for p in s["ports"]:
    n=sum(p[k] for k in ("dropped_queue_full","dropped_send_error","dropped_closed","impaired_drop"))
    d+=n
    print("switch port %d (%s): tx=%d waited=%d queue_max=%d dropped=%d" % (p["port"], p["mac"] or "-", p["tx"], p["waited"], p["queue_max"], n), file=sys.stderr)
print(d)' "$IOP_SWITCH.stats.json" 2>"$IOP_LOG/switch.txt") || iop_fail "cannot read the switch's counters ($IOP_SWITCH.stats.json)"
    sed 's/^/  /' "$IOP_LOG/switch.txt"
  fi
  [ -z "$loss" ] || [ "$drops" -gt 0 ] || bad="$bad$loss (no frame was dropped on the way)"
  # the names in the failure line itself: CI shows only the end of a log
  [ -z "$bad" ] || { cat "$f"; iop_fail "our NIC counted errors:$bad ($f)"; }
  [ -z "$loss" ] || echo "loss recovery after $drops frames the switch dropped:$loss"
  echo "our counters: 0 ICRC/header/protection errors; $(awk '$1 ~ /^(rx_frames|tx_packets|req_retransmits|resp_dup_requests|comp_dup_acks|rx_stale_qp)$/ { printf "%s=%s ", $1, $2 }' "$f")"
}

# The rxe side: no error counter moved, nothing alarming in dmesg.
# (completer_retry_err and duplicate_request are rxe's own spurious
# retransmissions, docs/interop.md; they are allowed and printed.)
iop_check_rxe() {
  local f=$IOP_LOG/rxe-counters.txt bad
  rxe_ctl "$IOP_CTL" "cd /sys/class/infiniband/rxe0/ports/1/hw_counters && for c in *; do echo \"\$c \$(cat \$c)\"; done; rdma stat show link rxe0/1 >/dev/null 2>&1 && echo rdma_stat ok; dmesg | grep -iE 'rxe|infiniband' | grep -iE 'err|fail|warn|bad' | sed 's/^/dmesg /'" \
    >"$f" || iop_fail "reading rxe counters failed"
  bad=$(awk '$1 ~ /^(out_of_seq_request|rcvd_seq_err|retry_exceeded_err|retry_rnr_exceeded_err|send_err|rcvd_rnr_err|link_downed)$/ && $2 != 0' "$f")
  [ -z "$bad" ] || { cat "$f"; iop_fail "rxe counted errors: $bad"; }
  ! grep -q '^dmesg ' "$f" || { cat "$f"; iop_fail "rxe logged errors"; }
  echo "rxe counters: no errors; $(awk '$1 ~ /^(rcvd_pkts|sent_pkts|duplicate_request|completer_retry_err)$/ { printf "%s=%s ", $1, $2 }' "$f")"
}
