#!/usr/bin/env bash
# e2e cluster-skew: 3 node daemons whose wall clocks disagree crawl the
# 30 x 60 site to depth 1: n1 on the machine's clock, n2 30 s ahead and n3 30 s
# behind (libfaketime, FAKETIME=+30s / -30s in LD_PRELOAD). Lease and
# heartbeat times come from Redis's clock (TIME in the scripts) and each
# node's own partition validity from its monotonic clock, so:
#   - the offsets are real: each node's JSON lines' fetched_at minus
#     nginx's time of the same request is about its offset
#     (tests/e2e/clock_skew.py);
#   - every node is seen alive by the others and owns partitions (a node
#     30 s behind would look dead with node clocks: its heartbeat deadline
#     now + node_timeout lies in the others' past);
#   - no lease is stolen early: no node reclaimed a lease or lost a
#     partition (with node clocks, the node 30 s ahead reclaims every
#     URL lease of the others as expired: frontier.lease is 10 s here);
#   - nothing lost, no URL fetched twice, no host fetched by two nodes at
#     once (check_cluster.py on the outputs and nginx's log).
# The seeds go in once the 3 nodes are members (started in random order
# and spacing), so that each of them gets work and its clock is measured.
# TRIALS (default 1) crawls, each on a fresh Redis; SEED (default 17,
# printed; SEED=N replays) picks which node gets which offset and the
# order and spacing of the node starts.
# Runs in its own network namespace (no shared nginx, no lock).
if [ "${SKEW_NS:-}" != 1 ]; then
    export SKEW_NS=1
    exec unshare -n bash "$0" "$@"
fi
ip link set lo up
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

FAKELIB=
for d in /usr/lib/x86_64-linux-gnu/faketime /usr/lib/*/faketime /usr/lib/faketime; do
    [ -f "$d/libfaketime.so.1" ] && { FAKELIB=$d/libfaketime.so.1; break; }
done
[ -n "$FAKELIB" ] || { echo "cluster-skew: libfaketime.so.1 not found (apt-get install faketime)" >&2; exit 1; }
# live_nodes URL: the nodes alive by Redis's clock, sorted, one line
live_nodes() {
    rcli "$1" eval "local t = redis.call('TIME') return redis.call('ZRANGEBYSCORE', KEYS[1], t[1] * 1000, '+inf')" 1 "$PREFIX:nodes" |
        sort | tr '\n' ' '
}
all_live() { [ "$(live_nodes "$1")" = "n1 n2 n3 " ]; }
TRIALS=${TRIALS:-1}
SEED=${SEED:-17}
RANDOM=$SEED
echo "TRIALS=$TRIALS SEED=$SEED libfaketime=$FAKELIB"
NODE_SET+=(--set frontier.lease=10)
DEPTH=1
S=$(site 30 60) || exit 1
cluster_serve "$S" || exit 1

# skewed_start ID OFFSET: node ID with its clock OFFSET ("+30s", "-30s",
# "" for none); ASan must accept libfaketime ahead of it in LD_PRELOAD
skewed_start() {
    if [ -z "$2" ]; then node_start "$1"; return; fi
    FAKETIME=$2 LD_PRELOAD=$FAKELIB FAKETIME_DONT_RESET=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 node_start "$1"
}

# summary_field ID WORD: the number before WORD in node ID's cluster line
summary_field() {
    grep -o "[0-9]* $2" "$OUTS/$1.log" | tail -1 | cut -d' ' -f1
}

for k in $(seq 1 "$TRIALS"); do
    OUTS=$WORK/trial-$k
    mkdir -p "$OUTS"
    redis_start "trial-$k" || { fail "trial $k: redis"; continue; }
    # offsets to nodes and start order, from the seed
    offs=("" "+30s" "-30s")
    declare -A OFF=()
    for id in n1 n2 n3; do
        i=$((RANDOM % ${#offs[@]}))
        OFF[$id]=${offs[$i]}
        offs=("${offs[@]:0:$i}" "${offs[@]:$((i + 1))}")
    done
    echo "trial $k: offsets n1='${OFF[n1]}' n2='${OFF[n2]}' n3='${OFF[n3]}'"
    for id in n1 n2 n3; do
        skewed_start "$id" "${OFF[$id]}"
        sleep "0.$((RANDOM % 10))"
    done
    # seeds once all three are members: a node that joins while the first
    # one has leased the whole level fetches nothing (the crawl takes 2-4
    # s), and its clock could not be measured
    check "trial $k: the 3 nodes are members before the seeds" wait_for 30 all_live "$R"
    "$DCRAWL" seed --redis "$R" --depth $DEPTH "$S/roots.txt" >"$OUTS/seed.log" 2>&1
    check "trial $k: seeds uploaded" [ $? -eq 0 ]
    crawl_wait_done "$R" 240
    rc=$?
    echo "trial $k: crawl waited $CRAWL_SECS s (exit $rc)"
    check "trial $k: the crawl finishes" [ $rc -eq 0 ]
    check "trial $k: each node owns partitions, nobody else does" check_owners "$R" n1 n2 n3
    live=$(live_nodes "$R")
    check "trial $k: Redis's clock sees all 3 nodes alive ($live)" [ "$live" = "n1 n2 n3 " ]
    nodes_stop
    check "trial $k: SIGTERM: every node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
    for id in n1 n2 n3; do
        echo "trial $k: $id (${OFF[$id]:-no offset}): $(grep -m1 ' cluster:' "$OUTS/$id.log" | sed 's/^ *//')"
        rec=$(summary_field "$id" "leases of other nodes reclaimed")
        lost=$(summary_field "$id" "lost;")
        # (a partition lost is possible without skew, on a stalled loop)
        check "trial $k: $id reclaimed no lease early ($rec; partitions lost: $lost)" \
            [ "${rec:-x}" = 0 ]
    done
    cluster_log_take "trial-$k" || exit 1
    kill "${REDIS_PIDS[-1]}"
    python3 "$SRC/tests/e2e/clock_skew.py" "$WORK/trial-$k.access.log" "$OUTS"/n1 "$OUTS"/n2 "$OUTS"/n3 \
        >"$OUTS/skew.txt"
    for id in n1 n2 n3; do
        got=$(awk -v id="$id" '$1 == id { print $2 }' "$OUTS/skew.txt")
        want=${OFF[$id]%s}
        check "trial $k: $id's clock is off by ${want:-0} s (measured $got s)" \
            awk -v g="$got" -v w="${want:-0}" 'BEGIN { d = g - w; exit !(g != "none" && d < 5 && d > -5) }'
    done
    check "trial $k: nothing missing, no duplicates, hosts exclusive, every node fetched" \
        check_cluster "$S" $DEPTH "$WORK/trial-$k.access.log" "$OUTS"/n1 "$OUTS"/n2 "$OUTS"/n3 -- \
        --nodes n1,n2,n3 --expect-fetching n1 --expect-fetching n2 --expect-fetching n3
done
serve_stop
finish
