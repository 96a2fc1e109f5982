#!/usr/bin/env bash
# e2e crawl: `dcrawl crawl` on the embedded Redis against nginx serving the
# 10 x 200 site: exactly the manifest's depth-3 set, nothing twice (output
# and nginx log), nothing robots.txt disallows, summary printed, the private
# redis-server gone afterwards.
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
check "summary has pages per depth and pages/s" grep -q "pages/s" "$WORK/crawl.log"
check "summary names seen-set layout $LAYOUT" grep -q "seen-set (layout $LAYOUT)" "$WORK/crawl.log"
check "merged output written" test -s "$out/merged/pages.jsonl" -a -s "$out/merged/depth-3.warc.gz"
check "embedded redis-server stopped" bash -c "! ps -eo comm=,args= | awk '\$1 == \"redis-server\"' | grep -qF '$out/'"
check "a second crawl into the same DIR is refused (exit 2)" bash -c \
    "'$DCRAWL' crawl --seeds '$S/roots.txt' --depth 1 --out '$out' >/dev/null 2>&1; [ \$? -eq 2 ]"
finish
