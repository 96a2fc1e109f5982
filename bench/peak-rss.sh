#!/usr/bin/env bash
# peak-rss.sh: peak resident memory of `dcrawl crawl` on the bench sites,
# real documentation sites and a site of big pages, several binaries side
# by side (before/after in the same run). Run it as root under the e2e
# lock (it serves HTTP):
#
#   flock /tmp/dcrawl-nginx.lock bash bench/peak-rss.sh [BIN...]
#
# BIN defaults to build-rel/dcrawl; with several, the binaries alternate
# site by site. Everything runs inside a network namespace of its own
# (unshare -n, loopback up), so off-site links fail at once (no name
# resolves) and no packet leaves the machine. Sites (SITES picks some):
#   small    ../shared bench site, 10 hosts x 200 pages, 127.0.1.x:8080,
#            crawled as bench/peer-dcrawl.sh does (delay 0, 32 connections
#            per host and IP, noise off)
#   default  the same at 40 hosts x 500 pages (crawl-bench.sh --default)
#   python postgres javadoc ...   bench/real-sites.sh's sites on
#            127.0.3.N:8090, and
#   bigpages tests/e2e/bigpages.py (a 3 MB, a 9 MB and a 3 MB ISO-8859-1
#            page) on 127.0.3.9:8091:
#            default settings except politeness.delay=0 and noise off
#            (scope.mode any: the off-site hosts are tried and fail)
# All at depth DEPTH (default 3). Printed per site and binary: the peak RSS
# of the dcrawl process (VmHWM, tests/e2e/peak_rss.py) and apart from it
# the largest child's (the embedded redis-server), pages with a response,
# wall seconds of the whole command (seeding, crawl and merge).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
SHARED=${SHARED:-$(cd "$SRC/../shared" 2>/dev/null && pwd || echo /work/shared)}
WORK=${WORK:-/tmp/peak-rss}
DEPTH=${DEPTH:-3}
SITES=${SITES:-small default python postgres javadoc bigpages}
BINS=()
for b in "$@"; do BINS+=("$(realpath "$b")"); done
[ ${#BINS[@]} -gt 0 ] || BINS=("$SRC/build-rel/dcrawl")
for b in "${BINS[@]}"; do
    [ -x "$b" ] || { echo "peak-rss: no binary $b" >&2; exit 1; }
done
BIG_IP=127.0.3.9 BIG_PORT=8091

if [ "${PEAKRSS_INSIDE:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "peak-rss: run as root (unshare -n)" >&2; exit 1; }
    rm -rf "$WORK" && mkdir -p "$WORK"
    export PEAKRSS_INSIDE=1 WORK DEPTH SITES SHARED
    exec unshare -n bash "$0" "${BINS[@]}"
fi

ip link set lo up || exit 1
. "$HERE/real-sites.sh"
gen_site() { # hosts pages dir
    local params="hosts=$1 pages=$2 seed=1 mdepth=6 gen=$(sha1sum "$SHARED/bench/gen_site.py" | cut -c1-12)"
    [ "$(cat "$3/.params" 2>/dev/null)" = "$params" ] && return 0
    rm -rf "$3"
    python3 "$SHARED/bench/gen_site.py" --out "$3" --hosts "$1" --pages "$2" \
        --seed 1 --depth 6 >/dev/null || return 1
    echo "$params" >"$3/.params"
}
bench_serve() { # dir
    STATE=$WORK/bench-nginx WORKERS=2 bash "$SHARED/bench/serve.sh" start "$1" \
        >"$WORK/serve.log" 2>&1 || { cat "$WORK/serve.log" >&2; return 1; }
}
stop_all() {
    real_sites_stop
    bigpages_stop "$WORK/big"
    STATE=$WORK/bench-nginx bash "$SHARED/bench/serve.sh" stop >/dev/null 2>&1
    return 0
}
trap stop_all EXIT
real_sites_start "$WORK/real" || exit 1
bigpages_start "$WORK/big" $BIG_IP $BIG_PORT || exit 1

# crawl BIN DIR ARGS...: prints "dcrawl_kb redis_kb pages seconds"
crawl() {
    local bin=$1 d=$2 t0 t1 pages
    shift 2
    rm -rf "$d" && mkdir -p "$d"
    t0=$(date +%s%N)
    timeout 1800 python3 "$SRC/tests/e2e/peak_rss.py" "$d/rss" "$bin" crawl \
        --depth "$DEPTH" --out "$d/out" -q --set politeness.delay=0 \
        --set noise.enabled=false "$@" >"$d/crawl.log" 2>&1 ||
        echo "peak-rss: $bin exited $? ($d/crawl.log)" >&2
    t1=$(date +%s%N)
    pages=$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)] if r.get("status")))' \
        "$d/out/merged/pages.jsonl" 2>/dev/null || echo 0)
    echo "$(awk '{printf "%s ", $2}' "$d/rss")$pages $(( (t1 - t0) / 1000000 ))"
}

echo "peak-rss: depth $DEPTH; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-40s %10s %9s %6s %7s\n' site binary dcrawl_kB redis_kB pages wall_ms
for site in $SITES; do
    args=()
    case $site in
    small | default)
        # the directories bench/cpu-profile.sh generates too
        if [ "$site" = small ]; then h=10 p=200 dir=/tmp/bench-site-small
        else h=40 p=500 dir=/tmp/bench-site; fi
        gen_site $h $p $dir || exit 1
        bench_serve $dir || exit 1
        args=(--seeds "$dir/roots.txt" --set politeness.host_connections=32
            --set politeness.ip_connections=32) ;;
    bigpages) args=("http://$BIG_IP:$BIG_PORT/") ;;
    *)
        url=$(echo "$REAL_SITES" | awk -v s="$site" '$1 == s { print $2 }')
        [ -n "$url" ] || { echo "peak-rss: no site $site" >&2; continue; }
        args=("$url") ;;
    esac
    i=0
    for b in "${BINS[@]}"; do
        i=$((i + 1))
        read -r dk rk n ms < <(crawl "$b" "$WORK/$site-$i" "${args[@]}")
        name=$b; [ ${#b} -le 40 ] || name=...${b: -37}
        printf '%-9s %-40s %10s %9s %6s %7s\n' "$site" "$name" "$dk" "$rk" "$n" "$ms"
    done
done
