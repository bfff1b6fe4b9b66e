#!/usr/bin/env python3
"""The report and the timeline plot of `make demo` (scripts/demo.sh).

Inputs, all in --dir (written by demo.sh and the tools it runs):
  timeline-a.csv, timeline-b.csv   mnic-traffic -T: per 10 ms sample
      t_s,epoch_ms,tx_msgs_s,tx_bytes_s,rx_msgs_s,rx_bytes_s,completions_s
      (a row covers the interval ending at epoch_ms)
  traffic-a.log, traffic-b.log     the applications' "TRAFFIC PASS|FAIL ..." verdicts
  migrate.json                     mnicctl --json migrate: phase times, epochs,
                                   image bytes per object type
  qps-a-after.json                 mnicctl --json qp list of NIC A after the move
  counters-c.json                  NIC C's engine counters
Outputs: the report on stdout, timeline.dat/.gp/.svg in --dir.
Exit: 0 only if nothing was lost, duplicated or reordered, no error completion
occurred, the migration succeeded and the application ended on NIC C.

Phases (epoch ms, mnicctl's timestamps and A's completion gap):
  before    traffic start .. freeze (SIGSTOP of host B's process)
  stopped   freeze .. restored: B's QPs stopped and dumped, the process's NIC
            memory copied, the image restored on C (A's QPs paused on
            NAK_STOPPED, MigrOS's Stopped/Paused states)
  restored  restored .. A's first completion after its longest gap (resume on C,
            RESUME to A, thaw, traffic restarting)
  after     .. the end of the traffic
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

PHASES = ("before", "stopped", "restored", "after")


def die(msg):
    print("demo-report: " + msg, file=sys.stderr)
    sys.exit(2)


def load_timeline(path):
    """[(start_epoch_ms, end_epoch_ms, row dict)]"""
    rows = []
    try:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                rows.append({k: float(v) for k, v in r.items()})
    except (OSError, ValueError) as e:
        die("cannot read %s: %s" % (path, e))
    out = []
    prev_t = 0.0
    for r in rows:
        iv = (r["t_s"] - prev_t) * 1e3
        prev_t = r["t_s"]
        if iv <= 0:
            continue
        out.append((r["epoch_ms"] - iv, r["epoch_ms"], r))
    return out


def parse_traffic(path):
    kv = {"verdict": "MISSING"}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"^TRAFFIC (\w+) (.*)$", line)
                if m:
                    kv["verdict"] = m.group(1)
                    for tok in m.group(2).split():
                        k, _, v = tok.partition("=")
                        kv[k] = v
    except OSError:
        pass
    return kv


def num(kv, key):
    try:
        return float(kv.get(key, "nan"))
    except ValueError:
        return float("nan")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def integrate(tl, col, t0, t1):
    """count of col (a per-second rate) over [t0, t1) epoch ms, pro rata"""
    tot = 0.0
    for s, e, r in tl:
        ov = min(e, t1) - max(s, t0)
        if ov > 0:
            tot += r[col] * ov / 1e3
    return tot


def migration_gap(tl, ep_freeze, ep_thawed):
    """the run of 10 ms samples without a completion at A that overlaps the
    move [freeze, thaw] (one sample of slack each side): (start, end,
    samples) in epoch ms, or None"""
    run = None
    for s, e, r in tl:
        if r["completions_s"] == 0:
            run = (run[0], e, run[2] + 1) if run else (s, e, 1)
            continue
        if run and run[1] >= ep_freeze - 10 and run[0] <= ep_thawed + 10:
            return run
        run = None
    if run and run[1] >= ep_freeze - 10 and run[0] <= ep_thawed + 10:
        return run
    return None


def human_bytes(b):
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return "%.2f %s" % (b / div, unit)
    return "%.0f B" % b


def migration_gap_exact(path, t0, t1):
    """(start_epoch_ms, len_ms) of the longest gap listed in PATH that
    overlaps [t0, t1], or None (no file, or no gap of 1 ms or more)."""
    best = None
    try:
        with open(path) as f:
            next(f, None)
            for line in f:
                start, length = (float(x) for x in line.split(","))
                if start <= t1 and start + length >= t0 and (not best or length > best[1]):
                    best = (start, length)
    except (OSError, ValueError):
        return None
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--qps", required=True)
    ap.add_argument("--loss-note", default="none")
    ap.add_argument("--exit-a", type=int, required=True)
    ap.add_argument("--exit-b", type=int, required=True)
    ap.add_argument("--migrate-rc", type=int, required=True)
    ap.add_argument("--c-ip", default="")
    ap.add_argument("--hostmem", type=int, default=0)
    a = ap.parse_args()
    d = a.dir

    tla = load_timeline(os.path.join(d, "timeline-a.csv"))
    tlb = load_timeline(os.path.join(d, "timeline-b.csv"))
    ta = parse_traffic(os.path.join(d, "traffic-a.log"))
    tb = parse_traffic(os.path.join(d, "traffic-b.log"))
    mig = load_json(os.path.join(d, "migrate.json")) if a.migrate_rc == 0 else None
    if not tla or not tlb:
        die("no timeline samples (see %s/traffic-*.log)" % d)

    t_start = tla[0][0]
    t_end = max(tla[-1][1], tlb[-1][1])
    problems = []

    # ---- phase boundaries ----
    gap_ms = num(ta, "max_gap_ms")
    gap_at = num(ta, "max_gap_epoch_ms")
    mgap = None
    if mig:
        ep_freeze = mig["epoch_freeze_ms"]
        ep_restored = mig["epoch_restored_ms"]
        ep_thawed = mig["epoch_thawed_ms"]
        mgap = migration_gap(tla, ep_freeze, ep_thawed)
        gap_is_mig = gap_at == gap_at and gap_at <= ep_thawed + 50 and gap_at + gap_ms >= ep_freeze
        # Exact: A's completion gaps >= 1 ms (mnic-traffic --gaps); the move's
        # is the longest one overlapping freeze..thaw.
        mig_gap = migration_gap_exact(os.path.join(d, "gaps-a.csv"), ep_freeze, ep_thawed)
        if mig_gap:
            gap_at, gap_ms = mig_gap
            gap_is_mig = True
        if gap_is_mig:
            # A's longest completion gap is the move: its end, exactly
            ep_back = max(ep_restored, gap_at + gap_ms)
        elif mgap:
            # else the first 10 ms sample after the move in which A completed
            ep_back = max(ep_restored, mgap[1])
        else:
            ep_back = ep_thawed
        bounds = [t_start, ep_freeze, ep_restored, ep_back, t_end]
    else:
        gap_is_mig = False
        bounds = [t_start, t_end, t_end, t_end, t_end]
        problems.append("the migration failed (mnicctl exit %d, see %s/migrate.log)"
                        % (a.migrate_rc, d))

    # ---- report ----
    print("=" * 78)
    print("mnic live-migration demo: %s NICs, %s QPs, loss: %s" % (a.board, a.qps, a.loss_note))
    print("host A: mnic-traffic server on NIC A; host B: client on NIC B, moved to NIC C")
    print("STAND-IN FLOW: libmnic applications, frozen and copied by mnicctl migrate;")
    print("plain `make demo` moves an unmodified verbs application with CRIU instead")
    print("=" * 78)
    print("phase      start_s   len_ms   A->B msg/s   A->B MB/s   B->A msg/s   B->A MB/s")
    for i, ph in enumerate(PHASES):
        t0, t1 = bounds[i], bounds[i + 1]
        ln = t1 - t0
        if ln <= 0:
            print("%-9s %8.3f %8.1f   (empty)" % (ph, (t0 - t_start) / 1e3, 0.0))
            continue
        # each direction at its receiver: A->B on B's timeline, B->A on A's
        ab_m = integrate(tlb, "rx_msgs_s", t0, t1) / (ln / 1e3)
        ab_b = integrate(tlb, "rx_bytes_s", t0, t1) / (ln / 1e3)
        ba_m = integrate(tla, "rx_msgs_s", t0, t1) / (ln / 1e3)
        ba_b = integrate(tla, "rx_bytes_s", t0, t1) / (ln / 1e3)
        print("%-9s %8.3f %8.1f %12.0f %11.3f %12.0f %11.3f"
              % (ph, (t0 - t_start) / 1e3, ln, ab_m, ab_b / 1e6, ba_m, ba_b / 1e6))
    print("(messages = verified SEND and WRITE_WITH_IMM deliveries at the receiver; "
          "10 ms samples, pro rata)")
    print()

    sent = num(ta, "sent") + num(tb, "sent")
    recv = num(ta, "received") + num(tb, "received")
    keys = ("lost", "dup", "ooo", "bad", "errors", "read_bad", "atomic_bad")
    tot = {k: num(ta, k) + num(tb, k) for k in keys}
    txb = num(ta, "tx_bytes") + num(tb, "tx_bytes")
    rxb = num(ta, "rx_bytes") + num(tb, "rx_bytes")
    print("totals (both directions)")
    print("  sent            %12.0f messages  %s" % (sent, human_bytes(txb)))
    print("  received        %12.0f messages  %s (verified: seq + CRC32C + payload)"
          % (recv, human_bytes(rxb)))
    print("  lost            %12.0f" % tot["lost"])
    print("  duplicated      %12.0f" % tot["dup"])
    print("  out of order    %12.0f" % tot["ooo"])
    print("  corrupt         %12.0f" % tot["bad"])
    print("  error compl.    %12.0f" % tot["errors"])
    print("  READs           %12.0f  wrong data: %.0f"
          % (num(ta, "reads") + num(tb, "reads"), tot["read_bad"]))
    print("  atomics         %12.0f  wrong value: %.0f (FETCH_ADD/CMP_SWAP exactly once)"
          % (num(ta, "atomics") + num(tb, "atomics"), tot["atomic_bad"]))
    print("  host A: %s exit %d, host B: %s exit %d, migrations seen by B: %s, B ends on %s"
          % (ta["verdict"], a.exit_a, tb["verdict"], a.exit_b, tb.get("migrations", "?"),
             tb.get("device", "?")))
    print()

    for k in keys:
        if not tot[k] == 0:
            problems.append("%s=%s" % (k, "%.0f" % tot[k] if tot[k] == tot[k] else "unknown"))
    if sent != recv:
        problems.append("sent %.0f != received %.0f" % (sent, recv))
    if ta["verdict"] != "PASS" or tb["verdict"] != "PASS" or a.exit_a or a.exit_b:
        problems.append("an application did not PASS (see %s/traffic-*.log)" % d)
    if tb.get("migrations") != "1" or not tb.get("device", "").endswith("/c.bar"):
        problems.append("host B's application did not end on NIC C")

    if mig and a.hostmem and (not mig.get("hostmem_pages") or not mig.get("mtts_refilled")):
        problems.append("the NICs have host memory, yet no page moved or no MTT was refilled")
    print("migration (mnicctl migrate --pid: freeze, dump, copy, restore, resume, thaw)")
    if mig:
        print("  checkpoint      %10.3f ms   (DUMP_CONTEXT on NIC B)" % mig["checkpoint_ms"])
        print("  transfer        %10.3f ms   (process's NIC memory, %s bytes)"
              % (mig["transfer_ms"], mig["user_area_bytes"]))
        if mig.get("hostmem_pages"):
            print("  host memory     %10d pages onto NIC C's host memory, %d at the frame they "
                  "had; %d MTTs refilled" % (mig["hostmem_pages"], mig["hostmem_same_frames"],
                                            mig["mtts_refilled"]))
        print("  restore         %10.3f ms   (RESTORE_OBJECT(IMAGE) on NIC C%s)"
              % (mig["restore_ms"], ", WRITE_MTT of C's pages" if mig.get("hostmem_pages") else ""))
        print("  resume          %10.3f ms   (RESUME_CONTEXT: RESUME to every peer QP)"
              % mig["resume_ms"])
        print("  frozen          %10.3f ms   (process stopped: freeze to thaw)" % mig["frozen_ms"])
        print("  freeze->resumed %10.3f ms"
              % (mig["epoch_resumed_ms"] - mig["epoch_freeze_ms"]))
        if gap_is_mig:
            print("  downtime seen by A %7.3f ms   (A's gap between completions across "
                  "the move)" % gap_ms)
        elif mgap:
            print("  downtime seen by A  %3.0f..%-3.0f ms  (A completed nothing in %d consecutive "
                  "10 ms samples at the move)" % (mgap[2] * 10, mgap[2] * 10 + 20, mgap[2]))
            print("  largest gap between A's completions %.3f ms at t=%.3f s: not the move"
                  % (gap_ms, (gap_at - t_start) / 1e3))
        else:
            print("  downtime seen by A   < 20 ms    (no 10 ms sample without a completion at "
                  "A; largest gap %.3f ms at t=%.3f s)" % (gap_ms, (gap_at - t_start) / 1e3))
        print("  dump image      %10d bytes" % mig["image_bytes"])
        for t, o in mig["objects"].items():
            if o["count"]:
                print("    %-8s %5d objects %9d bytes" % (t, o["count"], o["bytes"]))
    else:
        print("  FAILED (see %s/migrate.log)" % d)
    qa = load_json(os.path.join(d, "qps-a-after.json"))
    if qa is not None and a.c_ip:
        dips = sorted(set(q.get("dgid") for q in qa))
        paused = sum(q.get("paused", 0) for q in qa)
        ok = dips == [a.c_ip] and paused == 0
        print("  A's %d QPs after the move address %s, %d paused: %s"
              % (len(qa), ",".join(str(x) for x in dips), paused, "yes" if ok else "NO"))
        if not ok:
            problems.append("A's QPs do not all address NIC C (%s)" % a.c_ip)
    cc = load_json(os.path.join(d, "counters-c.json"))
    if cc and "engine" in cc:
        e = cc["engine"]
        print("  NIC C: RESUMEs sent %s, acked %s"
              % (e.get("mig_resumes_sent", "?"), e.get("mig_resumes_acked", "?")))
    print()

    plot(d, tla, tlb, t_start, bounds, a)
    print("timeline: %s" % os.path.join(d, "timeline.svg"))
    if problems:
        print("RESULT: FAIL: " + "; ".join(problems))
        return 1
    print("RESULT: PASS: nothing lost, duplicated or reordered across the migration")
    return 0


def rebin(tl, t_start, t_end, width_ms, col):
    n = max(1, int((t_end - t_start) / width_ms + 0.999))
    out = []
    for i in range(n):
        t0 = t_start + i * width_ms
        t1 = min(t0 + width_ms, t_end)
        out.append(integrate(tl, col, t0, t1) / ((t1 - t0) / 1e3) if t1 > t0 else 0.0)
    return out


def plot(d, tla, tlb, t_start, bounds, a):
    t_end = bounds[-1]
    total_s = (t_end - t_start) / 1e3
    # the whole run in ~300 bins (a multiple of the 10 ms samples), and a
    # zoom on the migration at the samples' own 10 ms resolution
    width = max(10.0, round(total_s * 1e3 / 300 / 10) * 10)
    ab = rebin(tlb, t_start, t_end, width, "rx_bytes_s")
    ba = rebin(tla, t_start, t_end, width, "rx_bytes_s")
    with open(os.path.join(d, "timeline.dat"), "w") as f:
        f.write("# t_s  A->B_MBps  B->A_MBps  (bins of %.0f ms, at the receiver)\n" % width)
        for i in range(len(ab)):
            f.write("%.3f %.4f %.4f\n" % ((i + 0.5) * width / 1e3, ab[i] / 1e6, ba[i] / 1e6))
    # the zoom: the raw 10 ms samples of each receiver, each drawn over its
    # own interval (steps from the sample's start)
    z0 = max(t_start, bounds[1] - 400.0)
    z1 = min(t_end, bounds[3] + 600.0)
    for name, tl in (("zoom-ab.dat", tlb), ("zoom-ba.dat", tla)):
        with open(os.path.join(d, name), "w") as f:
            f.write("# t_s (sample start)  MB/s at the receiver (10 ms samples)\n")
            last = None
            for s_, e, r in tl:
                if e < z0 or s_ > z1:
                    continue
                f.write("%.4f %.4f\n" % ((s_ - t_start) / 1e3, r["rx_bytes_s"] / 1e6))
                last = (e, r)
            if last:
                f.write("%.4f %.4f\n" % ((last[0] - t_start) / 1e3, last[1]["rx_bytes_s"] / 1e6))
    sec = [(b - t_start) / 1e3 for b in bounds]
    colors = {"stopped": "#d62728", "restored": "#ff7f0e"}
    shade = []
    for i, ph in enumerate(PHASES):
        if ph in colors and sec[i + 1] > sec[i]:
            shade.append((sec[i], sec[i + 1], colors[ph]))
    gp = ['set terminal svg size 1100,760 dynamic font "sans,12" background rgb "white"',
          'set output "%s"' % os.path.join(d, "timeline.svg"),
          'set multiplot layout 2,1 title "Live migration of a running RDMA application: '
          '%s NICs, %s QPs (host B: NIC B -> NIC C)" font "sans,14"' % (a.board, a.qps),
          'set grid', 'set key top right opaque box',
          'set ylabel "MB/s (verified, at the receiver)"', 'set yrange [0:*]']
    rects = []
    for i, (x0, x1, c) in enumerate(shade):
        rects.append('set object %d rect from %.4f, graph 0 to %.4f, graph 1 behind '
                     'fc rgb "%s" fs transparent solid 0.25 noborder' % (i + 1, x0, x1, c))
    # phase markers as vertical lines (the stopped window may be a few ms wide)
    arrows = []
    for i, x in enumerate(sec[1:4]):
        arrows.append('set arrow %d from %.4f, graph 0 to %.4f, graph 1 nohead '
                      'dt 2 lc rgb "#555555"' % (i + 1, x, x))
    gp += ['set title "whole run (%.0f ms bins); dashed: freeze, restored, traffic back at A"'
           % width, 'set xlabel "time since traffic start (s)"',
           'set xrange [0:%.3f]' % total_s]
    gp += rects + arrows
    gp += ['set label 1 "migration" at %.4f, graph 0.95 left offset 0.5,0 tc rgb "#d62728"'
           % sec[1],
           'plot "%s" u 1:2 w l lw 2 lc rgb "#1f77b4" t "A -> B (NIC B, then NIC C)", '
           '"" u 1:3 w l lw 2 lc rgb "#2ca02c" t "B -> A"' % os.path.join(d, "timeline.dat")]
    gp += ['unset label 1',
           'set title "around the migration (10 ms bins): red = stopped (dump, copy, restore), '
           'orange = restored until A completes again"',
           'set xrange [%.3f:%.3f]' % ((z0 - t_start) / 1e3, (z1 - t_start) / 1e3),
           'plot "%s" u 1:2 w steps lw 2 lc rgb "#1f77b4" t "A -> B", '
           '"%s" u 1:2 w steps lw 2 lc rgb "#2ca02c" t "B -> A"'
           % (os.path.join(d, "zoom-ab.dat"), os.path.join(d, "zoom-ba.dat")),
           'unset multiplot']
    with open(os.path.join(d, "timeline.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run(["gnuplot", os.path.join(d, "timeline.gp")], capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(os.path.join(d, "timeline.svg")):
        die("gnuplot failed: %s" % r.stderr.strip())


if __name__ == "__main__":
    sys.exit(main())
