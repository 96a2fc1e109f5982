#!/usr/bin/env bash
# e2e cluster-restart: 3 node daemons crawl the 60 x 100 site to depth 3
# against a redis-server with an append-only file (appendfsync always).
# At 40 % of the page requests Redis is killed (RESTART_SIGNAL, default
# KILL; TERM also works) and started again on the same socket 1 s later. The
# frontier survives (AOF), every node reconnects with backoff and keeps
# running, and the crawl completes: the union of the outputs is the
# manifest's depth-3 set; duplicate fetches at most the URLs leased at the
# restart (a completion lost with the connection may be fetched again).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
SIG=${RESTART_SIGNAL:-KILL}
S=$(site 60 100) || exit 1
cluster_serve "$S" || exit 1
redis_start_aof restart || exit 1
"$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >"$WORK/seed.log" 2>&1
check "seeds uploaded" [ $? -eq 0 ]
for id in n1 n2 n3; do node_start "$id"; done
total=$(manifest_pages "$S" 3)
wait_requests $((total * 40 / 100)) 240
pend=$(frontier_pending "$R")
leased=$(node_leases "$R")
parts=$(rcli "$R" hget "$PREFIX:meta" partitions)
redis_restart restart "$SIG" || exit 1
echo "redis-server restarted (SIG$SIG) after 40 % of $total page requests, down $REDIS_DOWN_SECS s;" \
    "$pend URLs pending, $leased leased at the restart"
check "crawl was under way at the restart ($pend URLs pending)" [ "${pend:-0}" -gt 0 ]
after=$(frontier_pending "$R")
check "the frontier survives the restart (meta partitions '$parts', $after URLs pending)" \
    [ -n "$parts" -a "$(rcli "$R" hget "$PREFIX:meta" partitions)" = "$parts" -a "${after:-0}" -gt 0 ]
# well under frontier.lease (300 s): URLs leased by a pop whose reply the
# restart cut must come back through the node's orphan reclaim, not expiry
crawl_wait_done "$R" 150
rc=$?
echo "crawl: waited $CRAWL_SECS s after the restart (exit $rc)"
alive=0
for id in n1 n2 n3; do
    if node_alive "$id"; then alive=$((alive + 1)); else echo "node $id exited:"; tail -3 "$WORK/$id.log"; fi
done
check "every node survives the Redis restart ($alive of 3 running)" [ $alive -eq 3 ]
check "the crawl completes after the restart (within 150 s)" [ $rc -eq 0 ]
nodes_stop
check "SIGTERM: every remaining node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
check "3 nodes across a Redis restart: manifest set, duplicates <= $leased" \
    check_cluster "$S" 3 "$STATE/access.log" "$WORK"/n1 "$WORK"/n2 "$WORK"/n3 -- \
    --nodes n1,n2,n3 --allow-dups "${leased:-0}"
serve_stop
finish
