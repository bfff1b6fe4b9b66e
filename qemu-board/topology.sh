#!/usr/bin/env bash
# Start a topology of N NICs on one switch, run the same firmware mode on
# each, wait for all of them and report.
#
#   qemu-board/topology.sh TOPO OUTDIR [--timeout S] [--follow] -- MODE ARGS...
#
# In ARGS, @PEERS@ becomes the comma-separated MACs of the other NICs.
# Logs: OUTDIR/<name>.log.  Exit 0 only if every NIC exits 0.  The switch
# and every NIC are stopped on exit, whatever happens.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

topo=${1:-}; out=${2:-}
[ -n "$topo" ] && [ -n "$out" ] || mnic_die "usage: topology.sh TOPO OUTDIR [--timeout S] [--follow] -- MODE ARGS..."
shift 2
timeout_s=300; follow=0
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --follow) follow=1; shift ;;
    --) shift; break ;;
    *) mnic_die "topology.sh: unknown option '$1'" ;;
  esac
done
[ -f "$topo" ] || mnic_die "topology file $topo not found"
mnic_init

names=(); boards=(); macs=()
while read -r n b m _; do
  [ -z "${n:-}" ] || [[ $n == \#* ]] && continue
  [ -n "${m:-}" ] || mnic_die "$topo: each line needs: name board mac"
  names+=("$n"); boards+=("$b"); macs+=("$m")
done < "$topo"
[ ${#names[@]} -ge 1 ] || mnic_die "$topo lists no NICs"

mkdir -p "$out"
mnic_switch_start "$out/switch"
pids=()
for i in "${!names[@]}"; do
  peers=()
  for j in "${!names[@]}"; do [ "$i" = "$j" ] || peers+=("${macs[$j]}"); done
  peers_csv=$(IFS=,; echo "${peers[*]:-}")
  args=()
  for a in "$@"; do args+=("${a//@PEERS@/$peers_csv}"); done
  log=$out/${names[$i]}.log
  "$MNIC_ROOT/qemu-board/nic.sh" --board "${boards[$i]}" --name "${names[$i]}" \
    --mac "${macs[$i]}" --switch "$out/switch" --bar "$out/${names[$i]}.bar" \
    ${MNIC_PCAP:+--pcap "$out/${names[$i]}.pcap"} -- "${args[@]}" >"$log" 2>&1 &
  pids+=($!)
  mnic_track "$!"
done
tailpid=
if [ $follow = 1 ]; then
  logs=(); for n in "${names[@]}"; do logs+=("$out/$n.log"); done
  tail -q -n +1 -F "${logs[@]}" 2>/dev/null | grep --line-buffered -E "RAWX|READY|rawx:|E:" &
  tailpid=$!
  mnic_track "$tailpid"
fi
fail=0
for i in "${!names[@]}"; do
  mnic_wait_pid "${pids[$i]}" "$timeout_s"; rc=$MNIC_RC
  printf '%-8s %-14s exit=%s\n' "${names[$i]}" "${boards[$i]}" "$rc"
  [ "$rc" = 0 ] || fail=1
done
[ -z "$tailpid" ] || { sleep 0.2; kill "$tailpid" 2>/dev/null || true; }
exit $fail
