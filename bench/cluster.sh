#!/usr/bin/env bash
# cluster.sh: pages/s of 1, 2, 3 `dcrawl node` processes on this machine,
# sharing one redis-server (private, unix socket) and crawling the
# gen_site.py bench site served by nginx, and what each page costs in
# Redis: commands per page from INFO commandstats (every command of every
# node, reset after seeding) and the nodes' own round trips (pipelines) per
# page from their summaries.
#
#   bench/cluster.sh [--hosts 60] [--pages 300] [--depth 6] [--nodes "1 2 3"]
#                    [--shared] [--set key=value]...
#
# Each run: fresh Redis, `dcrawl seed --depth D roots.txt`, CONFIG
# RESETSTAT, then N nodes (ids n1..nN, --exit-when-idle) started together;
# wall time runs from their start to the last one's exit (a node exits when
# nothing is queued or in flight anywhere). Pages = pages the nodes report
# (checked against their JSON lines). Release build: build-rel/dcrawl
# (DCRAWL_BIN to override).
#
# The site is served by a private nginx of this script on a free port on
# 127.0.1.x (the site generated for that port, nginx configured like
# ../shared/bench/serve.sh: one worker, keep-alive, open_file_cache), so it
# needs no lock and disturbs nobody. --shared uses serve.sh on the shared
# port 8080 instead, holding /tmp/dcrawl-nginx.lock (flock) from start to
# stop (do not wrap the script in another flock on that file). Children
# never inherit the lock's descriptor, so a leaked process cannot hold it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
BIN=${DCRAWL_BIN:-$ROOT/build-rel/dcrawl}
MODULE=${DCRAWL_SEEN_MODULE:-$(dirname "$BIN")/dcrawl-seen.so}
HOSTS=60 PAGES=300 DEPTH=6 NODES="1 2 3" SETS=() SHARED_NGINX=0
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) HOSTS=$2; shift ;;
    --pages) PAGES=$2; shift ;;
    --depth) DEPTH=$2; shift ;;
    --nodes) NODES=$2; shift ;;
    --set) SETS+=(--set "$2"); shift ;;
    --shared) SHARED_NGINX=1 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$BIN" ] || { echo "cluster.sh: build $BIN first (cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release)" >&2; exit 1; }
[ -f "$MODULE" ] || { echo "cluster.sh: no seen-set module $MODULE" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    { echo "cluster.sh: needs redis-server and redis-cli (scripts/deps.sh)" >&2; exit 1; }

WORK=${WORK:-/tmp/dcrawl-cluster-bench.$$}
export STATE=$WORK/nginx
rm -rf "$WORK"
mkdir -p "$WORK" "$STATE/tmp"
REDIS_PID= NODE_PIDS=()
cleanup() {
    local p
    for p in "${NODE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
    if [ "$SHARED_NGINX" = 1 ]; then
        [ -f "$STATE/nginx.pid" ] && bash "$SHARED/bench/serve.sh" stop >/dev/null 2>&1
    elif [ -f "$STATE/nginx.pid" ]; then
        kill "$(cat "$STATE/nginx.pid")" 2>/dev/null
    fi
    return 0
}
trap cleanup EXIT

# a TCP port free on every host address 127.0.1.1 .. 127.0.1.HOSTS:
# PORT if given and free, else the first free one from 18080 on
free_port() {
    python3 - "$HOSTS" "${PORT:-18080}" <<'PY'
import socket, sys
n, first = int(sys.argv[1]), int(sys.argv[2])
for port in range(first, first + 200):
    socks, ok = [], True
    for i in range(1, n + 1):
        s = socket.socket()
        try:
            s.bind(("127.0.1.%d" % i, port))
        except OSError:
            ok = False
        socks.append(s)
        if not ok:
            break
    for s in socks:
        s.close()
    if ok:
        print(port)
        sys.exit(0)
sys.exit("no free port")
PY
}
if [ "$SHARED_NGINX" = 1 ]; then
    SPORT=8080
else
    SPORT=$(free_port) || exit 1
fi
SITE=/tmp/dcrawl-bench-site-${HOSTS}x${PAGES}-p$SPORT
if [ ! -f "$SITE/manifest.json" ]; then
    rm -rf "$SITE"
    python3 "$SHARED/bench/gen_site.py" --out "$SITE" --hosts "$HOSTS" --pages "$PAGES" \
        --seed 1 --depth "$DEPTH" --port "$SPORT" >"$WORK/gen.log"
fi

# the private nginx: serve.sh's settings, on SPORT
private_nginx() {
    local ip user=nobody group=nogroup
    id www-data >/dev/null 2>&1 && { user=www-data; group=www-data; }
    {
        echo "worker_processes ${WORKERS:-1};"
        echo "user $user $group;"
        echo "pid $STATE/nginx.pid;"
        echo "error_log $STATE/error.log warn;"
        echo "worker_rlimit_nofile 65536;"
        echo "events { worker_connections 8192; multi_accept on; }"
        echo "http {"
        echo "  access_log off;"
        echo "  types { text/html html htm; text/plain txt; }"
        echo "  default_type application/octet-stream;"
        echo "  sendfile on; tcp_nopush on; tcp_nodelay on;"
        echo "  keepalive_timeout 65; keepalive_requests 1000000;"
        echo "  open_file_cache max=100000 inactive=120s; open_file_cache_valid 60s;"
        echo "  server_tokens off; etag on;"
        for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $STATE/tmp/$t;"; done
        for ip in $(cd "$SITE/hosts" && ls -d 127.*); do
            echo "  server { listen $ip:$SPORT; root $SITE/hosts/$ip; index index.html; }"
        done
        echo "}"
    } >"$STATE/nginx.conf"
    nginx -c "$STATE/nginx.conf" -e "$STATE/error.log" 9>&- || return 1
    local i
    for i in $(seq 1 50); do
        curl -s -o /dev/null "http://127.0.1.1:$SPORT/" && return 0
        sleep 0.1
    done
    echo "cluster.sh: nginx does not answer on 127.0.1.1:$SPORT" >&2
    return 1
}

# Redis for one run, on a unix socket in the run's dir; sets SOCK, R
redis_up() {
    local dir=$WORK/run-$1/redis
    mkdir -p "$dir"
    SOCK=$dir/redis.sock
    redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --dir "$dir" \
        --save '' --appendonly no --set-max-intset-entries 8192 \
        --loadmodule "$MODULE" >"$dir/log" 2>&1 9>&- &
    REDIS_PID=$!
    local i
    for i in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
    [ -S "$SOCK" ] || { cat "$dir/log" >&2; return 1; }
    R=unix://$SOCK
}
redis_down() {
    redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1 || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=
}
# total calls over every command in INFO commandstats
redis_calls() {
    redis-cli -s "$SOCK" info commandstats |
        awk -F'[=,]' '/^cmdstat_/ { n += $2 } END { print n + 0 }'
}
now() { date +%s.%N; }

# run N: prints "N wall pages redis_calls roundtrips per-node-pages loadavg"
run() {
    local n=$1 dir=$WORK/run-$1 k t0 t1 calls load rt=0 pages=0 spread=
    redis_up "$n" || return 1
    "$BIN" seed --redis "$R" --depth "$DEPTH" "$SITE/roots.txt" >"$dir/seed.log" 2>&1 9>&- ||
        { cat "$dir/seed.log" >&2; return 1; }
    redis-cli -s "$SOCK" config resetstat >/dev/null
    load=$(cut -d' ' -f1 /proc/loadavg)   # other work on the machine skews pages/s
    NODE_PIDS=()
    t0=$(now)
    for k in $(seq 1 "$n"); do
        timeout 900 "$BIN" node --redis "$R" --id "n$k" --out "$dir/out" --exit-when-idle \
            --set noise.enabled=false --set politeness.delay=0 \
            --set politeness.host_connections=32 --set politeness.ip_connections=32 \
            "${SETS[@]}" >"$dir/node-$k.log" 2>&1 9>&- &
        NODE_PIDS+=($!)
    done
    local fail=0
    for k in "${!NODE_PIDS[@]}"; do
        wait "${NODE_PIDS[$k]}" || { echo "cluster.sh: node n$((k + 1)) failed:" >&2
                                     tail -5 "$dir/node-$((k + 1)).log" >&2; fail=1; }
    done
    t1=$(now)
    NODE_PIDS=()
    calls=$(redis_calls)
    redis_down
    [ "$fail" = 0 ] || return 1
    for k in $(seq 1 "$n"); do
        local p r
        p=$(awk '/^crawled [0-9]+ pages/ { print $2 }' "$dir/node-$k.log")
        r=$(awk '/Redis round trips per page/ { for (i = 1; i <= NF; i++) if ($i == "Redis") print $(i - 1) }' "$dir/node-$k.log")
        pages=$((pages + ${p:-0}))
        rt=$(awk -v a="$rt" -v b="${r:-0}" -v p="${p:-0}" 'BEGIN { print a + b * p }')
        spread+="${spread:+/}${p:-0}"
    done
    local lines
    lines=$(cat "$dir"/out/depth-*/*.jsonl 2>/dev/null | wc -l)
    [ "$lines" = "$pages" ] ||
        echo "cluster.sh: run $n: summaries say $pages pages, output has $lines lines" >&2
    echo "$n $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf("%.2f", b - a) }') $pages $calls $rt $spread $load"
}

if [ "$SHARED_NGINX" = 1 ]; then
    exec 9>/tmp/dcrawl-nginx.lock
    flock -w 1800 9 || { echo "cluster.sh: nginx lock busy" >&2; exit 1; }
    bash "$SHARED/bench/serve.sh" start "$SITE" >"$WORK/serve.log" 2>&1 9>&- ||
        { cat "$WORK/serve.log" >&2; exit 1; }
else
    private_nginx || exit 1
fi
RESULTS=()
for n in $NODES; do
    run "$n" >"$WORK/run-$n.result" || exit 1   # not a subshell: the trap sees its pids
    line=$(cat "$WORK/run-$n.result")
    RESULTS+=("$line")
    echo "run: $line" >&2
done
if [ "$SHARED_NGINX" = 1 ]; then
    bash "$SHARED/bench/serve.sh" stop >/dev/null 2>&1 9>&- || true
    flock -u 9
    exec 9>&-
else
    kill "$(cat "$STATE/nginx.pid")" 2>/dev/null || true
fi
rm -f "$STATE/nginx.pid"

echo
echo "dcrawl cluster bench: site $HOSTS hosts x $PAGES pages (gen_site.py --seed 1), depth $DEPTH,"
echo "nginx $([ "$SHARED_NGINX" = 1 ] && echo "serve.sh, port 8080" || echo "private, port $SPORT"), ${WORKERS:-1} worker,"
echo "one redis-server (unix socket), nodes on $(nproc) cores, $(basename "$BIN") $("$BIN" --version 2>/dev/null | head -1)"
echo
echo "| nodes | wall s | pages | pages/s | redis cmds | cmds/page | round trips/page | pages per node | ratio vs 1 node | load avg before |"
echo "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
base=
for line in "${RESULTS[@]}"; do
    set -- $line
    awk -v n="$1" -v w="$2" -v p="$3" -v c="$4" -v rt="$5" -v s="$6" -v la="$7" \
        -v base="${base:-0}" 'BEGIN {
        ps = (w > 0) ? p / w : 0
        r = (base > 0) ? sprintf("%.2f", ps / base) : "1.00"
        printf("| %d | %.2f | %d | %.0f | %d | %.2f | %.2f | %s | %s | %s |\n", n, w, p, ps, c,
               p ? c / p : 0, p ? rt / p : 0, s, r, la)
    }'
    [ -n "$base" ] || base=$(awk -v w="$2" -v p="$3" 'BEGIN { print((w > 0) ? p / w : 0) }')
done
