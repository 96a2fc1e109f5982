#!/usr/bin/env bash
# rcluster.sh: the frontier on a real 3-master Redis Cluster (rcluster-lib.sh):
# `dcrawl seed --redis redis-cluster://...`, then tests/unit/u-rcluster.c
# (slots, the whole frontier API over the three masters, NOSCRIPT, MOVED,
# ASK, a dead master), then the CLI's errors: a /db in the URL, a server
# that is not a cluster, no node answering, a dead master.
# Args as lib.sh, plus $5 = the u-rcluster binary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rcluster-lib.sh"
source "$(dirname "$0")/polite-lib.sh"   # its EXIT trap stops everything
UTEST=$5

rcluster_start a || { fail "cluster starts"; finish; }
ok "cluster of 3 masters: $RC"

# 300 seeds on 300 hosts (names that do not exist and are never fetched
# here: scope.private_addresses=allow, so they are not looked up)
for i in $(seq 1 300); do echo "http://seed$i.test/"; done >"$WORK/seeds.txt"
export DCRAWL_SCOPE_PRIVATE_ADDRESSES=allow
check "seed on the cluster" "$DCRAWL" seed --redis "$RC" "$WORK/seeds.txt"
out=$("$DCRAWL" seed --redis "$RC" "$WORK/seeds.txt" 2>&1)
check "seeding again: all already seen ($out)" grep -q "0 accepted, 300 already seen" <<<"$out"
for p in "${RC_PORTS[@]}"; do
    n=$(redis-cli -p "$p" dbsize)
    check "master $p holds keys ($n)" test "$n" -gt 50
done
# a queued seed read back (its "http://seed1.test" kept as the byte \1,
# frontier/lua/lib/common.lua): in the native queue layout from the level
# value dc:{p}:h:0 (DCFRONT.QDUMP: host, in set, score, then its queue),
# else from its LIST, with redis-cli -c (follows MOVED)
layout=$(redis-cli -c -p "${RC_PORTS[0]}" hget dc:meta queue_layout)
if [ "$layout" = native ]; then
    q=
    for p in "${RC_PORTS[@]}"; do
        for k in $(redis-cli -p "$p" --scan --pattern 'dc:{*}:h:0'); do
            e=$(redis-cli -p "$p" --raw DCFRONT.QDUMP "$k" | grep -A3 -x 'seed1.test')
            [ -n "$e" ] && q=$(sed -n 4p <<<"$e")
        done
    done
    check "seed1.test queued in its level (layout $layout)" test "$q" = "$(printf '\001/')"
else
    h=$(redis-cli -c -p "${RC_PORTS[0]}" --scan --pattern 'dc:{*}:q:0:seed1.test' | head -1)
    [ -z "$h" ] && for p in "${RC_PORTS[@]}"; do
        h=$(redis-cli -p "$p" --scan --pattern 'dc:{*}:q:0:seed1.test' | head -1)
        [ -n "$h" ] && break
    done
    check "seed1.test queued ($h, layout $layout)" test "$(redis-cli -c -p "${RC_PORTS[0]}" lrange "$h" 0 -1)" = "$(printf '\001/')"
fi

# errors of the CLI
out=$("$DCRAWL" seed --redis "redis-cluster://127.0.0.1:${RC_PORTS[0]}/1" "$WORK/seeds.txt" 2>&1); rc=$?
check "/db refused ($out)" test $rc -eq 2 -a -n "$(grep 'cannot name a database' <<<"$out")"
out=$("$DCRAWL" seed --redis "redis-cluster://127.0.0.1:1,127.0.0.1:2" "$WORK/seeds.txt" 2>&1); rc=$?
check "no node answers ($out)" test $rc -eq 2 -a -n "$(grep 'no node of 2 answers' <<<"$out")"
plain=$(rcluster_free_port)
redis-server --bind 127.0.0.1 --port "$plain" --dir "$WORK" --save '' --appendonly no \
    --daemonize no >"$WORK/plain.log" 2>&1 &
REDIS_PIDS+=($!)
for i in $(seq 1 100); do redis-cli -p "$plain" ping >/dev/null 2>&1 && break; sleep 0.05; done
out=$("$DCRAWL" seed --redis "redis-cluster://127.0.0.1:$plain" "$WORK/seeds.txt" 2>&1); rc=$?
check "not a cluster ($out)" test $rc -eq 2 -a -n "$(grep 'CLUSTER SLOTS failed' <<<"$out")"

# a crawl on the cluster: seed + node against a loopback server of its own
site='{"origins": {
 "a": {"ip": "127.0.0.101", "pages": {"/": {"links": ["/p1", "/p2", "/p3", "{b}/", "{c}/"]},
   "/p1": {"links": ["/p4"]}, "/p2": {}, "/p3": {}, "/p4": {}}},
 "b": {"ip": "127.0.0.102", "pages": {"/": {"links": ["/q1", "/q2"]}, "/q1": {}, "/q2": {}}},
 "c": {"ip": "127.0.0.103", "pages": {"/": {"links": ["/r1"]}, "/r1": {}}}}}'
pserve site "$site" || { fail "site server"; finish; }
echo "http://$(origin a)/" >"$SDIR/seeds.txt"
set_=(--set redis.prefix=crawl --set politeness.delay=0 --set noise.enabled=false)
check "seed the crawl" "$DCRAWL" seed --redis "$RC" --depth 2 "${set_[@]}" "$SDIR/seeds.txt"
timeout 120 "$DCRAWL" node --redis "$RC" --out "$SDIR/out" --exit-when-idle "${set_[@]}" \
    >"$SDIR/node.log" 2>&1
rc=$?
pstop
check "node on the cluster exits 0 (got $rc)" [ $rc -eq 0 ] || cat "$SDIR/node.log"
pycheck "every page (depth <= 2) fetched exactly once" '
want = {"a": ["/", "/p1", "/p2", "/p3", "/p4"], "b": ["/", "/q1", "/q2"], "c": ["/", "/r1"]}
for o, ps in want.items():
    got = sorted(p for p in paths(o) if p != "/robots.txt")
    if got != sorted(ps): print(o, got)'

# the frontier API (the test kills the third master at its end)
DCRAWL_TEST_RCLUSTER=$RC DCRAWL_TEST_RCLUSTER_PORTS="${RC_PORTS[*]}" \
DCRAWL_TEST_RCLUSTER_SEEDS=300 DCRAWL_TEST_RCLUSTER_KILL=${REDIS_PIDS[2]} \
    "$UTEST" >"$WORK/u-rcluster.log" 2>&1
rc=$?
cat "$WORK/u-rcluster.log"
check "u-rcluster" test $rc -eq 0

out=$("$DCRAWL" seed --redis "$RC" "$WORK/seeds.txt" 2>&1); rc=$?
check "dead master: clear error, exit 2 ($out)" test $rc -eq 2 -a -n "$(grep "redis cluster.*127.0.0.1:${RC_PORTS[2]}\|CLUSTERDOWN" <<<"$out")"
finish
