#!/usr/bin/env bash
# make demo POSIX=1 (or BOARD=...): the stand-in flow (issue 6), labelled as
# such: live-migrate a running libmnic application between emulated
# SmartNICs by freezing it and copying its NIC memory (mnicctl migrate),
# prove nothing was lost, draw the timeline.  Plain `make demo` runs the
# CRIU flow instead (scripts/demo-criu.sh, issue 17).
#
#   switch + NICs A, B, C (three QEMU A15 NICs by default)
#   host A: mnic-traffic server on NIC A    host B: mnic-traffic client on NIC B
#   RC traffic on QPS QPs both ways: SEND, WRITE_WITH_IMM, READ, FETCH_ADD,
#   CMP_SWAP, every message with a sequence number and CRC32C (the receiver
#   wants seq 0, 1, 2, ... per QP: no gap, no duplicate, no reorder)
#   after MIGRATE_AT s: `mnicctl migrate --from B --to C --pid <host B app>`
#   (freeze the process, dump B's context, copy the process's NIC memory as a
#   checkpoint tool would -- with host memory onto other page frames of C's,
#   the MTTs refilled --, restore on C, resume, thaw; A's QPs pause on
#   NAK_STOPPED and follow C's RESUME), traffic runs on to DURATION s
#   report on stdout (scripts/demo-report.py), plot build/demo/timeline.svg
#
# Options (environment or make variables):
#   BOARD=qemu-virt-a15|qemu-virt-a72|posix   the NICs (default qemu-virt-a15)
#   POSIX=1        POSIX-build NICs (same as BOARD=posix): seconds, not a minute
#   QPS=N          QPs (default 8; mnic-traffic takes at most 64)
#   DURATION=S     traffic seconds (default 40 on QEMU, 8 on POSIX)
#   MIGRATE_AT=S   when to migrate (default DURATION/3)
#   LOSS=P         drop probability on every NIC's port, e.g. 0.01 (POSIX NICs:
#                  --impair drop=P; QEMU NICs cannot be impaired: see below)
#   PCAP=1         capture every NIC's port into build/demo/pcap/NAME.pcap
#   HOSTMEM=0      no host-memory aperture (default 1: every NIC DMAs into a
#                  64 MiB host-memory file through MTTs, and the migration
#                  moves the process's pages onto other frames of C's file,
#                  refilling the MTTs: docs/libmnic.md "Migration with host
#                  memory"; 0: the BAR's window, copied at the same places)
#   DEMO_OUT=DIR   output directory (default build/demo)
# Exit status: 0 only if both applications verified everything (nothing lost,
# duplicated or out of order, no error completion, atomics exactly once),
# the migration succeeded and the application ended on NIC C.
set -euo pipefail
# The main flow is CRIU's (scripts/demo-criu.sh): this stand-in runs with
# POSIX=1 or an explicit BOARD=.
if [ "${POSIX:-0}" != 1 ] && [ -z "${BOARD:-}" ]; then
  exec bash "$(dirname "$0")/demo-criu.sh"
fi
echo "demo: the stand-in flow: libmnic applications, frozen and copied by mnicctl migrate" \
     "(make demo without POSIX=1 or BOARD runs CRIU with an unmodified verbs application)" >&2
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
root=$MNIC_ROOT

board=${BOARD:-qemu-virt-a15}
[ "${POSIX:-0}" = 1 ] && board=posix
case $board in
  qemu-virt-a15|qemu-virt-a72|posix) ;;
  *) mnic_die "BOARD=$board: choose qemu-virt-a15, qemu-virt-a72 or posix" ;;
esac
if [ "$board" = posix ]; then dflt_dur=8; else dflt_dur=40; fi
qps=${QPS:-8}
dur=${DURATION:-$dflt_dur}
loss=${LOSS:-0}
pcap=${PCAP:-0}
hostmem=${HOSTMEM:-1}
[[ $hostmem =~ ^[01]$ ]] || mnic_die "HOSTMEM=$hostmem: give 1 (host-memory aperture) or 0"
out=${DEMO_OUT:-$root/build/demo}
[[ $qps =~ ^[0-9]+$ ]] && [ "$qps" -ge 1 ] && [ "$qps" -le 64 ] ||
  mnic_die "QPS=$qps: give 1..64 (mnic-traffic's MAX_QPS)"
[[ $dur =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v d="$dur" 'BEGIN { exit !(d >= 2 && d <= 3600) }' ||
  mnic_die "DURATION=$dur: give 2..3600 seconds"
mig_at=${MIGRATE_AT:-$(awk -v d="$dur" 'BEGIN { printf "%.1f", d / 3 }')}
awk -v m="$mig_at" -v d="$dur" 'BEGIN { exit !(m > 0.5 && m < d - 0.5) }' ||
  mnic_die "MIGRATE_AT=$mig_at: must lie inside the traffic (0.5 .. DURATION-0.5 s)"
[[ $loss =~ ^(0|0?[.][0-9]+)$ ]] && awk -v l="$loss" 'BEGIN { exit !(l < 0.5) }' ||
  mnic_die "LOSS=$loss: give a probability below 0.5, e.g. 0.01"

# Loss is applied where it is real: the POSIX NIC's impairment layer
# (--impair) drops received frames with that probability.  QEMU NICs have no
# impairment hook (nic.sh refuses --impair, the vdeplug switch has none):
# there LOSS is not applied and the report says so; their own loss (a full
# 32-entry receive ring under bursts) is real and recovered from anyway.
loss_note=none
if awk -v l="$loss" 'BEGIN { exit !(l > 0) }'; then
  if [ "$board" = posix ]; then
    loss_note="drop=$loss each way on every NIC port (POSIX --impair, seeded)"
  else
    loss_note="LOSS=$loss NOT applied: QEMU NICs cannot be impaired (qemu-board/nic.sh --impair is POSIX only)"
    echo "demo: note: $loss_note" >&2
  fi
fi

# ---- build (make demo has built every board; direct runs build what they need)
make -C "$root" --no-print-directory -s BOARD="$board" all hostdrv >&2 ||
  mnic_die "build failed: run make BOARD=$board hostdrv"
M=$root/build/host/hostdrv/mnicctl
T=$root/build/host/hostdrv/mnic-traffic
for f in "$M" "$T"; do [ -x "$f" ] || mnic_die "$f missing: run make hostdrv"; done
command -v python3 >/dev/null || mnic_die "python3 missing: run scripts/deps.sh as root"
command -v gnuplot >/dev/null || mnic_die "gnuplot missing: run scripts/deps.sh as root (gnuplot-nox)"

rm -rf "$out"; mkdir -p "$out"
[ "$pcap" = 1 ] && mkdir -p "$out/pcap"

# ---- the switch and three NICs ------------------------------------------------
mnic_switch_start "$out/switch"
declare -A MAC=([a]=52:54:00:6d:00:01 [b]=52:54:00:6d:00:02 [c]=52:54:00:6d:00:03)
declare -A PID
echo "demo: board $board, $qps QPs, ${dur} s of traffic, migration of host B's context" \
     "NIC B -> NIC C at ${mig_at} s, loss: $loss_note" >&2
n=0
for nic in a b c; do
  n=$((n + 1))
  args=(--board "$board" --name "demo-$nic" --mac "${MAC[$nic]}" --switch "$out/switch" --bar "$out/$nic.bar")
  if [ "$board" = posix ] && awk -v l="$loss" 'BEGIN { exit !(l > 0) }'; then
    args+=(--impair "drop=$loss,seed=$((n * 7919))")
  fi
  [ "$pcap" = 1 ] && [ "$board" != posix ] && args+=(--pcap "$out/pcap/$nic.pcap")
  if [ "$hostmem" = 1 ]; then   # <bar>.hostmem: where libmnic and the moved process find it
    truncate -s 64M "$out/$nic.bar.hostmem"
    args+=(--hostmem "$out/$nic.bar.hostmem")
  fi
  cap=; [ "$pcap" = 1 ] && [ "$board" = posix ] && cap=$out/pcap/$nic.pcap
  MNIC_PCAP=$cap "$root/qemu-board/nic.sh" "${args[@]}" -- run db_min_us=20 db_max_us=1000 \
    >"$out/nic-$nic.log" 2>&1 &
  PID[$nic]=$!; mnic_track $!
done
for nic in a b c; do
  mnic_wait_line "$out/nic-$nic.log" "^MNIC READY" 60 "${PID[$nic]}" ||
    { tail -20 "$out/nic-$nic.log"; mnic_die "NIC $nic did not come up (log: $out/nic-$nic.log)"; }
done
for nic in a b c; do
  "$M" -d "$out/$nic.bar" --json info >"$out/info-$nic.json" ||
    mnic_die "NIC $nic does not answer on its BAR ($out/$nic.bar)"
done
echo "demo: NICs up: $(for nic in a b c; do printf '%s=%s ' "$nic" \
  "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("ipv4", "?"))' "$out/info-$nic.json")"; done)" >&2

# ---- the application: host A serves, host B connects ---------------------------
port=$((21000 + RANDOM % 4000))
# A shared migration key: unkeyed RESUMEs are refused unless MIG_CONFIG
# allows them (rocev2/migrate.c).
key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
tmo=$(awk -v d="$dur" 'BEGIN { printf "%d", d + 180 }')
"$T" -d "$out/a.bar" -p $port -q "$qps" -D "$dur" -t "$tmo" -i 10 -T "$out/timeline-a.csv" -k "$key" \
  -g "$out/gaps-a.csv" >"$out/traffic-a.log" 2>&1 &
TA=$!; mnic_track $TA
"$T" -d "$out/b.bar" -p $port -q "$qps" -D "$dur" -t "$tmo" -i 10 -T "$out/timeline-b.csv" -k "$key" \
  -N "$out/notify-b" 127.0.0.1 >"$out/traffic-b.log" 2>&1 &
TB=$!; mnic_track $TB
for s in a b; do
  pid=$TA; [ $s = b ] && pid=$TB
  mnic_wait_line "$out/traffic-$s.log" "connected" 60 $pid ||
    { cat "$out"/traffic-*.log; mnic_die "host $s's application did not connect"; }
done
echo "demo: traffic running on $qps QPs (host A pid $TA, host B pid $TB)" >&2

# ---- the migration --------------------------------------------------------------
sleep "$mig_at"
echo "demo: migrating host B's RDMA context NIC B -> NIC C (mnicctl migrate --pid $TB)" >&2
mig_rc=0
# host memory: C's pages are taken in a random order, so the process's
# memory lands on other frames, as a restored process's would
MNIC_HOSTMEM_SHUFFLE=$hostmem \
"$M" --json migrate --from "$out/b.bar" --to "$out/c.bar" --pid $TB --notify "$out/notify-b" \
  >"$out/migrate.json" 2>"$out/migrate.log" || mig_rc=$?
[ $mig_rc = 0 ] || { cat "$out/migrate.log" >&2; echo "demo: mnicctl migrate failed (exit $mig_rc)" >&2; }
# A's view a moment later: every QP should address NIC C, none paused.
sleep 1
"$M" -d "$out/a.bar" --json qp list >"$out/qps-a-after.json" 2>>"$out/migrate.log" || true
"$M" -d "$out/c.bar" --json counters --engine >"$out/counters-c.json" 2>>"$out/migrate.log" || true

# ---- the end ------------------------------------------------------------------------
echo "demo: traffic runs on to ${dur} s, then both sides exchange and judge" >&2
mnic_wait_pid $TA "$tmo"; ra=$MNIC_RC
mnic_wait_pid $TB "$tmo"; rb=$MNIC_RC
for nic in a b c; do
  "$M" -d "$out/$nic.bar" --json counters --engine >"$out/counters-$nic.json" 2>/dev/null || true
done
mnic_cleanup   # NICs and switch: the captures are complete once they are gone

rep_rc=0
python3 "$root/scripts/demo-report.py" --dir "$out" --board "$board" --qps "$qps" \
  --loss-note "$loss_note" --exit-a "$ra" --exit-b "$rb" --migrate-rc "$mig_rc" --hostmem "$hostmem" \
  --c-ip "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ipv4"])' "$out/info-c.json")" ||
  rep_rc=$?
if [ "$pcap" = 1 ]; then
  echo "captures:"
  for nic in a b c; do printf '  %s  %s bytes\n' "$out/pcap/$nic.pcap" "$(stat -c %s "$out/pcap/$nic.pcap" 2>/dev/null || echo 0)"; done
fi
echo "logs: $out/"
exit $rep_rc
