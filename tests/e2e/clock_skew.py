#!/usr/bin/env python3
"""clock_skew.py: how far each node's clock is from nginx's, measured.

For every page a node wrote, its JSON line's fetched_at (the node's wall
clock when the request started) minus nginx's start of the same request
in the access log (cluster-lib.sh's format: $msec - $request_time, the
site's clock, which is the machine's). Prints "NODE SECONDS" per node: the
median difference, so libfaketime's offset shows as about +30 or -30.
Usage: clock_skew.py ACCESS_LOG OUTDIR...  (OUTDIR's name is the node id)
"""
import datetime, glob, json, os, re, statistics, sys

LINE = re.compile(r'^dcn (\S+) (\d+) ([0-9.]+) ([0-9.]+) "(.*)" "(.*)"$')
start = {}
for line in open(sys.argv[1], errors="replace"):
    m = LINE.match(line.rstrip("\n"))
    if m:
        start[(m.group(5), m.group(1), m.group(6))] = float(m.group(3)) - float(m.group(4))
for out in sys.argv[2:]:
    node = os.path.basename(os.path.normpath(out))
    diffs = []
    for path in glob.glob(os.path.join(out, "depth-*", "*.jsonl")):
        for line in open(path, errors="replace"):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            at = rec.get("fetched_at")
            if rec.get("skipped") or not at:
                continue
            parts = rec["url"].split("/", 3)  # http: '' host:port path
            if len(parts) < 3:
                continue
            addr = parts[2].rsplit(":", 1)[0]
            t0 = start.get((node, addr, "/" + (parts[3] if len(parts) > 3 else "")))
            if t0 is None:
                continue
            t = datetime.datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
            diffs.append(t - t0)
    print("%s %s" % (node, "%.1f" % statistics.median(diffs) if diffs else "none"))
