#!/usr/bin/env bash
# e2e kill: kill -9 of a node mid-crawl, restart with the same id against
# the same Redis: the crawl completes with the full URL set (leases bring
# back what was in flight). A URL in flight at the kill may be fetched once
# more; nothing else twice.
. "$(dirname "$0")/lib.sh"
S=$(site 10 200) || exit 1
serve "$S" || exit 1
redis_start kill || exit 1
out=$WORK/out
"$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >/dev/null 2>&1
# slowed down (2 ms between requests to a host) so the kill lands mid-crawl
"$DCRAWL" node --redis "$R" --out "$out" --id n1 --set politeness.delay=0.005 --set noise.enabled=false \
    >"$WORK/node1.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    n=$(cat "$out"/depth-*/*.jsonl 2>/dev/null | wc -l)
    [ "$n" -ge 400 ] && break
    sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
n=$(cat "$out"/depth-*/*.jsonl 2>/dev/null | wc -l)
echo "killed after $n pages"
check "killed mid-crawl (some but not all pages written)" [ "$n" -ge 1 -a "$n" -lt 1900 ]
# SIGTERM: a second node stops cleanly (finishes and writes in-flight pages)
"$DCRAWL" node --redis "$R" --out "$out" --id n2 --set politeness.delay=0.005 --set noise.enabled=false \
    >"$WORK/node2.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    m=$(cat "$out"/depth-*/n2-*.jsonl 2>/dev/null | wc -l)
    [ "$m" -ge 100 ] && break
    sleep 0.1
done
kill -TERM $pid
t0=$(date +%s)
wait $pid
rc=$?
check "SIGTERM: node exits 0" [ $rc -eq 0 ]
check "SIGTERM: node exits within 10 s" [ $(( $(date +%s) - t0 )) -le 10 ]
check "SIGTERM: every JSON line of n2 is complete" python3 -c 'import json,glob
for p in glob.glob("'"$out"'/depth-*/n2-*.jsonl"):
    for l in open(p): json.loads(l)'
timeout 300 "$DCRAWL" node --redis "$R" --out "$out" --id n1 --exit-when-idle \
    --set politeness.delay=0 --set noise.enabled=false >"$WORK/node3.log" 2>&1
rc=$?
cat "$WORK/node3.log"
check "restarted node completes (exit 0)" [ $rc -eq 0 ]
"$DCRAWL" merge "$out" >"$WORK/merge.log" 2>&1
check "merge exits 0" [ $? -eq 0 ]
cat "$WORK/merge.log"
serve_stop
check "full URL set after the restart" check_crawl "$S" 3 "$out" "$STATE/access.log" --allow-refetch 1
finish
