#!/usr/bin/env bash
# many-hosts.sh: memory of one node that owns N distinct hosts. Run it as
# root (it makes a network namespace of its own, so no lock is needed):
#
#   bash bench/many-hosts.sh [N...]          # default: 10000 100000 1000000
#
# The link stream: N seeds http://127.A.B.C:PORT/, each on its own IP
# literal in 127.0.0.0/8, inside `unshare -n` (loopback up, nothing leaves
# the machine). One host in SERVE (10 by default; 1 = all) is on port 8097,
# where one nginx on *:8097 answers every address fast; the others are on
# port 8098, where nothing listens: their robots.txt fetch is refused at
# once, the host is dead (robots.txt not retried, its URL skipped; a dead
# host's answer is not stored in Redis) but it has taken its robots.txt
# cache entry, politeness clock, address slot and noise state all the same.
# The served hosts' paths:
#   /robots.txt  "User-agent: *  Disallow: /private" (rules parsed, cached)
#   /            a page linking /a and /private/x
#   /a           a page without links
# so each served host costs a robots.txt fetch, two page fetches (/ at depth 0,
# /a at depth 1; the node crawls a level at a time, so by depth 1 most
# hosts' robots.txt rules have left the node's cache and come back from
# Redis), one URL skipped by its rules, politeness clocks, an IP-literal
# address slot and the noise filter's per-host state. One redis-server
# (unix socket, no persistence) and one `dcrawl node --exit-when-idle`
# (default settings except fetch.concurrency=FETCH_CONC, 512 by default,
# and politeness.delay=DELAY, 0 by default: with a gap each host would
# hold a slot for it between robots.txt and its pages, and the clocks are
# kept either way) per N.
#
# Printed per N: hosts owned, the node's peak RSS (VmHWM) and RSS at the
# end (VmRSS, last reading before it exits; both sampled every 0.5 s),
# Redis used_memory after the crawl and per host, pages fetched, robots.txt
# fetched / taken from Redis / dropped from memory, wall seconds (seeding
# included) and of them the seeding's, the CPU
# seconds (user + system) of the node and of Redis (the machine may be
# shared: CPU is the figure to compare), hosts handled per wall second and
# per node CPU second, and partition leases lost (0 unless the node loop
# stalled past cluster.partition_lease). Every
# SAMPLE half-seconds (60) WORK/nN/samples.txt gets a line "unix-time
# hosts-handled-at-depth-0 RSS-MB peak-MB", the curve within one run. Work files
# in WORK (/tmp/many-hosts); BIN picks the binary (build-rel/dcrawl).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
BIN=${BIN:-$SRC/build-rel/dcrawl}
WORK=${WORK:-/tmp/many-hosts}
PORT=${PORT:-8097}
FETCH_CONC=${FETCH_CONC:-512}
DELAY=${DELAY:-0}
SERVE=${SERVE:-10}
SAMPLE=${SAMPLE:-60}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000 1000000)

if [ "${MANY_HOSTS_INSIDE:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "many-hosts: run as root (unshare -n)" >&2; exit 1; }
    for t in nginx redis-server redis-cli unshare ip; do
        command -v $t >/dev/null || { echo "many-hosts: $t is not installed" >&2; exit 1; }
    done
    [ -x "$BIN" ] || { echo "many-hosts: no $BIN (build build-rel first)" >&2; exit 1; }
    export BIN WORK PORT FETCH_CONC DELAY SERVE SAMPLE MANY_HOSTS_INSIDE=1
    exec unshare -n bash "$0" "${SIZES[@]}"
fi

ip link set lo up
rm -rf "$WORK" && mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx/tmp;
    proxy_temp_path $WORK/nginx/tmp;
    fastcgi_temp_path $WORK/nginx/tmp;
    uwsgi_temp_path $WORK/nginx/tmp;
    scgi_temp_path $WORK/nginx/tmp;
    keepalive_requests 1000;
    server {
        listen $PORT;
        default_type text/html;
        location = /robots.txt {
            default_type text/plain;
            return 200 "User-agent: *\nDisallow: /private\n";
        }
        location = / {
            return 200 "<html><body><p>host page of \$host</p><a href=\"/a\">a</a> <a href=\"/private/x\">x</a></body></html>\n";
        }
        location / {
            return 200 "<html><body><p>leaf page \$uri of \$host</p></body></html>\n";
        }
    }
}
EOF
mkdir -p "$WORK/nginx/tmp"
nginx -c "$WORK/nginx/nginx.conf" || { cat "$WORK/nginx/error.log"; exit 1; }
RPID=
cleanup() {
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null
    [ -s "$WORK/nginx/nginx.pid" ] && kill "$(cat "$WORK/nginx/nginx.pid")" 2>/dev/null
}
trap cleanup EXIT

kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status" 2>/dev/null; }
# user + system CPU seconds of process $1 so far
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null; }
mb() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }

run_one() {
    local n=$1 d=$WORK/n$1 sock t0 t1 pid hwm=0 rss=0 h r used base cpu=0 c rcpu ts
    mkdir -p "$d"
    sock=$d/redis.sock
    redis-server --port 0 --unixsocket "$sock" --save "" --appendonly no \
        --dir "$d" --logfile "$d/redis.log" &
    RPID=$!
    for _ in $(seq 1 100); do redis-cli -s "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
    base=$(redis-cli -s "$sock" info memory | awk -F: '/^used_memory:/ {print $2+0}')
    awk -v n="$n" -v p="$PORT" -v k="$SERVE" 'BEGIN {
        for (i = 0; i < n; i++)
            printf "http://127.%d.%d.%d:%d/\n", 1 + int(i / 65536), int(i / 256) % 256,
                i % 256, i % k ? p + 1 : p
    }' >"$d/seeds.txt"
    t0=$(date +%s.%N)
    "$BIN" seed --redis "unix://$sock" --depth 1 "$d/seeds.txt" >"$d/seed.log" 2>&1 ||
        { cat "$d/seed.log"; return 1; }
    ts=$(date +%s.%N)
    "$BIN" node --redis "unix://$sock" --out "$d/out" --exit-when-idle \
        --set fetch.concurrency="$FETCH_CONC" --set output.progress_interval=0 \
        --set politeness.delay="$DELAY" >"$d/node.log" 2>&1 &
    pid=$!
    local k=0
    : >"$d/samples.txt"
    while kill -0 "$pid" 2>/dev/null; do
        h=$(kb "$pid" VmHWM) r=$(kb "$pid" VmRSS)
        [ -n "$h" ] && hwm=$h
        [ -n "$r" ] && rss=$r
        c=$(cpu_s "$pid")
        [ -n "$c" ] && cpu=$c
        if [ $((k++ % SAMPLE)) -eq 0 ]; then # hosts handled so far (depth 0)
            echo "$(date +%s) $(cat "$d"/out/depth-0/*.jsonl 2>/dev/null | wc -l) $(mb "$rss") $(mb "$hwm")" \
                >>"$d/samples.txt"
        fi
        sleep 0.5
    done
    wait "$pid" || { echo "many-hosts: node exited $? (see $d/node.log)" >&2; tail -5 "$d/node.log" >&2; }
    t1=$(date +%s.%N)
    used=$(redis-cli -s "$sock" info memory | awk -F: '/^used_memory:/ {print $2+0}')
    rcpu=$(redis-cli -s "$sock" info cpu |
        awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.1f", s}')
    redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1
    wait "$RPID" 2>/dev/null
    RPID=
    local pages robots lost wall
    pages=$(sed -n 's/^crawled \([0-9]*\) pages.*/\1/p' "$d/node.log" | head -1)
    robots=$(sed -n 's/^ *robots.txt: \([0-9]*\) fetched, \([0-9]*\) taken from Redis, \([0-9]*\) hosts dropped.*/\1\/\2\/\3/p' "$d/node.log")
    lost=$(sed -n 's/^ *cluster: partitions [0-9]* taken, [0-9]* handed over, \([0-9]*\) lost.*/\1/p' "$d/node.log")
    wall=$(echo "$t1 - $t0" | bc)
    printf "%9s %9s %9s %10s %11s %9s %22s %8.0f %6.0f %8s %8s %8.0f %9.0f %6s\n" "$n" "$(mb "$hwm")" "$(mb "$rss")" \
        "$(mb $((used / 1024)))" "$(( (used - base) / n ))" "${pages:-?}" "${robots:-?}" \
        "$wall" "$(echo "$ts - $t0" | bc)" "$cpu" "$rcpu" "$(echo "$n / $wall" | bc -l)" \
        "$(echo "$n / ($cpu + 0.001)" | bc -l)" "${lost:-?}"
}

printf "%9s %9s %9s %10s %11s %9s %22s %8s %6s %8s %8s %8s %9s %6s\n" "hosts" "peak_MB" "end_MB" \
    "redis_MB" "redis_B/host" "pages" "robots fetch/redis/drop" "wall_s" "seed_s" "cpu_s" "redis_s" \
    "hosts/s" "hosts/cpu" "lost"
for n in "${SIZES[@]}"; do
    run_one "$n" || exit 1
done
