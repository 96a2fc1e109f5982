#!/usr/bin/env bash
# e2e crawl: `dcrawl crawl` on the embedded Redis against nginx serving the
# 10 x 200 site: exactly the manifest's depth-3 set, nothing twice (output
# and nginx log), nothing robots.txt disallows, the summary's figures equal
# what the merged pages.jsonl holds (pages, 2xx, responses, transport
# errors, MB, pages per depth) and its rates are those counts over its
# time, the private redis-server gone afterwards; its frontier has 32
# partitions unless frontier.partitions is set (then the setting).
. "$(dirname "$0")/lib.sh"
S=$(site 10 200) || exit 1
serve "$S" || exit 1
out=$WORK/out
timeout 300 "$DCRAWL" crawl --seeds "$S/roots.txt" --depth 3 --out "$out" \
    --set politeness.delay=0 --set noise.enabled=false >"$WORK/crawl.log" 2>&1
rc=$?
cat "$WORK/crawl.log"
check "dcrawl crawl exits 0" [ $rc -eq 0 ]
serve_stop
check "output matches the manifest (jsonl + nginx log)" check_crawl "$S" 3 "$out" "$STATE/access.log"
check "summary figures = the merged pages.jsonl (pages, 2xx, responses, errors, MB, per depth); rates = count / time" \
    python3 - "$WORK/crawl.log" "$out/merged/pages.jsonl" <<'EOF'
import json, re, sys
log = open(sys.argv[1]).read()
recs = [json.loads(l) for l in open(sys.argv[2])]
pages = [r for r in recs if r["skipped"] is None]  # requested URLs
m = re.search(r"^crawled (\d+) pages in ([\d.]+) s of crawling \(the node loop\): "
              r"(\d+) fetched with a 2xx status \(([\d.]+)/s\), (\d+) responses of "
              r"any status \(([\d.]+)/s\), (\d+) transport errors; ([\d.]+) MB of bodies$", log, re.M)
w = re.search(r"^  wall clock of the whole command, from its start to this summary "
              r"\(seeding and merge included\): ([\d.]+) s \(([\d.]+) ms before the "
              r"node loop: settings, Redis, seeds; merge ([\d.]+) ms\)$", log, re.M)
if not m or not w:
    sys.exit("headline or wall clock line not found")
n, secs, ok2, r2, resp, rresp, terr = (int(m[1]), float(m[2]), int(m[3]), float(m[4]),
                                       int(m[5]), float(m[6]), int(m[7]))
want = {
    "pages": (n, len(pages)),
    "2xx": (ok2, sum(200 <= r["status"] < 300 for r in pages)),
    "responses": (resp, sum(100 <= r["status"] < 600 for r in pages)),
    "transport errors": (terr, sum(not 100 <= r["status"] < 600 for r in pages)),
}
mb = sum(r["length"] for r in pages) / 1e6
want["MB"] = (float(m[8]), float(m[8]) if abs(float(m[8]) - mb) <= 0.0501 else mb)
depth = {int(d): int(c) for d, c in re.findall(r"^ +(\d+) +(\d+)$", log, re.M)}
for d in range(max(depth) + 1 if depth else 0):
    want["depth %d" % d] = (depth.get(d), sum(r["depth"] == d for r in pages))
bad = ["%s: summary %s, pages.jsonl %s" % (k, a, b) for k, (a, b) in want.items() if a != b]
# the rates have one decimal, the time two
for name, rate, count in (("2xx/s", r2, ok2), ("responses/s", rresp, resp)):
    lo, hi = count / (secs + 0.005), count / max(secs - 0.005, 1e-6)
    if not lo - 0.05 <= rate <= hi + 0.05:
        bad.append("%s %.1f is not %d / %.2f s" % (name, rate, count, secs))
if not secs > 0 or float(w[1]) < secs:
    bad.append("wall clock %s s < node loop %.2f s" % (w[1], secs))
# the parts: before the loop + loop + merge fit in the whole (rounding)
if not (float(w[2]) > 0 and float(w[3]) > 0) or \
        float(w[2]) / 1e3 + secs + float(w[3]) / 1e3 > float(w[1]) + 0.011:
    bad.append("wall clock %s s < %s ms + loop %.2f s + merge %s ms" % (w[1], w[2], secs, w[3]))
if ok2 == 0 or not depth:
    bad.append("no 2xx page or no depth table")
print("\n".join(bad) or "    %d pages, %d 2xx, %d depths; %.2f s loop, %s s wall"
      % (n, ok2, len(depth), secs, w[1]))
sys.exit(1 if bad else 0)
EOF
check "summary names seen-set layout $LAYOUT" grep -q "seen-set (layout $LAYOUT)" "$WORK/crawl.log"
# keys of the seen-set layout for P partitions: one per partition
# (mod-u64), 256 per partition (b256-i64)
layout_keys() { [ "$LAYOUT" = mod-u64 ] && echo "$1" || echo $(($1 * 256)); }
check "the embedded frontier has 32 partitions (seen-set keys of the layout)" \
    grep -q "keys (of the $(layout_keys 32) the layout has)" "$WORK/crawl.log"
timeout 120 "$DCRAWL" crawl --seeds "$S/roots.txt" --depth 1 --out "$WORK/out64" \
    --set politeness.delay=0 --set frontier.partitions=64 >"$WORK/crawl64.log" 2>&1
check "frontier.partitions given: the embedded frontier has that many" \
    grep -q "keys (of the $(layout_keys 64) the layout has)" "$WORK/crawl64.log"
check "merged output written" test -s "$out/merged/pages.jsonl" -a -s "$out/merged/depth-3.warc.gz"
check "embedded redis-server stopped" bash -c "! ps -eo comm=,args= | awk '\$1 == \"redis-server\"' | grep -qF '$out/'"
check "a second crawl into the same DIR is refused (exit 2)" bash -c \
    "'$DCRAWL' crawl --seeds '$S/roots.txt' --depth 1 --out '$out' >/dev/null 2>&1; [ \$? -eq 2 ]"
finish
