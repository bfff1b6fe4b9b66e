#!/usr/bin/env python3
"""Check mnic-switch's counters (its --stats JSON) against the conservation
rules of fabric/mnic_switch.c's header comment, then optional conditions.

  switch_stats.py STATS.json [--expect EXPR]... [--show]

Per port:
  rx = malformed + in_frames
  in_frames - in_dropped + in_duplicated - in_held = forwarded + flooded + filtered
  offered = out_frames
  out_frames - out_dropped + out_duplicated - out_held
      = tx + dropped_queue_full + dropped_send_error + dropped_closed + queued
Over all ports: sum(offered) = sum(forwarded + flood_copies).

--expect EXPR: a Python expression over `ports` (the list of port dicts),
`by_mac` (dict mac -> port dict) and `total(key)` (sum over ports), which
must be true, e.g. --expect 'by_mac["52:54:00:00:00:01"]["impaired_drop"] > 0'.
Exit 0 when every rule holds, 1 with one line per violation.
"""
import json
import sys


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        st = json.load(f)
    ports = st["ports"]
    exprs, show, i = [], False, 2
    while i < len(argv):
        if argv[i] == "--expect":
            exprs.append(argv[i + 1])
            i += 2
        elif argv[i] == "--show":
            show, i = True, i + 1
        else:
            sys.exit(f"switch_stats.py: unknown argument {argv[i]}")
    bad = []
    for p in ports:
        n = p["port"]
        if p["rx"] != p["malformed"] + p["in_frames"]:
            bad.append(f"port {n}: rx {p['rx']} != malformed + in_frames")
        passed = p["in_frames"] - p["in_dropped"] + p["in_duplicated"] - p["in_held"]
        if passed != p["forwarded"] + p["flooded"] + p["filtered"]:
            bad.append(f"port {n}: {passed} frames passed ingress, forwarded + flooded + "
                       f"filtered = {p['forwarded'] + p['flooded'] + p['filtered']}")
        if p["offered"] != p["out_frames"]:
            bad.append(f"port {n}: offered {p['offered']} != out_frames {p['out_frames']}")
        left = p["out_frames"] - p["out_dropped"] + p["out_duplicated"] - p["out_held"]
        fate = (p["tx"] + p["dropped_queue_full"] + p["dropped_send_error"] +
                p["dropped_closed"] + p["queued"])
        if left != fate:
            bad.append(f"port {n}: {left} frames left egress impairment, tx + drops + "
                       f"queued = {fate}")
    total = lambda k: sum(p[k] for p in ports)
    if total("offered") != total("forwarded") + total("flood_copies"):
        bad.append(f"sum offered {total('offered')} != sum forwarded + flood_copies "
                   f"{total('forwarded') + total('flood_copies')}")
    env = {"ports": ports, "by_mac": {p["mac"]: p for p in ports}, "total": total,
           "stats": st, "json": json}
    for e in exprs:
        try:
            ok = eval(e, {}, env)
        except Exception as ex:  # a bad expression is a failed check
            ok, e = False, f"{e} ({ex})"
        if not ok:
            bad.append(f"expected: {e}")
    if show or bad:
        for p in ports:
            print("  port %d %s: " % (p["port"], p["mac"]) + " ".join(
                f"{k}={p[k]}" for k in ("rx", "tx", "forwarded", "flooded", "flood_copies",
                                        "filtered", "offered", "waited", "queue_max",
                                        "dropped_queue_full", "dropped_send_error",
                                        "dropped_closed", "impaired_drop", "impaired_dup",
                                        "impaired_reorder", "impaired_corrupt", "ecn_marked")))
    for b in bad:
        print("switch_stats: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
