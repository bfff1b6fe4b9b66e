#!/usr/bin/env bash
# make bench: one "name: value unit" line per figure on stdout; progress and
# details on stderr.  Figures (foundation):
#   boot_ms_<board>      QEMU start -> "MNIC READY" on the console, median of 5
#   text/data/bss_bytes_<board>   section sizes of the firmware ELF
#   idle_cpu_pct_<board> host CPU used by an idle NIC (run mode) over 10 s,
#                        percent of one core (utime+stime from /proc)
#   raw_frame_rate       verified rawx frames/s between two A15 NICs through
#                        the switch (both directions, 5,000 frames each way)
# RoCEv2 engine (issue #3):
#   tx/rx_instr_per_pkt_{send64B,write4KiB}  callgrind instructions per packet
#                        on an in-process engine pair (bench/engine_pair.c),
#                        minus ICRC, payload copies and the pair's port (its
#                        tx callback copies each frame into the peer's inbox:
#                        the wire, not the engine; issue 18 item 2 counts
#                        the engine's header path).  The host DMA of rings,
#                        doorbell records and CQEs (hal/common/dma_window.c)
#                        is counted.  The engines coalesce ACKs as the
#                        firmware does (rocev2_set_ack_coalesce);
#   rx_instr_per_pkt_{send64B,write4KiB}_ack_each  the same with one ACK
#                        per request (coalescing off)
#   icrc_gbps, zlib_crc32_gbps   the same 4 KiB buffers, wall clock (issue 18:
#                        the ICRC runs ISA-L here; goal ratio >= 8)
#   icrc_gbps_a15, icrc_gbps_a72, icrc_gbps_a72_nocrc   the same on the
#                        boards' emulated CPUs (bench/icrc_board.c under QEMU,
#                        256 MiB each, engines interleaved): A15's table
#                        engine, A72's CRC32X and A72's table engine
#   raw_frame_rate_posix rawx frames/s between two POSIX NICs (the switch limit)
#   msg_rate_64B         64 B SENDs/s one way between two POSIX NICs (4 QPs)
#   goodput_1MiB_gbps    1 MiB RDMA WRITE goodput one way, two POSIX NICs
#   goodput_frac_of_raw, switch_drop_frac, fabric_dgram_qlen, and all of
#                        these again with _tuned: the fabric in a network
#                        namespace with net.unix.max_dgram_qlen raised, and
#                        with _mnicswitch: the project's switch (fabric/),
#                        whose counters split the loss by where it happened
#                        (bench/fabric.sh, issue 18 item 3)
# Live migration (issue #4), bench/dump_bench.c:
#   dump_bytes_{pd,mr,cq,srq,qp,qp_srq}  image record bytes per object
#   dump_restore_1000qp_ms  dump + restore of a 1,000-QP context, median of 5
#   mig_overhead_ratio   engine instructions per packet (64 B SEND, tx + rx)
#                        with the migration extension / without it
#   mig_resume_bytes     one keyed RESUME frame (issue 13; Ethernet .. ICRC)
# Host memory and translation (issue 14):
#   tx/rx_instr_per_pkt_{send64B,write4KiB}_mtt  as above, every ring,
#                        doorbell record and MR behind an MTT (engine_pair mtt)
#   xlate_share_pct_{send64B,write4KiB}  the translation's share of tx + rx
#                        instructions per packet in MTT mode, ICRC excluded and
#                        payload copies included (their per-page translation
#                        is in them): (mtt - physical) / mtt
#   fw_ram_bytes_per_mr_page, fw_ram_bytes_per_qp  firmware RAM per MTT entry
#                        and per QP (bench/dump_bench.c, sizeof)
#   mr_reg_us_{4k,1m,64m}, mr_dereg_us_*, mr_reg_cmds_*  mnic_reg_mr /
#                        mnic_dereg_mr time (median) and commands by buffer
#                        size on a POSIX NIC with host memory, and *_phys the
#                        same on one without (the in-run peer); how:
#                        bench/mr_reg.sh
# Congestion control (issue 18 item 4), bench/dcqcn_converge.sh:
#   dcqcn_converge_ms    two flows (POSIX NICs A->C, B->C, mnic-traffic)
#                        meeting in mnic-switch's ECN-marking queue for C:
#                        from the second flow's start until both flows' rates
#                        are within 10 % of their mean for 3 consecutive
#                        200 ms windows, median of 5 runs, -1 = did not
#                        converge; dcqcn_fair_window_frac the fraction of
#                        fair windows, dcqcn_bottleneck_drops the frames
#                        the full queue dropped; all again _off: DCQCN
#                        disabled on the senders
# Loss recovery (issue 18 item 5), bench/impaired.sh:
#   impaired_msg_rate    verified messages/s each way between two POSIX NICs
#                        under 5 % drop + 1 % dup + 5 % reorder + 0.1 %
#                        corrupt, 8 QPs (8,000 messages each way)
#   impaired_timeouts_per_loss  retransmit timeouts over frames dropped
# Doorbells and interrupts (issue 15), bench/doorbell.sh:
#   doorbell_to_wire_us_posix  host doorbell -> first frame on the wire,
#                        median (the NIC's own capture stamps), POSIX NICs
#                        with the doorbell channel; cmd_rtt_us_posix a
#                        command round trip; *_posix_nochannel the in-run
#                        peer (--doorbell off: the BAR polled);
#                        idle_cpu_pct_posix[_nochannel] an idle NIC's CPU;
#                        doorbell_to_wire_us_a15 / cmd_rtt_us_a15 an A15
#                        NIC with the ivshmem-doorbell BAR (found in its
#                        POSIX peer's capture: doorbell_to_peer_us_posix is
#                        the POSIX figure at that point), *_a15_plain the
#                        in-run ivshmem-plain peer; idle_cpu_pct_a15[_plain]
# perftest (issue 16), bench/perftest.sh: perftest_write_bw_4k_gbps_{rxe,mnic},
#   perftest_read_bw_4k_gbps_{rxe,mnic}, perftest_send_lat_64_us_{rxe,mnic}
#                        unmodified ib_write_bw / ib_read_bw (4 KiB, Gbit/s)
#                        and ib_send_lat (64 B, median us) between two rxe
#                        VMs, then two mnic VMs (POSIX NICs, ivshmem-doorbell,
#                        the provider ringing its Doorbell register page),
#                        one after the other in the same run
# The netdev (issue 16 item 2), bench/netdev.sh: netdev_tcp_rx_mbps_a15,
#   netdev_tcp_tx_mbps_a15, netdev_ping_rtt_ms_a15  256 KiB of TCP each way
#                        and ping between the x86 VM's mnic0 (QEMU A15 NIC)
#                        and a virtio peer on the switch (kmod_vm.sh's run)
# CRIU migration (issue 17), bench/criu.sh: criu_migrate_ms_qps_{1,16,64}
#                        (criu dump start -> A's first completion after the
#                        pause, a verbs process with 1/16/64 QPs moved between
#                        two x86 VMs on POSIX NICs) and, for 16 QPs,
#                        criu_checkpoint_ms, criu_transfer_ms,
#                        criu_restore_ms, criu_image_bytes
# Completion events (issue 15 item 4), bench/cq_event.sh:
#   send_lat_64_us_posix_event, send_lat_64_us_posix_poll  mnic-pingpong
#                        between two POSIX NICs, 64 B SENDs, the client's
#                        median half round trip, event-driven (-e) and
#                        busy-polled in the same run
set -euo pipefail
. "$(dirname "$0")/../qemu-board/lib.sh"
mnic_init
out=$MNIC_ROOT/build/bench; rm -rf "$out"; mkdir -p "$out"
BOARDS=${BENCH_BOARDS:-"qemu-virt-a15 qemu-virt-a72"}
IDLE_S=${BENCH_IDLE_S:-10}
log() { echo "bench: $*" >&2; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

mnic_switch_start "$out/switch"

# ---- RoCEv2 engine: instruction counts and ICRC (in process) -------------
ep=$out/engine_pair
# The engine as the unit tests build it (privates visible), with lib/ under it.
eng_cc() {   # extra-flags... sources... -o out
  gcc -std=c11 -O2 -g -D_GNU_SOURCE -I"$MNIC_ROOT"/lib/include -I"$MNIC_ROOT"/hal/include \
    -I"$MNIC_ROOT"/abi/include -I"$MNIC_ROOT"/rocev2/include -I"$MNIC_ROOT" -I"$MNIC_ROOT"/rocev2 \
    "$@" "$MNIC_ROOT"/lib/crc32.c "$MNIC_ROOT"/lib/siphash.c "$MNIC_ROOT"/lib/timer.c \
    "$MNIC_ROOT"/hal/common/dma_window.c
}
eng_cc "$MNIC_ROOT"/bench/engine_pair.c "$MNIC_ROOT"/rocev2/*.c -lz -lisal -o "$ep"
# The same engine without the migration extension (ROCEV2_MIGRATION=0).
eng_cc -DROCEV2_MIGRATION=0 "$MNIC_ROOT"/bench/engine_pair.c \
  $(ls "$MNIC_ROOT"/rocev2/*.c | grep -v -E '/(migrate|image|image_records|dump|restore)\.c$') \
  -lz -lisal -o "$ep.nomig"
# Instructions per packet in one phase, without the ICRC, payload copies and
# the pair's port, engine_pair.c's tx (or without what EXCL names); mode
# mtt: through memory translation.
EXCL_COPIES='rocev2_icrc|rocev2_sge_gather|rocev2_sge_scatter|rocev2_mem_read|rocev2_mem_write|tx'
instr_per_pkt() {   # workload phase [binary [mode]]
  local mode=${4:-phys} f=$out/cg.$1.$2.$(basename "${3:-$ep}").${4:-phys}.${EXCL:-copies} n=1000
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f" "${3:-$ep}" "$1" $n "$2" "$mode" \
    >/dev/null 2>&1 || mnic_die "engine_pair $1 $2 $mode failed under callgrind"
  callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null | awk -v n=$n -v re=":(${EXCL:-$EXCL_COPIES}) \\[" '
    /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
    $0 ~ re { gsub(",", "", $1); excl += $1 }
    END { printf "%d", (total - excl) / n }'
}
for w in send64B write4KiB; do
  arg=${w/send64B/send64}; arg=${arg/write4KiB/write4k}
  echo "tx_instr_per_pkt_$w: $(instr_per_pkt $arg tx) instructions"
  echo "rx_instr_per_pkt_$w: $(instr_per_pkt $arg rx) instructions"
  echo "rx_instr_per_pkt_${w}_ack_each: $(ENGINE_PAIR_COALESCE=0 instr_per_pkt $arg rx) instructions"
done
for w in send64B write4KiB; do
  arg=${w/send64B/send64}; arg=${arg/write4KiB/write4k}
  echo "tx_instr_per_pkt_${w}_mtt: $(instr_per_pkt $arg tx "$ep" mtt) instructions"
  echo "rx_instr_per_pkt_${w}_mtt: $(instr_per_pkt $arg rx "$ep" mtt) instructions"
  phys=$(( $(EXCL=rocev2_icrc instr_per_pkt $arg tx) + $(EXCL=rocev2_icrc instr_per_pkt $arg rx) ))
  mtt=$(( $(EXCL=rocev2_icrc instr_per_pkt $arg tx "$ep" mtt) + $(EXCL=rocev2_icrc instr_per_pkt $arg rx "$ep" mtt) ))
  echo "xlate_share_pct_$w: $(awk -v a=$mtt -v b=$phys 'BEGIN { printf "%.1f", 100 * (a - b) / a }') percent"
done
"$ep" crc 1024 | sed 's/Gbit\/s/Gbit\/s/'
for board in $BOARDS; do
  mnic_board_args "$board"
  # shellcheck disable=SC2086
  "$QEMU" $QEMU_BOARD_ARGS -kernel "$MNIC_ROOT/build/$board/icrc-bench.elf" -append "time 256" \
    >"$out/icrc-$board.log" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_pid $pid 300
  [ "$MNIC_RC" = 0 ] || mnic_die "icrc-bench on $board exited $MNIC_RC (see $out/icrc-$board.log)"
  grep '^icrc_gbps_' "$out/icrc-$board.log"
done
# Migration support's cost on the packet path: tx+rx instructions of a 64 B
# SEND with the extension built in, over the same without it.
with=$(( $(instr_per_pkt send64 tx) + $(instr_per_pkt send64 rx) ))
without=$(( $(instr_per_pkt send64 tx "$ep.nomig") + $(instr_per_pkt send64 rx "$ep.nomig") ))
echo "mig_overhead_ratio: $(awk -v a=$with -v b=$without 'BEGIN { printf "%.4f", a / b }') ratio"
eng_cc "$MNIC_ROOT"/bench/dump_bench.c "$MNIC_ROOT"/rocev2/*.c -lisal -o "$out/dump_bench"
"$out/dump_bench" || mnic_die "dump_bench failed"

# ---- RoCEv2 between two POSIX NICs, on the default and a tuned fabric ------
bash "$MNIC_ROOT/bench/fabric.sh"

# DCQCN: two flows into one ECN-marking bottleneck, time to a fair share (issue 18)
BENCH_DCQCN_OUT=$out/dcqcn bash "$MNIC_ROOT/bench/dcqcn_converge.sh"

# Loss recovery under impairment (issue 18)
BENCH_IMPAIRED_OUT=$out/impaired bash "$MNIC_ROOT/bench/impaired.sh"

# MR registration by size, host-memory mode against physical (issue 14)
bash "$MNIC_ROOT/bench/mr_reg.sh"

# Doorbell channel against the polled BAR (issue 15)
bash "$MNIC_ROOT/bench/doorbell.sh"

# Completion events: event-driven against busy-polled ping-pong (issue 15)
bash "$MNIC_ROOT/bench/cq_event.sh"

# Unmodified perftest between two VMs (issue 16): rxe and mnic in one run
bash "$MNIC_ROOT/bench/perftest.sh"

# The Ethernet netdev mnic0 through the A15 NIC (issue 16 item 2)
bash "$MNIC_ROOT/bench/netdev.sh"

# CRIU live migration of a verbs process between VMs (issue 17)
bash "$MNIC_ROOT/bench/criu.sh"

boot_once() {   # board -> ms to READY
  local board=$1 t0 t1 pid f=$out/boot.log
  : > "$f"
  t0=$(date +%s%N)
  "$MNIC_ROOT/qemu-board/nic.sh" --board "$board" --name bench-boot --mac 52:54:00:40:00:01 \
    --switch "$out/switch" --bar "$out/boot.bar" -- run >"$f" 2>&1 &
  pid=$!; mnic_track $pid
  while ! grep -q "^MNIC READY" "$f" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || mnic_die "$board NIC exited before READY (see $f)"
    [ $(( $(date +%s%N) - t0 )) -lt 30000000000 ] || mnic_die "$board NIC not READY in 30 s"
    sleep 0.002
  done
  t1=$(date +%s%N)
  kill $pid; wait $pid 2>/dev/null || true
  # the boot self-test times one Ed25519 verification (firmware/fwflash_boot.c)
  sed -n 's/^FW SIG .*ed25519 verify \([0-9]*\) us.*/\1/p' "$f" >>"$out/sig-verify-$board.us"
  echo $(( (t1 - t0) / 1000000 ))
}

idle_pct() {   # board -> percent of one core
  local board=$1 pid f=$out/idle-$1.log a b hz
  hz=$(getconf CLK_TCK)
  "$MNIC_ROOT/qemu-board/nic.sh" --board "$board" --name bench-idle --mac 52:54:00:40:00:02 \
    --switch "$out/switch" --bar "$out/idle.bar" -- run >"$f" 2>&1 &
  pid=$!; mnic_track $pid
  mnic_wait_line "$f" "^MNIC READY" 30 $pid || mnic_die "$board idle NIC not READY (see $f)"
  sleep 1
  a=$(awk '{print $14 + $15}' /proc/$pid/stat)
  sleep "$IDLE_S"
  b=$(awk '{print $14 + $15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  awk -v d=$((b - a)) -v hz="$hz" -v s="$IDLE_S" 'BEGIN { printf "%.1f", d * 100 / hz / s }'
}

for board in $BOARDS; do
  samples=()
  for i in 1 2 3 4 5; do samples+=("$(boot_once "$board")"); done
  log "boot_ms_$board samples: ${samples[*]}"
  echo "boot_ms_$board: $(printf '%s\n' "${samples[@]}" | median) ms"
  [ -s "$out/sig-verify-$board.us" ] || mnic_die "$board: no 'FW SIG ... ed25519 verify' line at boot"
  echo "sig_verify_ms_${board#qemu-virt-}: $(median <"$out/sig-verify-$board.us" | awk '{printf "%.1f", $1 / 1000}') ms"
  read -r text _ < <(tail -1 "$MNIC_ROOT/build/$board/loader/size.txt")
  echo "loader_bytes_$board: $text bytes"
  read -r text data bss _ < <(tail -1 "$MNIC_ROOT/build/$board/size.txt")
  echo "text_bytes_$board: $text bytes"
  echo "data_bytes_$board: $data bytes"
  echo "bss_bytes_$board: $bss bytes"
  echo "idle_cpu_pct_$board: $(idle_pct "$board") %"
done

# Raw frame rate: two A15 NICs, 5,000 verified frames each way.
if "$MNIC_ROOT/qemu-board/topology.sh" "$MNIC_ROOT/qemu-board/topologies/two-a15.topo" "$out/rawx" \
     --timeout 120 -- rawx peers=@PEERS@ count=5000 linger_ms=500 >&2; then
  grep -h "^RAWX PASS" "$out/rawx"/*.log >&2
  rate=$(grep -h "^RAWX PASS" "$out/rawx"/*.log | sed 's/.*rate_fps=\([0-9]*\).*/\1/' | sort -n | head -1)
  echo "raw_frame_rate: $rate frames/s"
else
  mnic_die "rawx between two A15 NICs failed (logs in $out/rawx)"
fi

# downtime_ms (issue 4): the longest gap between completions seen by A that
# spans the freeze..thaw window while B's process is live-migrated to C
# mid-stream (POSIX NICs, 2 % drop, 1 % dup, 2 % reorder;
# tests/integration/migrate_posix.sh, scenario "single", plain builds;
# tests/tools/mig-downtime.py), median of 5 runs.  (The run's largest gap
# overall can be start-up or loss recovery: not the migration's.)
samples=()
for i in 1 2 3 4 5; do
  MIG_SCENARIOS=single MIG_BYSTANDER=0 MIG_TOOLS="$MNIC_ROOT/build/host/hostdrv" \
    "$MNIC_ROOT/tests/integration/migrate_posix.sh" >"$out/migrate-$i.log" 2>&1 ||
    mnic_die "migration run $i failed (log: $out/migrate-$i.log)"
  samples+=("$(sed -n 's/^migration downtime seen by A: \([0-9.]*\) ms/\1/p' "$out/migrate-$i.log")")
done
log "downtime_ms samples: ${samples[*]}"
echo "downtime_ms: $(printf '%s\n' "${samples[@]}" | median) ms"

# Migration cost per context size (issue 6; MigrOS Figures 9-11):
# migrate_ms_qps_{1,16,64,256}, migrate_nic_ms_qps_*, dump_bytes_qps_* on
# POSIX NICs and *_qps_16_a15 on QEMU A15 NICs; how: bench/migrate.sh.
bash "$MNIC_ROOT/bench/migrate.sh"
