#!/usr/bin/env bash
# e2e slowhost: one slow host (every response, robots.txt included, after
# 2 s) and 20 fast hosts (each on its own loopback IP) crawled together:
# the slow host must not hold the node. Every URL is a seed (depth 0), so
# level-synchronous crawling does not couple the hosts. Asserts from the
# server's request log that all 20 x 11 fast requests (robots.txt + 10
# pages each) ended before the slow host's 3rd request started, and
# that the fast hosts ran at full speed: each fast host's 11 requests took
# less than 11 x (politeness.delay 0.1 s) + 1.5 s from its first to last.
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
finish
