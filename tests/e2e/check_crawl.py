#!/usr/bin/env python3
"""check_crawl.py: compare a dcrawl output directory with gen_site.py's manifest.

Reads every per-node DIR/depth-*/*.jsonl line (one per fetch or skip) and, when given,
nginx's access log, and checks:
  - the set of canonical URLs answered 200 equals manifest within_depth[D];
  - no canonical URL was fetched twice (jsonl and, independently, nginx log);
  - nothing under /private/ (robots.txt Disallow) was requested, and the
    "skipped" lines (URLs given up without a request) are exactly such
    URLs, without WARC records;
  - merged/pages.jsonl has one line per fetched or skipped URL (when present).
Canonical form is gen_site.canonicalize, the manifest's own rule.
Prints one line per check and exits 1 if any failed.
"""
import argparse, collections, json, os, re, sys

from crawl_manifest import Report, load, page_records, server_port, skipped_records

ap = argparse.ArgumentParser()
ap.add_argument("--bench", required=True)
ap.add_argument("--manifest", required=True)
ap.add_argument("--depth", type=int, required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--access-log")
ap.add_argument("--allow-refetch", type=int, default=0,
                help="fetches of one URL tolerated beyond the first (kill test)")
a = ap.parse_args()
man, expected, canonicalize = load(a.bench, a.manifest, a.depth)
report = Report()

fetches = collections.Counter()
ok200 = set()
for _, rec in page_records(a.out):
    u = canonicalize(rec["url"], rec["url"])
    fetches[u] += 1
    if rec.get("status") == 200:
        ok200.add(u)

missing = expected - ok200
extra = ok200 - expected
report(not missing, "all %d manifest URLs fetched (missing %d%s)" % (
    len(expected), len(missing), (": " + ", ".join(sorted(missing)[:5])) if missing else ""))
report(not extra, "nothing beyond the manifest fetched (extra %d%s)" % (
    len(extra), (": " + ", ".join(sorted(extra)[:5])) if extra else ""))
dups = {u: c for u, c in fetches.items() if c > 1 + a.allow_refetch}
report(not dups, "no URL fetched twice in output (%d duplicated%s)" % (
    len(dups), (": " + ", ".join(sorted(dups)[:5])) if dups else ""))
priv = [u for u in fetches if "/private/" in u]
report(not priv, "no robots.txt-disallowed URL fetched (%d)" % len(priv))
skipped = [(canonicalize(r["url"], r["url"]), r) for _, r in skipped_records(a.out)]
bad = [u for u, r in skipped if "/private/" not in u or r.get("skipped") != "disallowed by robots.txt"
       or r.get("status") != 0 or r.get("warc_record_id")]
report(not bad and all("/private/" not in u for u in ok200),
       "robots.txt-disallowed URLs have \"skipped\" lines without records, nothing else (%d, wrong %d%s)" % (
           len(skipped), len(bad), (": " + ", ".join(u for u, _ in bad[:5])) if bad else ""))
report(not [u for u, _ in skipped if u in fetches], "no skipped URL was also fetched")

if a.access_log:
    reqs = collections.Counter()
    rx = re.compile(r'^(\S+) (\d+) (\d+) "(.*)"$')
    port = server_port(expected)
    for line in open(a.access_log, errors="replace"):
        m = rx.match(line.strip())
        if not m or m.group(4) == "/robots.txt":
            continue
        url = "http://%s:%s%s" % (m.group(1), port, m.group(4))
        reqs[canonicalize(url, url)] += 1
    ndup = {u: c for u, c in reqs.items() if c > 1 + a.allow_refetch}
    report(not ndup, "nginx log: %d page requests, no canonical URL requested twice (%d%s)" % (
        sum(reqs.values()), len(ndup), (": " + ", ".join(sorted(ndup)[:5])) if ndup else ""))
    report(set(reqs) == set(fetches), "nginx log and output agree on the URL set (%d vs %d)" % (
        len(reqs), len(fetches)))
    report(not [u for u in reqs if "/private/" in u], "nginx log: no /private/ request")

# content duplicates: every byte-identical copy fetched after its group's
# first copy is a revisit pointing into its group (manifest groups)
group_of = {}  # union-find: a copy of a copy is one group

def root(u):
    while group_of.get(u, u) != u:
        u = group_of[u]
    return u

for first, copies in man.get("dup_content_groups", {}).items():
    for u in [first] + copies:
        group_of.setdefault(u, u)
        group_of[root(u)] = root(first)
group_of = {u: root(u) for u in group_of}
dups = {}
for _, rec in page_records(a.out):
    if rec.get("duplicate_of"):
        dups[canonicalize(rec["url"], rec["url"])] = canonicalize(rec["duplicate_of"], rec["duplicate_of"])
fetched_groups = collections.Counter(group_of[u] for u in ok200 if u in group_of)
want = sum(c - 1 for c in fetched_groups.values())
wrong = [u for u, o in dups.items() if group_of.get(u) is None or group_of.get(u) != group_of.get(o)]
report(len(dups) == want and not wrong,
       "content duplicates recorded as revisits of their group (%d, expected %d, wrong %d)" % (
           len(dups), want, len(wrong)))

merged = os.path.join(a.out, "merged", "pages.jsonl")
if os.path.exists(merged):
    lines = [json.loads(l) for l in open(merged)]
    urls = [r["url"] for r in lines if not r.get("skipped")]
    nskip = len(set(u for u, _ in skipped))
    report(len(urls) == len(set(urls)) == len(fetches) and len(lines) == len(urls) + nskip,
           "merged/pages.jsonl: one line per URL (%d lines, %d URLs fetched, %d skipped)" % (
               len(lines), len(fetches), nskip))
print("check_crawl: %d failed" % report.fails)
sys.exit(1 if report.fails else 0)
