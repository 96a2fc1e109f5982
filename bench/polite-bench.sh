#!/usr/bin/env bash
# polite-bench.sh: how close a politeness-bound crawl comes to its ideal time.
#
#   flock /tmp/dcrawl-nginx.lock bash bench/polite-bench.sh [--hosts 200]
#       [--pages 100] [--delay 0.25] [--latency 50] [--depth 3] [BIN]
#
# KEEP=1 keeps the work directory (the crawl's output and summary) and
# prints its path at the end.
#
# Site: gen_site.py (../shared/bench) with HOSTS x PAGES pages of uneven
# size (--min-kb 2 --max-kb 120, seed 1), generated once into
# /tmp/bench-site-polite-<hosts>x<pages>, served by the harness's serve.sh
# in its latency mode (HAProxy answers each request no sooner than LATENCY ms
# after it arrives) on 127.0.1.x, one IP per host. Every link of the site
# points to its own hosts, so the default scope crawls only the site.
#
# Crawl: BIN (default build-rel/dcrawl) crawl --depth DEPTH from the site's
# roots with politeness.delay=DELAY, noise off, everything else default
# (host_connections 1).
#
# Ideal = sum over depths d <= DEPTH of max over hosts h of
#   (pages of h first reached at depth d in manifest.json) x (delay + latency):
# a host's requests are one after another, each taking the latency and then
# the delay, and depth d+1 starts when depth d is done. Measured = the
# node loop's seconds from the crawl's summary (seeding and the merge left
# out); the wall clock of the whole command is printed too. Efficiency =
# ideal / measured.
#
# Level barriers: the node does not report its idle time, so it is taken
# from the output: for each depth, the span from its first to its last
# response (fetched_at of depth-*/*.jsonl, ms), and the gap from the last
# response of depth d to the first of depth d+1, which holds the level
# change and one request's latency; also the gap before the first response
# (robots.txt of every host and one latency) and per depth how much longer
# the depth took than its slowest host's ideal. Then, per depth, the host
# whose response ended it: its pages there, its responses of other depths
# inside the depth's span, and its excess wait (intervals between its
# responses beyond delay + latency); and the crawl summary's politeness,
# HTTP status, transfer times and error lines (retries and back-offs show
# there; a transfer far over LATENCY is the server side, which shares the
# machine's 2 cores with the crawler, answering late).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
HOSTS=200 PAGES=100 DELAY=0.25 LAT=50 DEPTH=3 BIN=$ROOT/build-rel/dcrawl
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) HOSTS=$2; shift ;;
    --pages) PAGES=$2; shift ;;
    --delay) DELAY=$2; shift ;;
    --latency) LAT=$2; shift ;;
    --depth) DEPTH=$2; shift ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) BIN=$(realpath "$1") ;;
    esac
    shift
done
[ -x "$BIN" ] || { echo "no binary $BIN" >&2; exit 1; }

SITE=/tmp/bench-site-polite-${HOSTS}x$PAGES
. "$ROOT/bench/site-gen.sh"
site_gen "$SITE" --hosts "$HOSTS" --pages "$PAGES" --seed 1 --depth 6 \
    --min-kb 2 --max-kb 120
W=$(mktemp -d /tmp/dcrawl-polite.XXXXXX)
# The harness's nginx keeps up to 100,000 open files cached for 120 s; a
# crawl of ~20,000 pages within that time reaches the machine's 20,000
# descriptor limit and nginx answers 500 ("Too many open files"). So serve.sh
# runs from a copy (shared/ stays read-only) whose cache holds 4,000 files.
mkdir -p "$W/harness"
cp -r "$SHARED/bench/." "$W/harness/"
sed -i 's/open_file_cache max=100000/open_file_cache max=4000/' "$W/harness/serve.sh"
grep -q 'open_file_cache max=4000' "$W/harness/serve.sh" ||
    { echo "polite-bench: serve.sh's open_file_cache line not found" >&2; exit 1; }
SERVE=$W/harness/serve.sh
trap '"$SERVE" stop >/dev/null 2>&1; [ -n "${KEEP:-}" ] && echo "kept $W" || rm -rf "$W"' EXIT
"$SERVE" start "$SITE" --latency "$LAT" >/dev/null

t0=$EPOCHREALTIME
"$BIN" crawl --seeds "$SITE/roots.txt" --depth "$DEPTH" --out "$W/out" \
    --set politeness.delay="$DELAY" --set noise.enabled=false \
    ${DCRAWL_BENCH_SETS:-} >"$W/summary.txt" 2>&1 ||
    { cat "$W/summary.txt" >&2; exit 1; }
t1=$EPOCHREALTIME

python3 - "$SITE" "$W" "$DEPTH" "$DELAY" "$LAT" "$t0" "$t1" "$BIN" <<'EOF'
import collections, datetime, glob, json, re, sys
from urllib.parse import urlsplit
site, w, depth, delay, lat, t0, t1, binary = sys.argv[1:]
depth, delay, lat = int(depth), float(delay), float(lat) / 1000.0
man = json.load(open(site + "/manifest.json"))
within = man["within_depth"]
prev, ideal_d = set(), []
for d in range(depth + 1):
    cur = set(within[str(d)])
    per_host = collections.Counter(urlsplit(u).netloc for u in cur - prev)
    host, n = (per_host.most_common(1) or [("-", 0)])[0]
    ideal_d.append((n * (delay + lat), host, n, len(cur - prev)))
    prev = cur
ideal = sum(x[0] for x in ideal_d)
summary = open(w + "/summary.txt").read()
m = re.search(r"crawled (\d+) pages in ([\d.]+) s of crawling", summary)
pages, loop_s = int(m.group(1)), float(m.group(2))
def ms(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
first, last, ender = {}, {}, {}
by_host = collections.defaultdict(list)
for p in glob.glob(w + "/out/depth-*/*.jsonl"):
    for line in open(p):
        r = json.loads(line)
        if r.get("skipped") or not r.get("fetched_at"):
            continue
        t, d = ms(r["fetched_at"]), r["depth"]
        h = urlsplit(r["url"]).netloc
        by_host[h].append((t, d))
        first[d] = min(first.get(d, t), t)
        if t >= last.get(d, t):
            ender[d] = h
        last[d] = max(last.get(d, t), t)
print("polite bench: %s, site %s (%d URLs within depth %d), delay %.3f s, "
      "latency %.0f ms" % (binary, site, len(within[str(depth)]), depth, delay,
                           lat * 1000))
print("%5s %7s %10s %6s %9s %9s %9s %10s" % ("depth", "pages", "max host",
      "of it", "ideal s", "span s", "over s", "gap s"))
for d in range(depth + 1):
    i, host, n, cnt = ideal_d[d]
    span = last[d] - first[d] if d in first else float("nan")
    gap = first[d + 1] - last[d] if d + 1 in first and d in last else float("nan")
    # a depth's span runs from its first to its last response: the ideal
    # of its slowest host less one request (the first response ends one
    # latency after the depth starts)
    print("%5d %7d %10s %6d %9.2f %9.2f %9.2f %10.3f" % (d, cnt, host, n, i,
          span, span - max(i - (delay + lat), 0), gap))
# The host whose last response ended each depth: its pages at the depth,
# its responses of other depths within the depth's span (fetched in
# between: they take the host's turns), and its wait beyond the ideal pace
# (sum over its consecutive responses within the span of the interval less
# delay + latency, when positive: pop latency, back-off, retries).
print("%5s %16s %6s %7s %9s" % ("depth", "ended by", "pages", "others",
                                 "excess s"))
for d in range(depth + 1):
    if d not in ender:
        continue
    ts = sorted(by_host[ender[d]])
    inside = [x for x in ts if first[d] <= x[0] <= last[d]]
    excess = sum(max(b[0] - a[0] - (delay + lat), 0)
                 for a, b in zip(inside, inside[1:]))
    print("%5d %16s %6d %7d %9.2f" % (d, ender[d],
          sum(1 for x in ts if x[1] == d),
          sum(1 for x in inside if x[1] != d), excess))
    # how the excess is spread: its largest intervals (excess, seconds
    # into the depth) and how many intervals were over by 10 ms or more
    over = sorted(((b[0] - a[0] - (delay + lat), b[0] - first[d])
                   for a, b in zip(inside, inside[1:])), reverse=True)
    if over and over[0][0] >= 0.01:
        print("      largest: %s; %d of %d intervals over by >= 10 ms" % (
              ", ".join("+%.0f ms at %.1f s" % (e * 1000, at)
                        for e, at in over[:4] if e >= 0.01),
              sum(1 for e, _ in over if e >= 0.01), len(over)))
for line in summary.splitlines():
    if line.lstrip().startswith(("politeness:", "HTTP status:", "errors:",
                                 "transfer times:")):
        print("crawl " + line.strip())
gaps = sum(first[d + 1] - last[d] for d in range(depth) if d + 1 in first)
print("ideal %.2f s; measured %.2f s (node loop, %d pages; whole command "
      "%.2f s); efficiency %.3f" % (ideal, loop_s, pages,
      float(t1) - float(t0), ideal / loop_s))
print("level barriers: %.3f s between the last response of a depth and the "
      "first of the next (sum over %d changes, each includes one %.0f ms "
      "request)" % (gaps, depth, lat * 1000))
EOF
