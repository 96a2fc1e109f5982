#!/usr/bin/env bash
# rcluster.sh: the frontier on a real 3-master Redis Cluster (rcluster-lib.sh):
# `dcrawl seed --redis redis-cluster://...`, then tests/unit/u-rcluster.c
# (slots, the whole frontier API over the three masters, NOSCRIPT, MOVED,
# ASK, a dead master), then the CLI's errors: a /db in the URL, a server
# that is not a cluster, no node answering, a dead master.
# Args as lib.sh, plus $5 = the u-rcluster binary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rcluster-lib.sh"
UTEST=$5
trap cleanup EXIT

rcluster_start a || { fail "cluster starts"; finish; }
ok "cluster of 3 masters: $RC"

# 300 seeds on 300 hosts
for i in $(seq 1 300); do echo "http://seed$i.test/"; done >"$WORK/seeds.txt"
check "seed on the cluster" "$DCRAWL" seed --redis "$RC" "$WORK/seeds.txt"
out=$("$DCRAWL" seed --redis "$RC" "$WORK/seeds.txt" 2>&1)
check "seeding again: all already seen ($out)" grep -q "0 accepted, 300 already seen" <<<"$out"
for p in "${RC_PORTS[@]}"; do
    n=$(redis-cli -p "$p" dbsize)
    check "master $p holds keys ($n)" test "$n" -gt 50
done
# a queued seed read back with redis-cli -c (follows MOVED)
h=$(redis-cli -c -p "${RC_PORTS[0]}" --scan --pattern 'dc:{*}:q:0:seed1.test' | head -1)
[ -z "$h" ] && for p in "${RC_PORTS[@]}"; do
    h=$(redis-cli -p "$p" --scan --pattern 'dc:{*}:q:0:seed1.test' | head -1)
    [ -n "$h" ] && break
done
check "seed1.test queued ($h)" test "$(redis-cli -c -p "${RC_PORTS[0]}" lrange "$h" 0 -1)" = "http://seed1.test/"

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
