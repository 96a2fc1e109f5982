# lib.sh: helpers for the end-to-end tests (sourced). Each test gets
#   $1 the dcrawl binary, $2 the source dir, $3 the shared/ dir, $4 a work dir
# and uses real servers only: a private redis-server on a unix socket and
# nginx on 127.0.1.x:8080 (shared/bench/serve.sh, with its access log on).
# Everything started here is stopped by the EXIT trap.
# The seen-set module dcrawl-seen.so (next to the binary) is loaded into
# every redis-server unless DCRAWL_SEEN_MODULE=none, which runs the test on
# the b256-i64 fallback layout; LAYOUT names the layout expected.
set -uo pipefail

DCRAWL=$1
SRC=$2
SHARED=$3
WORK=$4
BENCH=$SHARED/bench
rm -rf "$WORK"
mkdir -p "$WORK"
export STATE=$WORK/nginx
if [ "${DCRAWL_SEEN_MODULE:-}" = none ]; then
    SEEN_MODULE=
    LAYOUT=b256-i64
    export DCRAWL_REDIS_MODULE=none   # conf redis.module of embedded Redis
else
    SEEN_MODULE=${DCRAWL_SEEN_MODULE:-$(dirname "$DCRAWL")/dcrawl-seen.so}
    LAYOUT=mod-u64
    [ -f "$SEEN_MODULE" ] || { echo "lib.sh: no module $SEEN_MODULE" >&2; exit 1; }
fi
FAILS=0
PASSES=0
REDIS_PIDS=()

cleanup() {
    local p
    for p in "${REDIS_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -f "$STATE/nginx.pid" ] && bash "$BENCH/serve.sh" stop >/dev/null 2>&1
    return 0
}
trap cleanup EXIT

# close_fds: close every descriptor above 2 in this (sub)shell, so a server
# started from it does not keep a lock the test runs under (flock FILE CMD
# hands its lock descriptor to CMD's children) if it outlives the test
close_fds() {
    local fd
    for fd in /proc/$BASHPID/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
    done
    return 0
}

ok() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }
check() { # check "description" command...
    local what=$1; shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
finish() {
    echo "$(basename "$0" .sh): $PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
    exit $?
}

# site HOSTS PAGES: generate (once, cached under /tmp) and print its dir
site() {
    local dir=/tmp/dcrawl-test-site-$1x$2
    if [ ! -f "$dir/manifest-content.json" ]; then
        rm -rf "$dir"
        python3 "$BENCH/gen_site.py" --out "$dir" --hosts "$1" --pages "$2" --seed 1 >"$WORK/gen.log" 2>&1 ||
            { cat "$WORK/gen.log" >&2; return 1; }
    fi
    echo "$dir"
}

# serve SITE: nginx with a fresh access log
serve() {
    mkdir -p "$STATE"
    rm -f "$STATE/access.log"
    (close_fds; export ACCESS_LOG=1; exec bash "$BENCH/serve.sh" start "$1") >"$WORK/serve.log" 2>&1 ||
        { cat "$WORK/serve.log" >&2; return 1; }
}

# flush nginx's buffered access log (stop it; serve again if needed)
serve_stop() { bash "$BENCH/serve.sh" stop >/dev/null 2>&1; }

# redis_start NAME: private redis-server; sets R to its URL (not in a
# subshell, so the EXIT trap knows the pid)
redis_start() {
    local dir=$WORK/redis-$1
    mkdir -p "$dir"
    (close_fds; exec redis-server --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
        --dir "$dir" --save '' --appendonly no --daemonize no \
        --set-max-intset-entries 8192 ${SEEN_MODULE:+--loadmodule "$SEEN_MODULE"}) >"$dir/log" 2>&1 &
    REDIS_PIDS+=($!)
    local i
    for i in $(seq 1 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
    [ -S "$dir/redis.sock" ] || { cat "$dir/log" >&2; return 1; }
    R="unix://$dir/redis.sock"
}

# check_crawl SITE DEPTH OUT [ACCESS_LOG]: the fetched set equals the
# manifest's, nothing fetched twice, nothing robots.txt disallows
check_crawl() {
    python3 "$SRC/tests/e2e/check_crawl.py" --bench "$BENCH" --manifest "$1/manifest.json" \
        --depth "$2" --out "$3" ${4:+--access-log "$4"} "${@:5}"
}

# wait_for SECS CMD...: bounded wait until CMD succeeds
wait_for() {
    local secs=$1 i
    shift
    for i in $(seq 1 $((secs * 10))); do "$@" && return 0; sleep 0.1; done
    return 1
}

# sentinels_ready NAME PORT...: each sentinel knows master NAME, a replica
# and every other sentinel
sentinels_ready() {
    local name=$1 port others=$(($# - 2))
    shift
    for port in "$@"; do
        redis-cli -p "$port" sentinel master "$name" 2>/dev/null | tr -d '\r' |
            awk -v o="$others" 'p == "num-slaves" && $0 >= 1 { s = 1 }
                 p == "num-other-sentinels" && $0 == o { k = 1 }
                 { p = $0 } END { exit !(s && k) }' || return 1
    done
}
