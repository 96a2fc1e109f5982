#!/usr/bin/env bash
# e2e cluster-kill: 3 node daemons crawl the 60 x 100 site to depth 3; at a
# random moment one of them gets kill -9. The moment is a point of progress,
# not of time (20-70 % of the site's page requests, counted in the nginx
# log): crawl speed under the sanitizers and a loaded machine varies too
# much for a time taken from a baseline crawl to land mid-crawl reliably. Its in-flight URLs are counted from its lease entries in Redis
# right after the kill. A 4th node starts at once. The survivors and the
# 4th node finish the crawl: nothing missing (union of all outputs,
# including the dead node's), duplicate fetches at most the dead node's
# in-flight count, no host fetched by two nodes at a time, and the 4th node
# took partitions (its requests in the nginx log, its pages in its output).
#
# TRIALS (default 1) trials; SEED (default 13) seeds bash's RANDOM, which
# makes the random choices (the kill point, the node killed): it is
# printed, and SEED=N replays a run's choices.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

# merge_all K: the output of every node of trial K, the killed one's
# included (its last WARC record may be torn), merges into one copy per URL
merge_all() {
    local all=$OUTS/all d n urls
    rm -rf "$all"
    for d in "$OUTS"/n*/depth-*; do
        mkdir -p "$all/${d##*/}"
        ln -s "$d"/* "$all/${d##*/}/"
    done
    "$DCRAWL" merge "$all" >"$OUTS/merge.log" 2>&1
    check "trial $1: merge of all 4 nodes' output exits 0" [ $? -eq 0 ]
    cat "$OUTS/merge.log"
    urls=$(cat "$OUTS"/n*/depth-*/*.jsonl | python3 -c '
import json, sys
seen = set()
for line in sys.stdin:
    try:
        seen.add(json.loads(line)["url"])
    except ValueError:
        pass  # a JSON line cut by the kill
print(len(seen))')
    n=$(wc -l <"$all/merged/pages.jsonl" 2>/dev/null || echo 0)
    check "trial $1: merged pages.jsonl has one line per URL fetched ($n lines, $urls URLs)" [ "$n" -eq "$urls" ]
}
TRIALS=${TRIALS:-1}
SEED=${SEED:-13}
RANDOM=$SEED
echo "TRIALS=$TRIALS SEED=$SEED"
# a dead node's leases come back when they expire (or when a new owner takes
# its partitions over): keep the expiry short
NODE_SET+=(--set frontier.lease=10)
S=$(site 60 100) || exit 1
cluster_serve "$S" || exit 1

crawl_start() { # crawl_start NAME: fresh Redis, seeds, nodes n1-n3
    OUTS=$WORK/$1
    mkdir -p "$OUTS"
    redis_start "$1" || return 1
    "$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >"$OUTS/seed.log" 2>&1 || return 1
    node_start n1
    node_start n2
    node_start n3
}

total=$(manifest_pages "$S" 3)

for k in $(seq 1 "$TRIALS"); do
    crawl_start "trial-$k" || { fail "trial $k: start"; continue; }
    pct=$((20 + RANDOM % 51))
    victim=n$((1 + RANDOM % 3))
    echo "trial $k: kill -9 $victim after $pct % of the $total page requests"
    wait_requests $((total * pct / 100)) 240
    pend=$(frontier_pending "$R")
    node_kill9 "$victim"
    inflight=$(node_leases "$R" "$victim")
    node_start n4
    echo "trial $k: $pend URLs pending at the kill, $inflight leased by $victim"
    check "trial $k: killed mid-crawl ($pend URLs pending)" [ "${pend:-0}" -gt 0 ]
    crawl_wait_done "$R" 300
    rc=$?
    echo "trial $k: waited $CRAWL_SECS s after the kill (exit $rc)"
    check "trial $k: the survivors and n4 finish the crawl" [ $rc -eq 0 ]
    alive=0
    for id in "${!NODE_PID[@]}"; do node_alive "$id" && alive=$((alive + 1)); done
    check "trial $k: the 3 remaining nodes still run at the end ($alive)" [ $alive -eq 3 ]
    survivors=$(echo n1 n2 n3 n4 | tr ' ' '\n' | grep -vx "$victim" | tr '\n' ' ')
    # shellcheck disable=SC2086
    check "trial $k: the survivors and n4 own the partitions, $victim none" check_owners "$R" $survivors
    nodes_stop
    check "trial $k: SIGTERM: every remaining node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
    cluster_log_take "trial-$k" || exit 1
    kill "${REDIS_PIDS[-1]}"
    check "trial $k: nothing missing, duplicates <= $inflight, n4 fetched" \
        check_cluster "$S" 3 "$WORK/trial-$k.access.log" "$OUTS"/n1 "$OUTS"/n2 "$OUTS"/n3 "$OUTS"/n4 -- \
        --nodes n1,n2,n3,n4 --allow-dups "$inflight" --expect-fetching n4
    merge_all "$k"
done
serve_stop
finish
