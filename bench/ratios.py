#!/usr/bin/env python3
"""ratios.py RESULTS.json...: dcrawl's figures against each peer's, from the
shared harness's results files (same run, same site, same machine)."""
import json, sys

for path in sys.argv[1:]:
    d = json.load(open(path))
    peers = {p["name"]: p for p in d["peers"]}
    me = peers.get("dcrawl")
    print("== %s" % path.rsplit("/", 1)[-1])
    if not me:
        print("  dcrawl did not run")
        continue
    print("  dcrawl: %s pages/s, %.3f CPU ms/page, peak RSS %.1f MB, %d dup fetches, coverage %s%%, robots viol. %s" % (
        me.get("pages_per_s"), me.get("cpu_ms_per_page") or 0, me.get("peak_rss_mb") or 0,
        me.get("dup_fetches", -1), me.get("coverage_pct"), me.get("robots_violations")))
    for name, p in peers.items():
        if name == "dcrawl" or not p.get("pages_per_s"):
            continue
        print("  vs %-8s pages/s x%.2f   CPU/page x%.2f   RSS x%.2f   dup fetches %d vs %d" % (
            name, me["pages_per_s"] / p["pages_per_s"],
            (me.get("cpu_ms_per_page") or 0) / (p.get("cpu_ms_per_page") or 1),
            (me.get("peak_rss_mb") or 0) / (p.get("peak_rss_mb") or 1),
            me.get("dup_fetches", -1), p.get("dup_fetches", -1)))
