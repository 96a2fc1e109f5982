#!/usr/bin/env bash
# e2e slowhost: one slow host (every response, robots.txt included, after
# 2 s) and 20 fast hosts (each on its own loopback IP) crawled together:
# the slow host must not hold the node. Every URL is a seed (depth 0), so
# level-synchronous crawling does not couple the hosts. Asserts from the
# server's request log that all 20 x 11 fast requests (robots.txt + 10
# pages each) ended before the slow host's 3rd request started, and
# that the fast hosts ran at full speed: each fast host's 11 requests took
# less than 11 x (politeness.delay 0.1 s) + 1.5 s from its first to last.
#
# Then the same hosts crawled from their roots (depth 1: each root links to
# its 9 pages). Depth levels are synchronous (README: a URL is reached at
# its shortest distance), so depth 1 starts once the slow root is done;
# from then on the slow host holds nothing: every fast depth-1 page ends
# before the slow host's 2nd depth-1 request starts, each fast host's 9
# pages within 9 x 0.1 s + 1.5 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/polite-lib.sh"

pages='"/": {}'
for i in $(seq 1 9); do pages+=", \"/p$i\": {}"; done
site='{"origins": {"slow": {"ip": "127.0.0.90", "delay": 2.0, "pages": {'"$pages"'}}'
for i in $(seq 0 19); do
    site+=", \"fast$i\": {\"ip\": \"127.0.0.$((70 + i))\", \"pages\": {$pages}}"
done
site+='}}'
pserve slow "$site" || exit 1
{
    for p in / /p1 /p2 /p3 /p4; do echo "http://$(origin slow)$p"; done
    for i in $(seq 0 19); do
        o=$(origin fast$i)
        echo "http://$o/"
        for j in $(seq 1 9); do echo "http://$o/p$j"; done
    done
} >"$SDIR/seeds.txt"
start=$(date +%s.%N)
timeout 120 "$DCRAWL" crawl --seeds "$SDIR/seeds.txt" --depth 0 --out "$SDIR/out" \
    --set noise.enabled=false --set politeness.delay=0.1 --set fetch.timeout=20 >"$SDIR/crawl.log" 2>&1
rc=$?
end=$(date +%s.%N)
pstop
check "crawl exits 0" [ $rc -eq 0 ] || cat "$SDIR/crawl.log"
echo "    whole crawl: $(python3 -c "print('%.2f' % ($end - $start))") s"
pycheck "every fast host: robots.txt + 10 pages, once each; slow host: robots.txt + 5 pages" '
for i in range(20):
    if len(paths("fast%d" % i)) != 11 or len(set(paths("fast%d" % i))) != 11:
        print("fast%d" % i, paths("fast%d" % i))
if sorted(paths("slow")) != sorted(["/robots.txt", "/", "/p1", "/p2", "/p3", "/p4"]):
    print("slow", paths("slow"))'
pycheck "all fast requests ended before the slow host's 3rd request started" '
fast = [r for r in reqs if r["origin"] != "slow"]
slow = by("slow")
t0 = min(r["start"] for r in reqs)
last = max(r["end"] for r in fast)
sys.stderr.write("      fast hosts done at %.2f s; slow host requests start at %s s\n" %
                 (last - t0, ", ".join("%.2f" % (r["start"] - t0) for r in slow)))
if len(slow) < 3 or last >= slow[2]["start"]: print("fast last end %.2f" % (last - t0))'
pycheck "each fast host ran at full speed (11 requests within 11 x 0.1 s + 1.5 s)" '
for i in range(20):
    rs = by("fast%d" % i)
    span = rs[-1]["end"] - rs[0]["start"]
    if span > 11 * 0.1 + 1.5: print("fast%d took %.2f s" % (i, span))'

# ---- from the roots, depth 1 ----
site2=$(printf '%s' "$site" | python3 -c '
import json, sys
site = json.load(sys.stdin)
for o in site["origins"].values():
    o["pages"]["/"] = {"links": ["/p%d" % i for i in range(1, 10)]}
print(json.dumps(site))')
pserve levels "$site2" || exit 1
{
    echo "http://$(origin slow)/"
    for i in $(seq 0 19); do echo "http://$(origin fast$i)/"; done
} >"$SDIR/seeds.txt"
timeout 120 "$DCRAWL" crawl --seeds "$SDIR/seeds.txt" --depth 1 --out "$SDIR/out" \
    --set noise.enabled=false --set politeness.delay=0.1 --set fetch.timeout=20 >"$SDIR/crawl.log" 2>&1
rc=$?
pstop
check "depth-1 crawl exits 0" [ $rc -eq 0 ] || cat "$SDIR/crawl.log"
pycheck "depth 1: every host got robots.txt, / and 9 pages, once each" '
for o in ["slow"] + ["fast%d" % i for i in range(20)]:
    if len(paths(o)) != 11 or len(set(paths(o))) != 11: print(o, paths(o))'
pycheck "depth 1: fast pages all ended before the slow host's 2nd depth-1 request" '
slow = by("slow")
d1 = [r for r in slow if r["path"].startswith("/p")]
fast = [r for r in reqs if r["origin"] != "slow" and r["path"].startswith("/p")]
t0 = min(r["start"] for r in reqs)
level = min(r["start"] for r in fast)
last = max(r["end"] for r in fast)
sys.stderr.write("      slow root done at %.2f s, depth 1 from %.2f s, fast depth 1 done at %.2f s, "
                 "slow depth-1 requests start at %s s\n" % (
                 [r for r in slow if r["path"] == "/"][0]["end"] - t0, level - t0, last - t0,
                 ", ".join("%.2f" % (r["start"] - t0) for r in d1)))
if len(d1) < 2 or last >= d1[1]["start"]: print("fast done %.2f" % (last - t0))
for i in range(20):
    rs = [r for r in by("fast%d" % i) if r["path"].startswith("/p")]
    if rs[-1]["end"] - rs[0]["start"] > 9 * 0.1 + 1.5:
        print("fast%d depth 1 took %.2f s" % (i, rs[-1]["end"] - rs[0]["start"]))'
finish
