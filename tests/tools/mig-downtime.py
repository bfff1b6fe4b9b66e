#!/usr/bin/env python3
"""Downtime of a live migration as the non-migrating side saw it.

  mig-downtime.py MIGRATE_LOG GAPS_CSV

MIGRATE_LOG is `mnicctl migrate` output (its "timeline ... (epoch ms)" line,
or --json with epoch_freeze_ms/epoch_thawed_ms); GAPS_CSV is
`mnic-traffic --gaps` of the peer (start_epoch_ms,len_ms, every gap >= 1 ms
between its completions).  Prints the longest gap that overlaps the window
from freeze to thaw, in ms ("0.000" when none reached 1 ms).  Exit 2 with a
message on unreadable input."""
import json
import re
import sys


def window(path):
    text = open(path).read()
    m = re.search(r"timeline\s+freeze ([0-9.]+) .* thawed ([0-9.]+)", text)
    if m:
        return float(m.group(1)), float(m.group(2))
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            if "epoch_freeze_ms" in d:
                return float(d["epoch_freeze_ms"]), float(d["epoch_thawed_ms"])
    raise ValueError("no freeze/thaw timeline in " + path)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mig-downtime.py MIGRATE_LOG GAPS_CSV")
    try:
        t0, t1 = window(sys.argv[1])
        best = 0.0
        with open(sys.argv[2]) as f:
            next(f)
            for line in f:
                start, length = (float(x) for x in line.split(","))
                if start <= t1 and start + length >= t0:
                    best = max(best, length)
    except (OSError, ValueError, StopIteration) as e:
        print("mig-downtime: %s" % e, file=sys.stderr)
        sys.exit(2)
    print("%.3f" % best)


if __name__ == "__main__":
    main()
