#!/usr/bin/env python3
"""The report and timeline plot of `make demo` (scripts/demo-criu.sh): CRIU
live-migrates an unmodified verbs application between host VMs.

Inputs, all in --dir:
  timeline-a.csv     ibv-traffic -T on host A (the peer that stays): a row
                     every 100 ms, t_s,epoch_ms,tx_msgs_s,tx_bytes_s,
                     rx_msgs_s,rx_bytes_s,completions_s (A's wall clock)
  server.txt, client.txt   the two ends' "ibv-traffic: PASS|FAIL ..." lines
  mig1.env           tests/interop/criu.sh criu_migrate: epochs (this
                     host's clock, ms), phase times, image bytes, CRIU's times
  dump1.txt          the plugin's lines (image bytes per object type)
  counters-a.txt     NIC A's engine counters after the run
  clock-a.txt        A's wall clock minus this host's (ms)
Outputs: the report on stdout, timeline.dat/.gp/.svg in --dir.
Exit: 0 only if both ends verified everything (nothing lost, duplicated,
reordered or corrupt, every READ and atomic right, no error completion) and
the process was restored on host C.

Phases (this host's clock; A's samples shifted by A's clock offset):
  before    traffic start .. criu dump starts on B
  stopped   .. A's first completion after its longest gap: the context
            Stopped on B (A's QP paused on NAK_STOPPED), pages and images
            moved, the objects recreated on C, RESUME to A
  after     .. the end of the traffic
"""
import argparse
import csv
import os
import re
import subprocess
import sys


def die(msg):
    print("demo-report: " + msg, file=sys.stderr)
    sys.exit(2)


def read_env(path):
    kv = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            if k:
                kv[k] = v
    return kv


def verdict(path):
    with open(path) as f:
        for line in f:
            if line.startswith("ibv-traffic: PASS") or line.startswith("ibv-traffic: FAIL"):
                toks = line.split()
                kv = {"verdict": toks[1]}
                for i in range(2, len(toks) - 1):
                    if re.match(r"^[a-z_]+$", toks[i]) and re.match(r"^[0-9.]+$", toks[i + 1]):
                        kv[toks[i]] = float(toks[i + 1])
                kv["peer"] = "PASS" if " peer PASS" in line else "FAIL"
                return kv
    return {"verdict": "MISSING", "peer": "?"}


def timeline(path, offset_ms):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append({k: float(v) for k, v in r.items()})
    for r in rows:
        r["epoch_ms"] -= offset_ms      # onto this host's clock
    return rows


def counters(path):
    c = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 2 and p[1].isdigit():
                    c[p[0]] = int(p[1])
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ops", type=int, required=True)
    ap.add_argument("--rate", type=int, required=True)
    a = ap.parse_args()
    d = a.dir
    for f in ("timeline-a.csv", "server.txt", "client.txt", "mig1.env"):
        if not os.path.exists(os.path.join(d, f)):
            die("missing %s in %s (the run did not get that far: see the logs there)" % (f, d))
    mig = read_env(os.path.join(d, "mig1.env"))
    off = 0.0
    try:
        off = float(open(os.path.join(d, "clock-a.txt")).read().strip() or 0)
    except (OSError, ValueError):
        pass
    tla = timeline(os.path.join(d, "timeline-a.csv"), off)
    if not tla:
        die("timeline-a.csv is empty")
    va, vb = verdict(os.path.join(d, "server.txt")), verdict(os.path.join(d, "client.txt"))
    ep_dump = float(mig["epoch_dump_ms"])
    ep_restored = float(mig["epoch_restored_ms"])
    # A's longest gap between completing samples around the migration: its
    # end (the first completing sample after it) is when traffic resumed
    gap_end, gap = ep_restored, 0.0
    last = tla[0]["epoch_ms"]
    for r in tla:
        if r["completions_s"] > 0:
            if (r["epoch_ms"] - 100 - last > gap and last >= ep_dump - 2000 and
                    r["epoch_ms"] <= ep_restored + 5000):
                gap, gap_end = r["epoch_ms"] - 100 - last, r["epoch_ms"]
            last = r["epoch_ms"]
    ep_resume = max(gap_end - 100, ep_dump)
    bounds = [tla[0]["epoch_ms"] - 100, ep_dump, ep_resume, tla[-1]["epoch_ms"]]
    names = ("before", "stopped", "after")
    print("make demo: CRIU live-migrates an unmodified verbs application (ibv-traffic on")
    print("libibverbs and the mnic provider) from host VM B to host VM C; host A's peer QP")
    print("pauses on NAK_STOPPED and follows the RESUME.  %d operations each way, paced at"
          % a.ops)
    print("%d/s: SEND, WRITE_WITH_IMM, READ, FETCH_ADD, CMP_SWAP, every byte checked." % a.rate)
    print()
    print("phase      from_s   to_s   A rx msgs   A rx MB   A tx msgs   A tx MB")
    t0 = bounds[0]
    for i, n in enumerate(names):
        lo, hi = bounds[i], bounds[i + 1]
        rx = rxb = tx = txb = 0.0
        for r in tla:
            if lo < r["epoch_ms"] <= hi:
                rx += r["rx_msgs_s"] * 0.1
                rxb += r["rx_bytes_s"] * 0.1
                tx += r["tx_msgs_s"] * 0.1
                txb += r["tx_bytes_s"] * 0.1
        print("%-9s %7.2f %6.2f %11.0f %9.2f %11.0f %9.2f"
              % (n, (lo - t0) / 1e3, (hi - t0) / 1e3, rx, rxb / 1e6, tx, txb / 1e6))
    print("(stopped: criu dump starts on B .. A completes again; criu restore on C"
          " returned at %.2f s)" % ((ep_restored - t0) / 1e3))
    print()
    print("totals (the applications' own verdicts)")
    for side, v in (("host A (server)", va), ("host B -> C (client)", vb)):
        print("  %-22s %s: ops %.0f, messages sent %.0f, received %.0f, reads %.0f, atomics %.0f"
              % (side, v["verdict"], v.get("ops", 0), v.get("msgs_tx", 0), v.get("msgs_rx", 0),
                 v.get("reads", 0), v.get("atomics", 0)))
    tot = {k: va.get(k, 0) + vb.get(k, 0) for k in ("lost", "dup", "ooo", "bad", "bad_read",
                                                      "bad_atomic", "errors")}
    print("  lost %.0f, duplicated %.0f, out of order %.0f, corrupt %.0f, bad READs %.0f,"
          " bad atomics %.0f, error completions %.0f"
          % (tot["lost"], tot["dup"], tot["ooo"], tot["bad"], tot["bad_read"], tot["bad_atomic"],
             tot["errors"]))
    print()
    print("migration (criu dump on B -> page server and images over mnic0 -> criu restore on C)")
    print("  checkpoint   %6s ms   criu dump (the plugin's DUMP stops the context first)"
          % mig.get("checkpoint_ms", "?"))
    print("  transfer     %6s ms   the images CRIU does not stream, over mnic0; B's address to C"
          % mig.get("transfer_ms", "?"))
    print("  restore      %6s ms   criu restore (objects recreated, pages pinned, RESUME)"
          % mig.get("restore_ms", "?"))
    print("  CRIU's own   dump %s ms, restore %s ms (their logs' 'finished successfully')"
          % (mig.get("criu_dump_ms") or "?", mig.get("criu_restore_ms") or "?"))
    print("  downtime seen by A: %.0f ms (its longest gap between completions, ibv-traffic)"
          % va.get("max_gap_ms", -1))
    print("  images       %s bytes in all (memory pages included)" % mig.get("image_bytes", "?"))
    try:
        dl = open(os.path.join(d, "dump1.txt")).read()
        m = re.search(r"image (\d+) bytes \(PD (\d+)/(\d+) MR (\d+)/(\d+) CQ (\d+)/(\d+) QP (\d+)/(\d+)", dl)
        if m:
            g = [int(x) for x in m.groups()]
            print("  RDMA image   %d bytes: PD %d (%d B), MR %d (%d B), CQ %d (%d B), QP %d (%d B)"
                  % tuple(g))
    except OSError:
        pass
    c = counters(os.path.join(d, "counters-a.txt"))
    print("  NIC A: NAK_STOPPED taken %s, pauses %s, RESUMEs taken %s, pause timeouts %s"
          % (c.get("comp_naks_stopped", "?"), c.get("mig_pauses", "?"), c.get("resp_resumes", "?"),
             c.get("mig_pause_timeouts", "?")))
    plot(d, tla, bounds)
    ok = (va["verdict"] == "PASS" and vb["verdict"] == "PASS" and va["peer"] == "PASS" and
          all(v == 0 for v in tot.values()) and mig.get("to") == "c")
    print()
    print("RESULT: %s" % ("PASS: nothing lost, duplicated or out of order; the process runs on host C"
                          if ok else "FAIL (see above and the logs in %s)" % d))
    return 0 if ok else 1


def plot(d, tla, bounds):
    t0 = bounds[0]
    with open(os.path.join(d, "timeline.dat"), "w") as f:
        for r in tla:
            f.write("%.2f %.4f %.4f\n" % ((r["epoch_ms"] - t0) / 1e3, r["rx_bytes_s"] / 1e6,
                                          r["tx_bytes_s"] / 1e6))
    marks = "".join("set arrow from %.2f, graph 0 to %.2f, graph 1 nohead dt 2\n"
                    % ((b - t0) / 1e3, (b - t0) / 1e3) for b in bounds[1:3])
    with open(os.path.join(d, "timeline.gp"), "w") as f:
        f.write("set terminal svg size 900,360 dynamic\nset output '%s'\n"
                "set title 'host A: RDMA traffic while CRIU moves its peer B -> C (dashed: criu dump, A completes again)'\n"
                "set xlabel 'seconds'\nset ylabel 'MB/s'\nset key top right\n%s"
                "plot '%s' using 1:2 with lines title 'A received', '' using 1:3 with lines title 'A sent'\n"
                % (os.path.join(d, "timeline.svg"), marks, os.path.join(d, "timeline.dat")))
    r = subprocess.run(["gnuplot", os.path.join(d, "timeline.gp")], capture_output=True, text=True)
    if r.returncode:
        print("demo-report: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
    else:
        print("  timeline     %s" % os.path.join(d, "timeline.svg"))


if __name__ == "__main__":
    sys.exit(main())
