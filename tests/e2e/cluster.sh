#!/usr/bin/env bash
# e2e cluster: 3 node daemons crawl the 60 x 100 site to depth 3 against one
# redis-server. The union of their outputs is the manifest's depth-3 set, no
# canonical URL is requested twice (nginx log), no host is fetched by two
# nodes at a time (X-Dcrawl-Node in the log), pages per node within 25 % of
# the mean, and every node stops cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
S=$(site 60 100) || exit 1
cluster_serve "$S" || exit 1
redis_start cluster || exit 1
"$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >"$WORK/seed.log" 2>&1
check "seeds uploaded" [ $? -eq 0 ]
for id in n1 n2 n3; do node_start "$id"; done
crawl_wait_done "$R" 240
done_rc=$?
echo "crawl: waited ${CRAWL_SECS} s (exit $done_rc)"
check "the crawl finishes (nothing pending) within 240 s" [ $done_rc -eq 0 ]
check "each node owns partitions, nobody else does" check_owners "$R" n1 n2 n3
nodes_stop
check "SIGTERM: every node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
for id in n1 n2 n3; do tail -3 "$WORK/$id.log"; done
check "3 nodes: manifest set, no duplicates, hosts exclusive, balanced" \
    check_cluster "$S" 3 "$STATE/access.log" "$WORK"/n1 "$WORK"/n2 "$WORK"/n3 -- \
    --nodes n1,n2,n3 --balance 0.25
serve_stop
finish
