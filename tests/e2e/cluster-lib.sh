# cluster-lib.sh: helpers for the multi-node tests (sourced after lib.sh).
#
# Several `dcrawl node` daemons crawl one site against one Redis (a
# redis-server on a unix socket, or a Redis Cluster from rcluster-lib.sh).
# nginx logs, per request, which node sent it (the X-Dcrawl-Node request
# header) and when it started and ended, so tests/e2e/check_cluster.py can
# check duplicates, per-host exclusivity and the load per node.
#
#   cluster_serve SITE        nginx via lib.sh `serve`, then its log format
#                             switched to CLUSTER_LOG_FORMAT (unbuffered, so
#                             the log is complete as soon as a request ends)
#   cluster_log_take NAME     move the access log to $WORK/NAME.access.log
#                             and make nginx start a fresh one (one per trial)
#   node_start ID [ARG...]    `dcrawl node --redis $R --id ID --out $OUTS/ID`
#                             in the background, log $OUTS/ID.log (OUTS
#                             defaults to $WORK; a trial sets its own)
#   node_kill9 ID, node_alive ID, nodes_stop (SIGTERM, bounded wait; sets
#                             NODES_STOP_RC to the first nonzero exit status)
#   frontier_pending URL      URLs queued or in flight (sum of every
#                             <prefix>:{p}:pend), "" when Redis is unreachable
#   node_leases URL [ID]      lease entries of node ID (its in-flight URLs;
#                             every node's without ID)
#   wait_requests N SECS      bounded wait until nginx logged N requests
#   check_owners URL ID...    each ID owns a partition (<prefix>:{p}:own),
#                             nobody else owns one
#   manifest_pages SITE D     pages within depth D of the site
#   crawl_wait_done URL SECS  bounded wait until the crawl is finished
#   redis_start_aof NAME / redis_restart NAME SIG: a redis-server with an
#                             append-only file (fsync always) on a fixed
#                             socket, killed and started again on it
#
# The Redis Cluster counterpart lives in rcluster-lib.sh (its own file):
#   rcluster_start NAME  starts 3 masters on free 127.0.0.1 ports (each with
#                        the seen-set module unless DCRAWL_SEEN_MODULE=none,
#                        dirs under $WORK/rcluster-NAME), creates the cluster
#                        (redis-cli --cluster create, no replicas), waits for
#                        cluster_state:ok, appends the pids to REDIS_PIDS and
#                        sets RC=redis-cluster://127.0.0.1:P1,127.0.0.1:P2,...
#
# Settings every node gets: NODE_SET (politeness.delay=0, noise off, so the
# manifest's within_depth set is the expected one) and CLUSTER_SET (the
# cluster.* keys; dropped with a note when this binary does not know them).

PREFIX=${DCRAWL_PREFIX:-dc}
OUTS=$WORK
NODE_SET=(--set politeness.delay=0 --set noise.enabled=false --set fetch.concurrency=32)
CLUSTER_SET=(--set cluster.partition_lease=3 --set cluster.node_timeout=2)
# $server_addr $status $msec $request_time "node" "uri"; the leading tag
# tells these lines from those written before the switch (serve.sh's probes)
CLUSTER_LOG_FORMAT="dcn \$server_addr \$status \$msec \$request_time \"\$http_x_dcrawl_node\" \"\$request_uri\""
declare -A NODE_PID=()
NODES_STOP_RC=0

cluster_cleanup() {
    local id
    for id in "${!NODE_PID[@]}"; do
        kill -9 "${NODE_PID[$id]}" 2>/dev/null && wait "${NODE_PID[$id]}" 2>/dev/null
    done
    cleanup
}
trap cluster_cleanup EXIT

probe=$("$DCRAWL" seed --redis unix:///nonexistent/none.sock "${CLUSTER_SET[@]}" /dev/null 2>&1)
if [[ "$probe" == *"unknown key"* ]]; then
    echo "note: this dcrawl does not know the cluster.* keys yet; nodes run without ${CLUSTER_SET[*]}"
    CLUSTER_SET=()
fi

nginx_pid() { cat "$STATE/nginx.pid" 2>/dev/null; }

cluster_serve() {
    serve "$1" || return 1
    local conf=$STATE/nginx.conf pid probe
    grep -q "log_format bench" "$conf" || { echo "cluster_serve: no log_format in $conf" >&2; return 1; }
    sed -i "s|log_format bench '[^']*'; access_log \([^ ]*\) bench [^;]*;|log_format bench '$CLUSTER_LOG_FORMAT'; access_log \1 bench;|" "$conf"
    grep -q 'http_x_dcrawl_node' "$conf" || { echo "cluster_serve: log format not replaced" >&2; return 1; }
    pid=$(nginx_pid)
    nginx -t -q -c "$conf" -e "$STATE/error.log" || return 1
    kill -HUP "$pid"
    # the reload is done once a request is logged in the new format
    probe=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -H 'X-Dcrawl-Node: log-probe' \
        "http://127.0.1.1:8080/dcrawl-log-probe" || true)
    local i
    for i in $(seq 1 30); do
        grep -q '^dcn .*"log-probe" "/dcrawl-log-probe"' "$STATE/access.log" && return 0
        sleep 0.2
        curl -s -o /dev/null -m 5 -H 'X-Dcrawl-Node: log-probe' "http://127.0.1.1:8080/dcrawl-log-probe"
    done
    echo "cluster_serve: nginx did not switch to the node log format (probe $probe)" >&2
    return 1
}

cluster_log_take() {
    local pid
    pid=$(nginx_pid)
    mv "$STATE/access.log" "$WORK/$1.access.log"
    kill -USR1 "$pid"
    local i
    for i in $(seq 1 50); do [ -f "$STATE/access.log" ] && return 0; sleep 0.1; done
    echo "cluster_log_take: nginx did not reopen its log" >&2
    return 1
}

node_start() {
    local id=$1
    shift
    mkdir -p "$OUTS/$id"
    (close_fds; exec "$DCRAWL" node --redis "$R" --id "$id" --out "$OUTS/$id" "${NODE_SET[@]}" \
        "${CLUSTER_SET[@]}" "$@") >"$OUTS/$id.log" 2>&1 &
    NODE_PID[$id]=$!
}

node_alive() { [ -n "${NODE_PID[$1]:-}" ] && kill -0 "${NODE_PID[$1]}" 2>/dev/null; }

node_kill9() {
    kill -9 "${NODE_PID[$1]}" 2>/dev/null
    wait "${NODE_PID[$1]}" 2>/dev/null
    unset "NODE_PID[$1]"
}

# nodes_stop: SIGTERM to every node, then wait up to 30 s for each
nodes_stop() {
    local id pid rc i
    NODES_STOP_RC=0
    for id in "${!NODE_PID[@]}"; do kill -TERM "${NODE_PID[$id]}" 2>/dev/null; done
    for id in "${!NODE_PID[@]}"; do
        pid=${NODE_PID[$id]}
        for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "node $id did not stop within 30 s of SIGTERM" >&2
            kill -9 "$pid"
        fi
        wait "$pid"
        rc=$?
        [ $rc -ne 0 ] && { echo "node $id exited $rc" >&2; NODES_STOP_RC=$rc; }
        unset "NODE_PID[$id]"
    done
}

# rcli URL ARG...: redis-cli on the server of URL (the first one of a
# redis-cluster:// list)
rcli() {
    local url=$1 hp
    shift
    case "$url" in
    unix://*) redis-cli -s "${url#unix://}" "$@" ;;
    redis-cluster://*)
        hp=${url#redis-cluster://}
        hp=${hp%%,*}
        redis-cli -c -h "${hp%:*}" -p "${hp##*:}" "$@" ;;
    redis://*)
        hp=${url#redis://}
        local db=0
        case "$hp" in */*) db=${hp#*/}; hp=${hp%%/*} ;; esac
        redis-cli -h "${hp%:*}" -p "${hp##*:}" -n "${db:-0}" "$@" ;;
    *) echo "rcli: unsupported URL $url" >&2; return 1 ;;
    esac
}

# servers URL: one redis-cli target per line ("-s PATH" or "-h H -p P"):
# the server itself, or every master of a cluster
servers() {
    case "$1" in
    redis-cluster://*)
        rcli "$1" cluster nodes 2>/dev/null | awk '$3 ~ /master/ { split($2, a, "@"); n = split(a[1], b, ":");
            print "-h " b[1] " -p " b[n] }' ;;
    unix://*) echo "-s ${1#unix://}" ;;
    redis://*)
        local hp=${1#redis://}
        hp=${hp%%/*}
        echo "-h ${hp%:*} -p ${hp##*:}" ;;
    esac
}

# on_each_key URL PATTERN CMD [ARG...]: "CMD KEY ARG..." for every key
# matching PATTERN on every server of URL; prints the replies, one a line
on_each_key() {
    local url=$1 pat=$2 cmd=$3 s db=()
    shift 3
    case "$url" in redis://*/*) db=(-n "${url##*/}") ;; esac
    while read -r s; do
        # shellcheck disable=SC2086
        redis-cli $s "${db[@]}" --scan --pattern "$pat" | sed "s/.*/$cmd & $*/" |
            redis-cli $s "${db[@]}" 2>/dev/null
    done < <(servers "$url")
}

frontier_pending() {
    local out
    out=$(servers "$1" | head -1)
    [ -n "$out" ] || return 0
    # shellcheck disable=SC2086
    redis-cli $out ping 2>/dev/null | grep -q PONG || return 0
    on_each_key "$1" "$PREFIX:*:pend" HVALS | awk '/^-?[0-9]+$/ { s += $1 } END { print s + 0 }'
}

# node_leases URL [ID]: lease entries of node ID (of every node without ID)
node_leases() {
    local who=${2:-$'[^\t]*'}
    on_each_key "$1" "$PREFIX:*:lease" ZRANGE 0 -1 | tr -d '\r' | grep -c "^$who"$'\t'
}

# partition_owners URL: "count id" per node owning partitions (the values
# of every <prefix>:{p}:own), most first
partition_owners() {
    on_each_key "$1" "$PREFIX:*:own" GET | tr -d '\r' | grep -v '^$' | sort | uniq -c | sort -rn
}

# check_owners URL ID...: every ID owns at least one partition and no
# partition is owned by anyone else
check_owners() {
    local url=$1 owners id
    shift
    owners=$(partition_owners "$url")
    echo "partition owners: $(echo "$owners" | awk 'NF { printf "%s %s, ", $2, $1; n++ }
        END { if (!n) printf "none (no '"$PREFIX"':{p}:own key)" }')"
    for id in "$@"; do echo "$owners" | awk -v id="$id" '$2 == id { f = 1 } END { exit !f }' || return 1; done
    echo "$owners" | awk -v ids=" $* " 'NF && index(ids, " " $2 " ") == 0 { bad = 1 } END { exit bad }'
}

# node_states URL: "id state" of every live node that reports one (empty
# until the nodes publish <prefix>:node:<id>)
node_states() {
    local now id
    now=$(($(date +%s%N) / 1000000))
    for id in $(rcli "$1" zrangebyscore "$PREFIX:nodes" "$now" +inf 2>/dev/null); do
        echo "$id $(rcli "$1" hget "$PREFIX:node:$id" state 2>/dev/null)"
    done
}

# secs_since T0: seconds from T0 (`date +%s.%N`) to now, 3 decimals (awk:
# bc is not on a fresh Debian)
secs_since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.3f", t1 - t0 }'; }

# crawl_wait_done URL SECS: nothing pending for 2 s in a row (and every node
# that reports its state idle), bounded by SECS; fails early when no node
# is left running. Sets CRAWL_SECS to the time waited.
crawl_wait_done() {
    local url=$1 limit=$2 t0 stable=0 p busy id alive
    t0=$(date +%s.%N)
    while :; do
        CRAWL_SECS=$(secs_since "$t0")
        if awk -v a="$CRAWL_SECS" -v b="$limit" 'BEGIN { exit !(a > b) }'; then
            echo "crawl_wait_done: not finished after $limit s (pending $(frontier_pending "$url"))" >&2
            return 1
        fi
        alive=0
        for id in "${!NODE_PID[@]}"; do node_alive "$id" && alive=$((alive + 1)); done
        if [ $alive -eq 0 ]; then
            echo "crawl_wait_done: no node is running (pending $(frontier_pending "$url"))" >&2
            for id in "${!NODE_PID[@]}"; do
                echo "  $id stopped; its log begins: $(head -1 "$OUTS/$id.log")" >&2
            done
            return 1
        fi
        p=$(frontier_pending "$url")
        busy=$(node_states "$url" | awk '$2 != "idle"' | wc -l)
        if [ "$p" = 0 ] && [ "$busy" -eq 0 ]; then
            stable=$((stable + 1))
            [ $stable -ge 4 ] && return 0
        else
            stable=0
        fi
        sleep 0.5
    done
}

# manifest_pages SITE DEPTH: pages within DEPTH (the page requests a crawl
# makes; 404s and robots.txt come on top)
manifest_pages() {
    python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["within_depth"][sys.argv[2]]))' \
        "$1/manifest.json" "$2"
}

# wait_requests N SECS: bounded wait until nginx logged N requests
wait_requests() {
    local i n=0
    for i in $(seq 1 $(($2 * 10))); do
        n=$(grep -c '^dcn' "$STATE/access.log" 2>/dev/null)
        [ "${n:-0}" -ge "$1" ] && return 0
        sleep 0.1
    done
    echo "wait_requests: only $n requests after $2 s" >&2
    return 1
}

redis_aof_args() {
    local dir=$WORK/redis-$1
    echo --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 --dir "$dir" --save '' \
        --appendonly yes --appendfsync always --daemonize no --set-max-intset-entries 8192 \
        ${SEEN_MODULE:+--loadmodule "$SEEN_MODULE"}
}

redis_aof_run() {
    local dir=$WORK/redis-$1 i
    # shellcheck disable=SC2046
    (close_fds; exec redis-server $(redis_aof_args "$1")) >>"$dir/log" 2>&1 &
    REDIS_PIDS+=($!)
    REDIS_AOF_PID=$!
    for i in $(seq 1 100); do
        redis-cli -s "$dir/redis.sock" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.05
    done
    cat "$dir/log" >&2
    return 1
}

redis_start_aof() {
    mkdir -p "$WORK/redis-$1"
    redis_aof_run "$1" || return 1
    R="unix://$WORK/redis-$1/redis.sock"
}

# redis_restart NAME SIG: kill the server with SIG, start it again on the
# same socket after 1 s; sets REDIS_DOWN_SECS
redis_restart() {
    local t0
    t0=$(date +%s.%N)
    kill "-$2" "$REDIS_AOF_PID"
    wait "$REDIS_AOF_PID" 2>/dev/null
    rm -f "$WORK/redis-$1/redis.sock"
    sleep 1
    redis_aof_run "$1" || return 1
    REDIS_DOWN_SECS=$(secs_since "$t0")
}

# check_cluster SITE DEPTH LOG OUTDIR... -- [check_cluster.py flags]
check_cluster() {
    local site=$1 depth=$2 log=$3 outs=()
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do outs+=(--out "$1"); shift; done
    [ $# -gt 0 ] && shift
    python3 "$SRC/tests/e2e/check_cluster.py" --bench "$BENCH" --manifest "$site/manifest.json" \
        --depth "$depth" --access-log "$log" "${outs[@]}" "$@"
}

# crawl3 REDIS_URL SITE WHAT: the 3-node acceptance crawl shared by
# e2e-cluster (one redis-server) and e2e-cluster-rcluster (a Redis
# Cluster): seed, start n1..n3, wait for the end, stop them, then check
# ownership, the manifest set, duplicates, host exclusivity and balance.
crawl3() {
    local r=$1 s=$2 what=$3 rc id
    "$DCRAWL" seed --redis "$r" --depth 3 "$s/roots.txt" >"$WORK/seed.log" 2>&1
    rc=$?
    cat "$WORK/seed.log"
    check "seeds uploaded ($what)" [ $rc -eq 0 ]
    for id in n1 n2 n3; do node_start "$id"; done
    crawl_wait_done "$r" 240
    rc=$?
    echo "crawl: waited ${CRAWL_SECS} s (exit $rc)"
    check "the crawl finishes (nothing pending) within 240 s" [ $rc -eq 0 ]
    check "each node owns partitions, nobody else does" check_owners "$r" n1 n2 n3
    nodes_stop
    check "SIGTERM: every node exits 0" [ "$NODES_STOP_RC" -eq 0 ]
    for id in n1 n2 n3; do tail -3 "$WORK/$id.log"; done
    check "3 nodes ($what): manifest set, no duplicates, hosts exclusive, balanced" \
        check_cluster "$s" 3 "$STATE/access.log" "$WORK"/n1 "$WORK"/n2 "$WORK"/n3 -- \
        --nodes n1,n2,n3 --balance 0.25
}
