#!/usr/bin/env bash
# metrics-cost.sh: what the Prometheus endpoint costs a node.
#
#   bash bench/metrics-cost.sh [BIN] [SECONDS]
#
# A `dcrawl node` daemon on a private redis-server with an idle crawl (the
# node loop waits for seeds, so what it spends is its own upkeep), run
# three ways for SECONDS each (default 30): without --metrics; with
# --metrics and no scrape (the monitor thread reads the frontier every
# 2 s); with --metrics scraped once a second by curl. Printed: the node's
# CPU time (utime + stime from /proc/PID/stat) over the run, as % of one
# core, and redis-server's the same way. Then 2000 scrapes back to back:
# CPU microseconds per scrape in the node.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build-rel/dcrawl}
SECS=${2:-30}
W=$(mktemp -d /tmp/metrics-cost.XXXXXX)
trap 'kill $NODE $REDIS 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
HZ=$(getconf CLK_TCK)
cpu() { awk -v hz="$HZ" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$1/stat"; }
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

redis-server --port 0 --unixsocket "$W/r.sock" --save '' --appendonly no \
    --loadmodule "$(dirname "$BIN")/dcrawl-seen.so" >"$W/redis.log" 2>&1 &
REDIS=$!
for _ in $(seq 1 100); do [ -S "$W/r.sock" ] && break; sleep 0.05; done
"$BIN" seed --redis "unix://$W/r.sock" --depth 1 /dev/null >/dev/null 2>&1 || true

run() { # name scrape(0/1) [node args]
    local name=$1 scrape=$2 c0 c1 r0 r1 p
    shift 2
    "$BIN" node --redis "unix://$W/r.sock" --out "$W/out-$name" -q "$@" >"$W/$name.log" 2>&1 &
    NODE=$!
    sleep 1
    c0=$(cpu $NODE) r0=$(cpu $REDIS)
    for _ in $(seq 1 "$SECS"); do
        [ "$scrape" = 1 ] && curl -sf --max-time 2 "http://$ADDR/metrics" -o /dev/null
        sleep 1
    done
    c1=$(cpu $NODE) r1=$(cpu $REDIS)
    kill -TERM $NODE; wait $NODE || true
    awk -v n="$name" -v c="$(echo "$c1 - $c0" | bc)" -v r="$(echo "$r1 - $r0" | bc)" -v s="$SECS" \
        'BEGIN { printf "%-22s node %6.3f s CPU = %5.2f %% of a core   redis %6.3f s = %5.2f %%\n", n, c, 100 * c / s, r, 100 * r / s }'
}
ADDR=127.0.0.1:$(port)
echo "metrics-cost: $SECS s per run, idle node (no seeds), $(nproc) cores"
run no-metrics 0
run metrics-unscraped 0 --metrics "$ADDR"
run metrics-1-per-s 1 --metrics "$ADDR"

"$BIN" node --redis "unix://$W/r.sock" --out "$W/out-burst" -q --metrics "$ADDR" >"$W/burst.log" 2>&1 &
NODE=$!
sleep 1
c0=$(cpu $NODE)
for _ in $(seq 1 2000); do curl -sf --max-time 2 "http://$ADDR/metrics" -o /dev/null; done
c1=$(cpu $NODE)
kill -TERM $NODE; wait $NODE || true
awk -v c="$(echo "$c1 - $c0" | bc)" 'BEGIN { printf "2000 scrapes back to back: %.0f us of node CPU per scrape\n", c * 1e6 / 2000 }'
