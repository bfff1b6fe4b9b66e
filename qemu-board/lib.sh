# Shell helpers for launching NICs and the switch; sourced by qemu-board/*.sh,
# tests/system/*.sh, bench/ and scripts/demo.sh.
#
# Every process started here is recorded in MNIC_PIDS; mnic_cleanup (installed
# as an EXIT trap by mnic_init) kills them by pid, so nothing outlives the
# script that started it.

MNIC_ROOT=${MNIC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
MNIC_PIDS=()

mnic_die() { echo "error: $*" >&2; exit 1; }

mnic_cleanup() {
  local pid
  for pid in "${MNIC_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${MNIC_PIDS[@]}"; do
    # Bounded wait, then SIGKILL: a wedged QEMU must not survive us.
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  MNIC_PIDS=()
}

mnic_init() {
  trap mnic_cleanup EXIT
  trap 'exit 130' INT TERM
}

mnic_track() { MNIC_PIDS+=("$1"); }

# mnic_free_ports N [FROM]: the first of N consecutive 127.0.0.1 TCP ports,
# all free now, at or above FROM (default a random base in 20000..39999),
# for hostfwd and control channels: a fixed base collided with another
# test run on the same machine (QEMU: "Could not set up host forwarding
# rule").  A port may still be taken between this check and its use; the
# caller's error then names it.
mnic_free_ports() {
  python3 - "$1" "${2:-0}" <<'PY'
import random, socket, sys
n, base = int(sys.argv[1]), int(sys.argv[2]) or random.randrange(20000, 40000, 16)
for b in range(base, 60000 - n):
    socks = []
    try:
        for p in range(b, b + n):
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(b)
    sys.exit(0)
sys.exit("no %d consecutive free ports on 127.0.0.1" % n)
PY
}

# mnic_board_args BOARD: load QEMU / QEMU_BOARD_ARGS / BAR_SIZE of a board.
mnic_board_args() {
  local gen="$MNIC_ROOT/build/$1/gen/qemu.args"
  [ -f "$gen" ] || mnic_die "board $1 is not built (no $gen); run: make BOARD=$1"
  # shellcheck disable=SC1090
  . "$gen"
  command -v "$QEMU" >/dev/null || mnic_die "$QEMU not found; run scripts/deps.sh as root"
}

# mnic_switch_start DIR: a learning switch with its control socket in DIR
# (QEMU NICs join with -netdev vde,sock=DIR, POSIX NICs with --vde DIR).
# Sets MNIC_SWITCH_PID.  Which switch: MNIC_SWITCH=vde (the default,
# vdeplug4's `vde_plug null:// switch://DIR`) or MNIC_SWITCH=mnic (the
# project's mnic-switch, fabric/: per-port queues and counters, impairment
# of any port), which also takes MNIC_SWITCH_ARGS (e.g. "--queue 64
# --impair 52:54:00:00:00:01:drop=0.02") and writes its counters to
# DIR.stats.json (mnic_switch_stats).  SAN=1 runs its ASan+UBSan build.
mnic_switch_start() {
  local dir=$1 exe
  rm -rf "$dir" "$dir.stats.json"
  mkdir -p "$(dirname "$dir")"
  case ${MNIC_SWITCH:-vde} in
    vde)
      command -v vde_plug >/dev/null || mnic_die "vde_plug not found; run scripts/deps.sh as root"
      vde_plug null:// "switch://$dir" </dev/null >/dev/null 2>"$dir.log" &
      ;;
    mnic)
      exe=$MNIC_ROOT/build/host/fabric/mnic-switch
      [ "${SAN:-0}" != 1 ] || exe=$MNIC_ROOT/build/host-asan/fabric/mnic-switch
      [ -x "$exe" ] || mnic_die "$exe not built; run: make mnic-switch"
      # shellcheck disable=SC2086
      "$exe" --dir "$dir" --stats "$dir.stats.json" ${MNIC_SWITCH_ARGS:-} \
        </dev/null >/dev/null 2>"$dir.log" &
      ;;
    *) mnic_die "MNIC_SWITCH=${MNIC_SWITCH}: choose vde (vdeplug4's switch) or mnic (mnic-switch)" ;;
  esac
  MNIC_SWITCH_PID=$!
  mnic_track "$MNIC_SWITCH_PID"
  for _ in $(seq 100); do
    [ -S "$dir/ctl" ] && return 0
    kill -0 "$MNIC_SWITCH_PID" 2>/dev/null || break
    sleep 0.05
  done
  mnic_die "switch at $dir did not start (see $dir.log)"
}

# mnic_switch_stats DIR: have the mnic-switch started by mnic_switch_start
# DIR write its counters now (SIGUSR1) and wait for DIR.stats.json (written
# whole, by rename); also one line per port in DIR.log.
mnic_switch_stats() {
  local f=$1.stats.json
  rm -f "$f"
  kill -USR1 "$MNIC_SWITCH_PID" 2>/dev/null || mnic_die "the switch at $1 is not running (see $1.log)"
  for _ in $(seq 100); do [ -f "$f" ] && return 0; sleep 0.05; done
  mnic_die "the switch at $1 wrote no $f (see $1.log)"
}

# mnic_wait_line FILE REGEX TIMEOUT_S PID: wait until FILE has a line
# matching REGEX; fail early if PID exits.  Returns 0 or 1.
mnic_wait_line() {
  local file=$1 re=$2 t=$3 pid=$4 end
  end=$(( $(date +%s%N) + t * 1000000000 ))
  while [ "$(date +%s%N)" -lt "$end" ]; do
    grep -qE "$re" "$file" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      grep -qE "$re" "$file" 2>/dev/null && return 0
      return 1
    fi
    sleep 0.02
  done
  return 1
}

# mnic_wait_pid PID TIMEOUT_S: wait for a child of this shell; sets MNIC_RC
# to its exit status (124 on timeout, after killing it).  Not for use in
# $(...): a subshell cannot wait for its parent's children.
mnic_wait_pid() {
  local pid=$1 t=$2 end
  end=$(( $(date +%s) + t ))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$end" ]; then
      kill "$pid" 2>/dev/null || true; sleep 0.2; kill -9 "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      MNIC_RC=124
      return
    fi
    sleep 0.05
  done
  MNIC_RC=0
  wait "$pid" || MNIC_RC=$?
}
