#!/usr/bin/env python3
"""check_cluster.py: check a multi-node crawl against gen_site.py's manifest.

Inputs: the nodes' output directories (--out, repeatable; DIR/depth-*/*.jsonl,
one line per fetch, "node" names the writer) and nginx's access log written
in cluster-lib.sh's format, one line per request:
    dcn <server addr> <status> <msec> <request_time> "<X-Dcrawl-Node>" "<uri>"
($msec is when the response ended, so a request ran from msec - request_time
to msec.) Lines of any other format (nginx's own probes before the switch)
and the log probe URI are ignored.

Checks (one line each, exit 1 if any failed):
  - the union of 200-answered URLs over all outputs equals manifest
    within_depth[D], nothing beyond it;
  - duplicate fetches (fetches of a canonical URL beyond its first), in the
    outputs and, independently, in the nginx log: at most --allow-dups;
  - the log and the outputs agree on the URL set; no /private/ request;
  - every request carries X-Dcrawl-Node naming one of --nodes;
  - per host, requests of different nodes never overlap in time: a request
    of node X starting at s needs every earlier request of another node on
    that host to have ended by s + 0.001 s. Requests without the header are
    attributed through the outputs (the node whose output holds that URL,
    when exactly one does) and the line says so;
  - robots.txt: at most one request per (host, node); reported per host;
  - --balance F: pages per node (output lines) within F of the mean;
  - --expect-fetching ID: node ID sent page requests (log) and wrote pages.
Canonical form and the expected set come from crawl_manifest.py (shared with
check_crawl.py).
"""
import argparse, collections, os, re, sys

from crawl_manifest import Report, load, page_records, server_port

PROBE_URI = "/dcrawl-log-probe"
LINE = re.compile(r'^dcn (\S+) (\d+) ([0-9.]+) ([0-9.]+) "(.*)" "(.*)"$')

ap = argparse.ArgumentParser()
ap.add_argument("--bench", required=True)
ap.add_argument("--manifest", required=True)
ap.add_argument("--depth", type=int, required=True)
ap.add_argument("--out", action="append", required=True, help="a node's output dir")
ap.add_argument("--access-log", required=True)
ap.add_argument("--nodes", default="", help="node ids expected in the log (comma separated)")
ap.add_argument("--allow-dups", type=int, default=0,
                help="duplicate fetches tolerated in total (kill test: the dead node's in-flight count)")
ap.add_argument("--balance", type=float, help="pages per node within this fraction of the mean")
ap.add_argument("--expect-fetching", action="append", default=[],
                help="node id that must have fetched pages")
a = ap.parse_args()

man, expected, canonicalize = load(a.bench, a.manifest, a.depth)
port = server_port(expected)
report = Report()


def some(xs, n=5):
    xs = sorted(xs)
    return (": " + ", ".join(str(x) for x in xs[:n]) + (" ..." if len(xs) > n else "")) if xs else ""


def canon(u):
    return canonicalize(u, u)


# outputs: fetches per URL, 200 set, pages per node, URL -> writer nodes
fetches = collections.Counter()
ok200 = set()
pages = collections.Counter()
writers = collections.defaultdict(set)
for out in a.out:
    for _, rec in page_records(out):
        u = canon(rec["url"])
        node = rec.get("node") or os.path.basename(os.path.normpath(out))
        fetches[u] += 1
        pages[node] += 1
        writers[u].add(node)
        if rec.get("status") == 200:
            ok200.add(u)

missing = expected - ok200
extra = ok200 - expected
report(not missing, "all %d manifest URLs fetched by the union of %d outputs (missing %d%s)" % (
    len(expected), len(a.out), len(missing), some(missing)))
report(not extra, "nothing beyond the manifest fetched (extra %d%s)" % (len(extra), some(extra)))
odup = sum(c - 1 for c in fetches.values() if c > 1)
report(odup <= a.allow_dups, "outputs: %d duplicate fetches (allowed %d)%s" % (
    odup, a.allow_dups, some(u for u, c in fetches.items() if c > 1)))

# nginx log
reqs = []  # (host, start, end, node or None, uri, status)
bad_lines = 0
for line in open(a.access_log, errors="replace"):
    m = LINE.match(line.rstrip("\n"))
    if not m:
        bad_lines += 1
        continue
    addr, status, msec, rtime, node, uri = m.groups()
    if uri == PROBE_URI:
        continue
    end = float(msec)
    reqs.append((addr, end - float(rtime), end, node if node not in ("", "-") else None, uri, int(status)))
print("# nginx log: %d requests, %d lines of another format skipped" % (len(reqs), bad_lines))
report(reqs, "nginx log has requests in the node format")

page_reqs = collections.Counter()
robots = collections.Counter()  # (host, node) -> robots.txt requests
for host, s, e, node, uri, st in reqs:
    if uri == "/robots.txt":
        robots[(host, node)] += 1
    else:
        page_reqs[canon("http://%s:%s%s" % (host, port, uri))] += 1
ldup = sum(c - 1 for c in page_reqs.values() if c > 1)
report(ldup <= a.allow_dups, "nginx log: %d page requests, %d duplicate requests of a canonical URL "
       "(allowed %d)%s" % (sum(page_reqs.values()), ldup, a.allow_dups,
                          some(u for u, c in page_reqs.items() if c > 1)))
report(set(page_reqs) == set(fetches), "nginx log and outputs agree on the URL set (%d vs %d; "
       "only in log %d, only in outputs %d)" % (len(page_reqs), len(fetches),
                                                len(set(page_reqs) - set(fetches)),
                                                len(set(fetches) - set(page_reqs))))
report(not [u for u in page_reqs if "/private/" in u], "nginx log: no /private/ request")

# node header
known = set(x for x in a.nodes.split(",") if x)
nohdr = sum(1 for r in reqs if r[3] is None)
unknown = collections.Counter(r[3] for r in reqs if r[3] is not None and known and r[3] not in known)
report(reqs and nohdr == 0 and not unknown,
       "every request carries X-Dcrawl-Node naming a node (%d without, %d with an unknown id%s)" % (
           nohdr, sum(unknown.values()), some(unknown)))
by_hdr = collections.Counter(r[3] for r in reqs if r[3] is not None and r[4] != "/robots.txt")
if by_hdr:
    print("# page requests per node (header): " + ", ".join("%s %d" % kv for kv in sorted(by_hdr.items())))


# per host: no two nodes at a time
def node_of(r):
    if r[3] is not None:
        return r[3], False
    if r[4] == "/robots.txt":
        return None, False
    w = writers.get(canon("http://%s:%s%s" % (r[0], port, r[4])), set())
    return (next(iter(w)), True) if len(w) == 1 else (None, False)


per_host = collections.defaultdict(list)
fallback = unattributed = 0
for r in reqs:
    node, fb = node_of(r)
    fallback += fb
    if node is None:
        unattributed += 1
        continue
    per_host[r[0]].append((r[1], r[2], node))
overlaps = []
switches = 0
for host, rs in per_host.items():
    rs.sort()
    last_end = {}  # node -> latest end so far
    prev = None
    for s, e, node in rs:
        for other, oe in last_end.items():
            if other != node and oe > s + 0.001:
                overlaps.append("%s: %s until %.3f, %s from %.3f" % (host, other, oe, node, s))
        last_end[node] = max(e, last_end.get(node, 0.0))
        switches += prev is not None and prev != node
        prev = node
attributed = sum(len(v) for v in per_host.values())
note = ""
if fallback:
    note = "; %d requests without the header attributed through the outputs" % fallback
report(attributed > 0 and not overlaps,
       "per host, requests of different nodes never overlap (%d requests on %d hosts, %d overlaps, "
       "%d changes of node, %d not attributable%s)%s" % (
           attributed, len(per_host), len(overlaps), switches, unattributed, note, some(overlaps, 3)))

# robots.txt
robots_hosts = set(h for h, _ in robots)
twice = {k: c for k, c in robots.items() if c > 1}
report(not twice, "robots.txt: %d requests for %d hosts, at most one per (host, node)%s" % (
    sum(robots.values()), len(robots_hosts),
    some("%s by %s: %d" % (h, n or "(no header)", c) for (h, n), c in twice.items())))

# balance
if pages:
    print("# pages per node (outputs): " + ", ".join("%s %d" % kv for kv in sorted(pages.items())))
if a.balance is not None:
    mean = sum(pages.values()) / max(len(pages), 1)
    off = {n: c for n, c in pages.items() if abs(c - mean) > a.balance * mean}
    want = len(known) if known else len(pages)
    report(len(pages) == want and not off,
           "pages per node within %d%% of the mean %.0f (%d nodes wrote pages, %d expected)%s" % (
               a.balance * 100, mean, len(pages), want,
               some("%s %d" % kv for kv in off.items())))

for n in a.expect_fetching:
    report(by_hdr.get(n, 0) > 0, "node %s sent page requests (nginx log: %d)" % (n, by_hdr.get(n, 0)))
    report(pages.get(n, 0) > 0, "node %s wrote pages (outputs: %d)" % (n, pages.get(n, 0)))

print("check_cluster: %d failed" % report.fails)
sys.exit(1 if report.fails else 0)
