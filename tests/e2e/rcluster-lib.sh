# rcluster-lib.sh: a real 3-master Redis Cluster on loopback for the tests
# (sourced after lib.sh, whose EXIT trap stops every pid in REDIS_PIDS).
#
#   rcluster_start NAME   start 3 redis-server masters (--cluster-enabled
#                         yes, free TCP ports on 127.0.0.1, files in
#                         $WORK/rcluster-NAME), create the cluster with
#                         redis-cli --cluster create, wait until every node
#                         says cluster_state:ok; sets
#                         RC=redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3
#                         and RC_PORTS=(p1 p2 p3). Returns 1 on failure.
#                         With RC_PASS set, every master has requirepass
#                         and masterauth RC_PASS (redis-cli here logs in
#                         with REDISCLI_AUTH).

# free_port_pair: a TCP port p on 127.0.0.1 with p + 10000 (the cluster
# bus) free too.
rcluster_free_port() {
    python3 - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(20000, 40000)
    ok = True
    for q in (p, p + 10000):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", q))
        except OSError:
            ok = False
        finally:
            s.close()
    if ok:
        print(p)
        break
EOF
}

rcluster_start() {
    local dir=$WORK/rcluster-$1 p i n nodes=() url= auth=()
    mkdir -p "$dir"
    if [ -n "${RC_PASS:-}" ]; then
        auth=(--requirepass "$RC_PASS" --masterauth "$RC_PASS")
        local -x REDISCLI_AUTH=$RC_PASS
    fi
    RC_PORTS=()
    for n in 1 2 3; do
        p=$(rcluster_free_port)
        while [[ " ${RC_PORTS[*]} " == *" $p "* ]]; do p=$(rcluster_free_port); done
        [ -n "$p" ] || { echo "rcluster: no free port" >&2; return 1; }
        mkdir -p "$dir/$p"
        redis-server --bind 127.0.0.1 --port "$p" --dir "$dir/$p" \
            --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" \
            --cluster-node-timeout 5000 --save '' --appendonly no \
            --daemonize no --set-max-intset-entries 8192 "${auth[@]}" \
            ${SEEN_MODULE:+--loadmodule "$SEEN_MODULE"} >"$dir/$p/log" 2>&1 &
        REDIS_PIDS+=($!)
        RC_PORTS+=("$p")
        nodes+=("127.0.0.1:$p")
        url=${url:+$url,}127.0.0.1:$p
    done
    for p in "${RC_PORTS[@]}"; do
        for i in $(seq 1 100); do
            redis-cli -p "$p" ping >/dev/null 2>&1 && break
            sleep 0.05
        done
        redis-cli -p "$p" ping >/dev/null 2>&1 ||
            { echo "rcluster: node $p did not start" >&2; cat "$dir/$p/log" >&2; return 1; }
    done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 \
        --cluster-yes >"$dir/create.log" 2>&1 ||
        { echo "rcluster: create failed" >&2; cat "$dir/create.log" >&2; return 1; }
    for p in "${RC_PORTS[@]}"; do
        for i in $(seq 1 200); do
            redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
            sleep 0.05
        done
        redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' ||
            { echo "rcluster: node $p not ok" >&2; return 1; }
    done
    RC="redis-cluster://$url"
}
