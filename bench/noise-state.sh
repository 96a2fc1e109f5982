#!/usr/bin/env bash
# noise-state.sh [DCRAWL] [HOSTS] [PAGES] [DEPTH]: what keeping the noise
# filter's repetition state in Redis (<prefix>:{p}:noise) costs. Generates
# the bench site (../shared/bench/gen_site.py, default 10 x 200, cached in
# /tmp), serves it with ../shared/bench/serve.sh (nginx on 127.0.1.x), and
# crawls it to DEPTH (default 3) with `dcrawl seed` + one `dcrawl node
# --exit-when-idle` against a private redis-server (unix socket), twice:
# noise.block_rule=ratio (no state kept) and repeated (state kept). Prints
# per run: pages, the node's Redis round trips (its summary) and those of
# them that read or wrote noise state, and for the repeated run the noise
# hashes' size (HSTRLEN per host, MEMORY USAGE per hash) with the bytes
# per host and per million hosts.
set -uo pipefail
DCRAWL=$(readlink -f "${1:-$(dirname "$0")/../build-rel/dcrawl}")
HOSTS=${2:-10}
PAGES=${3:-200}
DEPTH=${4:-3}
BENCH=$(readlink -f "$(dirname "$0")/../../shared/bench")
W=/tmp/dcrawl-noise-state
SITE=/tmp/dcrawl-test-site-${HOSTS}x$PAGES
rm -rf "$W"; mkdir -p "$W"
if [ ! -f "$SITE/manifest-content.json" ]; then
    python3 "$BENCH/gen_site.py" --out "$SITE" --hosts "$HOSTS" --pages "$PAGES" --seed 1 >/dev/null || exit 1
fi
export STATE=$W/nginx
bash "$BENCH/serve.sh" start "$SITE" >/dev/null || exit 1
RPID=
cleanup() {
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null
    bash "$BENCH/serve.sh" stop >/dev/null 2>&1
}
trap cleanup EXIT
rcli() { redis-cli -s "$W/redis.sock" "$@"; }
for rule in ratio repeated; do
    rm -f "$W/redis.sock"
    redis-server --port 0 --unixsocket "$W/redis.sock" --dir "$W" --save '' --appendonly no \
        >"$W/redis-$rule.log" 2>&1 &
    RPID=$!
    for _ in $(seq 1 100); do [ -S "$W/redis.sock" ] && break; sleep 0.05; done
    R=unix://$W/redis.sock
    "$DCRAWL" seed --redis "$R" --depth "$DEPTH" "$SITE/roots.txt" >/dev/null || exit 1
    timeout 600 "$DCRAWL" node --redis "$R" --id bench --out "$W/out-$rule" --exit-when-idle \
        --set politeness.delay=0 --set noise.block_rule=$rule >"$W/node-$rule.log" 2>&1 || {
        tail "$W/node-$rule.log"; exit 1; }
    pages=$(grep -oE 'crawled [0-9]+ pages' "$W/node-$rule.log" | grep -oE '[0-9]+' | head -1)
    rt=$(grep -oE '[0-9.]+ Redis round trips per page' "$W/node-$rule.log" | grep -oE '^[0-9.]+')
    nrt=$(grep -oE 'noise state: .*; [0-9]+ round trips' "$W/node-$rule.log" | grep -oE '[0-9]+ round trips' | grep -oE '[0-9]+')
    echo "$rule: $pages pages, $rt Redis round trips per page; noise state: $nrt round trips," \
        "$(echo "scale=4; ${nrt:-0} / $pages" | bc) per page"
    grep "noise" "$W/node-$rule.log" | sed "s/^/$rule: /"
    if [ "$rule" = repeated ]; then
        keys=$(rcli --scan --pattern 'dc:{*}:noise')
        python3 - "$W/redis.sock" $keys <<'PY'
import subprocess, sys
sock, keys = sys.argv[1], sys.argv[2:]
def r(*a):
    return subprocess.run(["redis-cli", "-s", sock, *a], capture_output=True, text=True).stdout.split()
hosts = blob = mem = 0
for k in keys:
    fields = r("hkeys", k)
    hosts += len(fields)
    blob += sum(int(r("hstrlen", k, f)[0]) for f in fields)
    mem += int(r("memory", "usage", k, "samples", "0")[0])
if hosts:
    print("repeated: %d noise hashes, %d hosts: blobs %d bytes (%.0f per host), MEMORY USAGE %d bytes "
          "(%.0f per host, %.2f GB per million hosts)" % (len(keys), hosts, blob, blob / hosts, mem,
          mem / hosts, mem / hosts * 1e6 / 1e9))
PY
    fi
    kill "$RPID"; wait "$RPID" 2>/dev/null; RPID=
done
