#!/usr/bin/env bash
# The Ethernet fabric: a learning switch (vdeplug4's, or mnic-switch with
# MNIC_SWITCH=mnic: see mnic_switch_start in lib.sh).
#   qemu-board/switch.sh start DIR    start in the background, pid in DIR.pid
#   qemu-board/switch.sh stop DIR     stop it (by that pid)
# QEMU NICs join with -netdev vde,sock=DIR; POSIX NICs with --vde DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cmd=${1:-}; dir=${2:-}
[ -n "$dir" ] || mnic_die "usage: switch.sh start|stop DIR"
case $cmd in
  start)
    if [ -f "$dir.pid" ] && kill -0 "$(cat "$dir.pid")" 2>/dev/null; then
      mnic_die "a switch already runs at $dir (pid $(cat "$dir.pid")); stop it first"
    fi
    mnic_switch_start "$dir"
    echo "$MNIC_SWITCH_PID" > "$dir.pid"
    MNIC_PIDS=()   # leave it running: the caller owns it now, through DIR.pid
    echo "switch at $dir (pid $MNIC_SWITCH_PID)"
    ;;
  stop)
    [ -f "$dir.pid" ] || mnic_die "no switch pid file $dir.pid"
    pid=$(cat "$dir.pid")
    kill "$pid" 2>/dev/null || true
    rm -f "$dir.pid"
    ;;
  *) mnic_die "usage: switch.sh start|stop DIR" ;;
esac
