#!/usr/bin/env bash
# e2e pieces: the same crawl as crawl.sh split into `dcrawl seed`,
# `dcrawl node --exit-when-idle` and `dcrawl merge` on one redis-server:
# the same URL set (the manifest's), nothing twice.
. "$(dirname "$0")/lib.sh"
S=$(site 10 200) || exit 1
serve "$S" || exit 1
redis_start pieces || exit 1
out=$WORK/out
"$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >"$WORK/seed.log" 2>&1
check "seed exits 0" [ $? -eq 0 ]
check "seed reports 10 accepted" grep -q "^seeds: 10 accepted, 0 already seen, 0 rejected" "$WORK/seed.log"
"$DCRAWL" seed --redis "$R" "$S/roots.txt" >"$WORK/seed2.log" 2>&1
check "seeding again: all already seen" grep -q "^seeds: 0 accepted, 10 already seen" "$WORK/seed2.log"
timeout 300 "$DCRAWL" node --redis "$R" --out "$out" --exit-when-idle \
    --set politeness.delay=0 --set noise.enabled=false >"$WORK/node.log" 2>&1
rc=$?
cat "$WORK/node.log"
check "node --exit-when-idle exits 0" [ $rc -eq 0 ]
"$DCRAWL" merge "$out" >"$WORK/merge.log" 2>&1
check "merge exits 0" [ $? -eq 0 ]
serve_stop
check "output matches the manifest (jsonl + nginx log)" check_crawl "$S" 3 "$out" "$STATE/access.log"
finish
