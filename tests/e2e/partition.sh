#!/usr/bin/env bash
# e2e partition: network partitions of a 3-node crawl. Redis, the site and
# each node live in network namespaces of their own (ip netns, made here and
# removed at the end); node K has two veth links, nrK to Redis' namespace
# (10.1.K.0/24) and nsK to the site's (10.2.K.0/24; the site's hosts are
# 10.77.1.N, gen_site.py --ip-base). Cutting a node "from Redis" or "from
# the site" is taking both ends of one of its links down (only the far
# end would still deliver the node's packets to Redis, a one-way cut);
# healing is bringing them up again (and the node's route to the site).
#
# Each trial (TRIALS, default 1; SEED, default 23, printed; SEED=N replays
# the trial's choices) crawls the site on a fresh Redis with n1-n3 and:
#   1. at a random point of progress cuts a random node V from Redis for
#      cluster.partition_lease + 1-4 s (random) while it still reaches the
#      site, then heals; the cut comes as V starts a slow transfer (below),
#      which outlives V's hold on its host's partition. V's in-flight URLs are its lease entries at the
#      cut. Measured: when the others own every partition (V none), and,
#      after the heal, when V owns partitions again (rejoined);
#   2. cuts a random node W from the site only for fetch.low_speed_time
#      (10 s) + 4-7 s (random), then heals: every transfer W runs or starts
#      fails (stalled ones time out, new connections find no route, and so
#      do their retries), with fetch.retries=$PARTITION_RETRIES (default 1,
#      the crawler's default; a cut node whose only failing host has
#      nothing else running tells the cut from that host dying by a
#      control probe of another host). W must see that it is cut off
#      (node-offline.c) and put those URLs back uncounted: none is given
#      up, no host is marked dead;
#   3. the crawl completes: the union of the outputs is the manifest's set
#      (nothing lost), duplicate fetches <= V's in-flight URLs at the Redis
#      cut + W's at the site cut (a response cut off is fetched again; the
#      in-flight counts are lease entries in Redis right after each cut), no host fetched by two nodes at once (nginx's log,
#      X-Dcrawl-Node; check_cluster.py), every node still runs and exits 0.
# The site answers pages whose name ends in -7.html (about a tenth) only
# after SLOW seconds (default 5; slow_upstream.py behind nginx), so
# transfers are in flight across the Redis cut's lapse: V must abort them
# before another node may take their hosts, or the overlap check fails.
# Figures per trial on one line: "trial K figures: ...".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

TRIALS=${TRIALS:-1}
SEED=${SEED:-23}
RANDOM=$SEED
echo "TRIALS=$TRIALS SEED=$SEED"
NS=dcp$$
LEASE=3
CLUSTER_SET=(--set cluster.partition_lease=$LEASE --set cluster.node_timeout=2)
SLOW=${SLOW:-5}
LOW_SPEED=10 # fetch.low_speed_time's default
NODE_SET+=(--set frontier.lease=10 --set fetch.connect_timeout=2 --set fetch.retries=${PARTITION_RETRIES:-1})
DEPTH=2
ST=$WORK/site-nginx
mkdir -p "$ST/tmp"

# the driver's redis-cli (cluster-lib.sh's rcli and friends) runs in
# Redis' namespace; R is the address seen from there
redis-cli() { ip netns exec "$NS-r" /usr/bin/redis-cli "$@"; }
R=redis://127.0.0.1:6379

topo_down() {
    local n
    [ -f "$ST/nginx.pid" ] && kill "$(cat "$ST/nginx.pid")" 2>/dev/null
    [ -n "${SLOW_PID:-}" ] && kill "$SLOW_PID" 2>/dev/null && wait "$SLOW_PID" 2>/dev/null
    for n in r s 1 2 3; do ip netns del "$NS-$n" 2>/dev/null; done
    return 0
}
part_cleanup() { cluster_cleanup; topo_down; }
trap part_cleanup EXIT

topo_up() {
    local k
    for n in r s 1 2 3; do
        ip netns add "$NS-$n" || return 1
        ip -n "$NS-$n" link set lo up
    done
    for k in 1 2 3; do
        ip link add "nr$k" netns "$NS-$k" type veth peer name "rn$k" netns "$NS-r" || return 1
        ip link add "ns$k" netns "$NS-$k" type veth peer name "sn$k" netns "$NS-s" || return 1
        ip -n "$NS-$k" addr add "10.1.$k.2/24" dev "nr$k"
        ip -n "$NS-r" addr add "10.1.$k.1/24" dev "rn$k"
        ip -n "$NS-$k" addr add "10.2.$k.2/24" dev "ns$k"
        ip -n "$NS-s" addr add "10.2.$k.1/24" dev "sn$k"
        ip -n "$NS-$k" link set "nr$k" up
        ip -n "$NS-$k" link set "ns$k" up
        ip -n "$NS-r" link set "rn$k" up
        ip -n "$NS-s" link set "sn$k" up
        ip -n "$NS-$k" route add 10.77.0.0/16 via "10.2.$k.1" || return 1
    done
    # every 10.77.1.N is local to the site's namespace
    ip -n "$NS-s" addr add 10.77.1.254/24 dev lo
}

# site_serve DIR: nginx in the site's namespace, one server per host, the
# access log in cluster-lib.sh's format (unbuffered); -7.html pages come
# from slow_upstream.py after SLOW seconds
site_serve() {
    local dir=$1 hd ip
    (close_fds; exec ip netns exec "$NS-s" python3 "$SRC/tests/e2e/slow_upstream.py" --port 9300 \
        --delay "$SLOW" --log "$ST/slow-starts.log") >"$ST/slow.log" 2>&1 &
    SLOW_PID=$!
    {
        echo "worker_processes 1; pid $ST/nginx.pid; error_log $ST/error.log warn;"
        echo "events { worker_connections 4096; }"
        echo "http {"
        echo "  log_format dcn '$CLUSTER_LOG_FORMAT'; access_log $ST/access.log dcn;"
        echo "  types { text/html html htm; text/plain txt; } default_type application/octet-stream;"
        echo "  keepalive_timeout 65; server_tokens off;"
        for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $ST/tmp/$t;"; done
        for hd in "$dir"/hosts/10.77.1.*; do
            ip=${hd##*/}
            echo "  server { listen $ip:8080; root $hd; index index.html;"
            echo "    location ~ -7\\.html\$ { proxy_pass http://127.0.0.1:9300; proxy_set_header X-Root $hd; } }"
        done
        echo "}"
    } >"$ST/nginx.conf"
    ip netns exec "$NS-s" nginx -c "$ST/nginx.conf" -e "$ST/error.log" || return 1
    local i
    for i in $(seq 1 50); do
        ip netns exec "$NS-1" curl -s -o /dev/null -m 2 "http://10.77.1.1:8080/" && return 0
        sleep 0.1
    done
    echo "partition: the site is not reachable from n1's namespace" >&2
    return 1
}

redis_up() { # redis_up: a fresh redis-server in Redis' namespace
    local dir=$WORK/redis-$1 i
    mkdir -p "$dir"
    (close_fds; exec ip netns exec "$NS-r" redis-server --port 6379 --bind 0.0.0.0 \
        --protected-mode no --dir "$dir" --save '' --appendonly no --daemonize no \
        --set-max-intset-entries 8192 ${SEEN_MODULE:+--loadmodule "$SEEN_MODULE"}) >"$dir/log" 2>&1 &
    REDIS_PIDS+=($!)
    for i in $(seq 1 100); do
        redis-cli ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.05
    done
    cat "$dir/log" >&2
    return 1
}

pnode_start() { # pnode_start K: node nK in its namespace
    local k=$1 id=n$1
    mkdir -p "$OUTS/$id"
    (close_fds; exec ip netns exec "$NS-$k" "$DCRAWL" node --redis "redis://10.1.$k.1:6379" --id "$id" \
        --out "$OUTS/$id" "${NODE_SET[@]}" "${CLUSTER_SET[@]}") >"$OUTS/$id.log" 2>&1 &
    NODE_PID[$id]=$!
}

# link_cut r|s K / link_heal r|s K: node K's link to Redis (r) or to the
# site (s), both ends
link_cut() {
    ip -n "$NS-$2" link set "n$1$2" down
    ip -n "$NS-$1" link set "${1}n$2" down
}
# (the node's end and its route to the site first, the far end last: no
# moment when answers come in but new connections find no route)
link_heal() {
    ip -n "$NS-$2" link set "n$1$2" up
    [ "$1" = s ] && ip -n "$NS-$2" route replace 10.77.0.0/16 via "10.2.$2.1" dev "n$1$2" onlink
    ip -n "$NS-$1" link set "${1}n$2" up
    return 0
}

requests() { awk '/^dcn/ { n++ } END { print n + 0 }' "$ST/access.log" 2>/dev/null; }

# wait_slow_start ID SECS: until ID starts a slow transfer (bounded)
wait_slow_start() {
    local n0 i
    n0=$(grep -c "^$1 " "$ST/slow-starts.log" 2>/dev/null)
    for i in $(seq 1 $(($2 * 20))); do
        [ "$(grep -c "^$1 " "$ST/slow-starts.log" 2>/dev/null)" -gt "${n0:-0}" ] && return 0
        sleep 0.05
    done
    return 1
}

wait_reqs() { # wait_reqs N SECS
    local i
    for i in $(seq 1 $(($2 * 10))); do
        [ "$(requests)" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

owns() { partition_owners "$R" | awk -v id="$1" '$2 == id { print $1 }'; }

# wait_owner_state ID WANT SECS: until ID owns partitions (WANT=1) or none
# (WANT=0); prints the seconds waited, returns 1 on timeout
wait_owner_state() {
    local id=$1 want=$2 t0 c
    t0=$(date +%s.%N)
    while :; do
        c=$(owns "$id")
        if { [ "$want" = 1 ] && [ "${c:-0}" -gt 0 ]; } || { [ "$want" = 0 ] && [ -z "$c" ]; }; then
            secs_since "$t0"
            return 0
        fi
        awk -v a="$(secs_since "$t0")" -v b="$3" 'BEGIN { exit !(a > b) }' && { echo "-"; return 1; }
        sleep 0.1
    done
}

topo_up || { fail "network namespaces (ip netns, veth)"; finish; }
S=/tmp/dcrawl-test-site-ns-30x60
if [ ! -f "$S/manifest.json" ]; then
    rm -rf "$S"
    python3 "$BENCH/gen_site.py" --out "$S" --hosts 30 --pages 60 --seed 1 --ip-base 10.77.1. \
        >"$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; exit 1; }
fi
site_serve "$S" || { fail "nginx in the site's namespace"; finish; }
total=$(manifest_pages "$S" $DEPTH)

for k in $(seq 1 "$TRIALS"); do
    OUTS=$WORK/trial-$k
    mkdir -p "$OUTS"
    : >"$ST/access.log"
    redis_up "trial-$k" || { fail "trial $k: redis"; continue; }
    ip netns exec "$NS-r" "$DCRAWL" seed --redis "$R" --depth $DEPTH "$S/roots.txt" >"$OUTS/seed.log" 2>&1
    check "trial $k: seeds uploaded" [ $? -eq 0 ]
    for j in 1 2 3; do pnode_start $j; done
    v=$((1 + RANDOM % 3))
    w=$((1 + RANDOM % 3))
    pct=$((10 + RANDOM % 21))
    cut=$((LEASE + 1 + RANDOM % 4))
    scut=$((LOW_SPEED + 4 + RANDOM % 4))
    echo "trial $k: cut n$v from Redis for $cut s after $pct % of $total pages; then n$w from the site for $scut s"
    wait_reqs $((total * pct / 100)) 120 || { fail "trial $k: no progress"; nodes_stop; continue; }
    wait_slow_start "n$v" 20 || echo "trial $k: n$v started no slow transfer in 20 s"
    link_cut r "$v"
    # V's leases as Redis has them once V can no longer change them: the
    # URLs it fetches or has fetched but not completed
    inflight=$(node_leases "$R" "n$v")
    t0=$(date +%s.%N)
    take=$(wait_owner_state "n$v" 0 "$cut")
    left=$(awk -v c="$cut" -v s="$(secs_since "$t0")" 'BEGIN { d = c - s; print (d > 0 ? d : 0) }')
    sleep "$left"
    link_heal r "$v"
    th=$(date +%s.%N)
    check "trial $k: while n$v was cut off, the others took all its partitions (after $take s)" [ "$take" != - ]
    back=$(wait_owner_state "n$v" 1 30)
    check "trial $k: n$v owns partitions again after the heal (after $back s)" [ "$back" != - ]
    recover=$(secs_since "$th")
    link_cut s "$w"
    # a response cut off mid-way is fetched again: W's in-flight count too
    winflight=$(node_leases "$R" "n$w")
    sleep "$scut"
    link_heal s "$w"
    crawl_wait_done "$R" 150
    rc=$?
    check "trial $k: the crawl completes (waited $CRAWL_SECS s)" [ $rc -eq 0 ]
    alive=0
    for id in n1 n2 n3; do node_alive "$id" && alive=$((alive + 1)); done
    check "trial $k: all 3 nodes still run ($alive)" [ $alive -eq 3 ]
    nodes_stop
    check "trial $k: SIGTERM: every node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
    for id in n1 n2 n3; do echo "trial $k: $id: $(grep -m1 ' cluster:' "$OUTS/$id.log" | sed 's/^ *//')"; done
    off=$(grep -m1 ' cut off from the web' "$OUTS/n$w.log" | sed 's/^ *//')
    echo "trial $k: n$w: ${off:-never counted itself cut off from the web}"
    grep -h 'dcrawl node' "$OUTS/n$w.log" | sed "s/^/trial $k: /"
    gaveup=$(grep -m1 -o '[0-9]* URLs given up' "$OUTS/n$w.log" | cut -d' ' -f1)
    check "trial $k: n$w cut from the site gave up no URL (${gaveup:-?})" [ "${gaveup:-x}" = 0 ]
    cp "$ST/access.log" "$WORK/trial-$k.access.log"
    kill "${REDIS_PIDS[-1]}"
    wait "${REDIS_PIDS[-1]}" 2>/dev/null
    check_cluster "$S" $DEPTH "$WORK/trial-$k.access.log" "$OUTS"/n1 "$OUTS"/n2 "$OUTS"/n3 -- \
        --nodes n1,n2,n3 --allow-dups $((inflight + winflight)) >"$OUTS/check.txt"
    rc=$?
    cat "$OUTS/check.txt"
    check "trial $k: nothing lost, duplicates <= $inflight + $winflight in flight, hosts exclusive" [ $rc -eq 0 ]
    lost=$(grep -o 'missing [0-9]*' "$OUTS/check.txt" | head -1 | cut -d' ' -f2)
    dups=$(grep -o 'nginx log: [0-9]* page requests, [0-9]* duplicate' "$OUTS/check.txt" | awk '{ print $6 }')
    ovl=$(grep -o '[0-9]* overlaps' "$OUTS/check.txt" | cut -d' ' -f1)
    echo "trial $k figures: seed $SEED, Redis cut n$v ${cut}s, site cut n$w ${scut}s; lost ${lost:-?}," \
        "duplicate fetches ${dups:-?} (in flight: n$v $inflight at the Redis cut, n$w $winflight at the site cut), overlaps ${ovl:-?}, partitions taken over after ${take}s," \
        "n$v rejoined ${back}s after the heal, crawl done ${CRAWL_SECS}s after the site cut ended (recovery ${recover}s)," \
        "n$w gave up ${gaveup:-?} URLs, ${off:-never counted itself cut off}"
done
finish
