#!/usr/bin/env bash
# cpu-profile.sh: CPU milliseconds per page of a loopback crawl, for dcrawl
# and its embedded redis-server apart, with the top perf symbols.
#
#   flock /tmp/dcrawl-nginx.lock bash bench/cpu-profile.sh [--default] [--runs N] [--top N] [BIN...]
#
# Crawls the bench site of ../shared/bench (10 hosts x 200 pages, --default:
# 40 x 500; generated with gen_site.py if missing, served by its serve.sh on
# 127.0.1.x:8080) at depth 3 with the arguments bench/peer-dcrawl.sh uses
# (delay 0, 32 connections per host and IP, noise off, embedded Redis),
# under `perf record -e cpu-clock -F 1000 -g`. The cpu-clock event samples
# CPU time, one sample per millisecond a thread runs, so a process's CPU ms
# is its sample count; redis-server is a child of dcrawl and inherits the
# recording. Printed per binary and run: pages fetched (records of
# depth-*/*.jsonl that got a response), wall seconds, pages/s, CPU ms/page
# of dcrawl (everything: fetch, parse, the final merge), of redis-server and
# of both; then the top symbols by self time over both processes of the
# last run. With more than one BIN (e.g. build-base/dcrawl build-rel/dcrawl)
# the binaries alternate run by run and the last lines give each one's
# median ratios against the first: before/after in the same run.
# Default BIN: build-rel/dcrawl (Release). Needs perf, nginx, redis-server.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
HOSTS=10 PAGES=200 RUNS=1 TOP=15 BINS=()
while [ $# -gt 0 ]; do
    case $1 in
    --default) HOSTS=40 PAGES=500 ;;
    --runs) RUNS=$2; shift ;;
    --top) TOP=$2; shift ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) BINS+=("$(realpath "$1")") ;;
    esac
    shift
done
[ ${#BINS[@]} -gt 0 ] || BINS=("$ROOT/build-rel/dcrawl")
for b in "${BINS[@]}"; do
    [ -x "$b" ] || { echo "no binary $b (cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "perf not found" >&2; exit 1; }

if [ "$HOSTS" = 10 ]; then SITE=${SITE:-/tmp/bench-site-small}; else SITE=${SITE:-/tmp/bench-site}; fi
. "$ROOT/bench/site-gen.sh"
site_gen "$SITE" --hosts "$HOSTS" --pages "$PAGES" --seed 1 --depth 6
W=$(mktemp -d /tmp/dcrawl-cpu.XXXXXX)
trap '"$SHARED/bench/serve.sh" stop >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SHARED/bench/serve.sh" start "$SITE" >/dev/null

# one crawl of BIN into $W/out under perf: prints "pages wall_s dcrawl_ms redis_ms"
crawl_once() {
    local bin=$1 t0 t1
    rm -rf "$W/out" "$W/perf.data"
    t0=$EPOCHREALTIME
    # shellcheck disable=SC2086 # DCRAWL_BENCH_SETS: several --set words
    perf record -q -e cpu-clock -F 1000 -g -o "$W/perf.data" -- \
        "$bin" crawl --seeds "$SITE/roots.txt" --depth 3 --out "$W/out" -q \
        --set politeness.delay=0 --set politeness.host_connections=32 \
        --set politeness.ip_connections=32 --set noise.enabled=false \
        ${DCRAWL_BENCH_SETS:-} >"$W/crawl.log" 2>&1 ||
        { cat "$W/crawl.log" >&2; return 1; }
    t1=$EPOCHREALTIME
    # samples per process: a pid whose any thread was named redis-server
    # (or one of its bio_/io_thd threads) counts as Redis
    perf script -i "$W/perf.data" -F pid,comm 2>/dev/null | python3 -c '
import sys, collections, glob, json
n = collections.Counter(); redis = set()
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 2 or not parts[-1].isdigit():
        continue
    pid, comm = int(parts[-1]), " ".join(parts[:-1])
    n[pid] += 1
    if comm.startswith(("redis-server", "bio_", "io_thd", "redis-")):
        redis.add(pid)
pages = 0
for p in glob.glob(sys.argv[1] + "/out/depth-*/*.jsonl"):
    for l in open(p):
        r = json.loads(l)
        if not r.get("skipped") and r.get("status"):
            pages += 1
rms = sum(c for p, c in n.items() if p in redis)
print(pages, "%.3f" % (float(sys.argv[3]) - float(sys.argv[2])),
      sum(n.values()) - rms, rms)' "$W" "$t0" "$t1"
}

declare -A RES
printf '%-28s %3s %6s %7s %8s %9s %9s %9s\n' binary run pages wall_s pages/s \
    dcrawl_ms redis_ms ms/page
for ((r = 1; r <= RUNS; r++)); do
    for b in "${BINS[@]}"; do
        read -r pages wall dms rms < <(crawl_once "$b")
        [ "$pages" -gt 0 ] || { echo "no pages fetched by $b" >&2; exit 1; }
        RES[$b]+="$pages $wall $dms $rms;"
        python3 -c 'import sys
b, r, p, w, d, s = sys.argv[1:]
p, w, d, s = int(p), float(w), int(d), int(s)
print("%-28s %3s %6d %7.2f %8.0f %9.3f %9.3f %9.3f" % (b[-28:], r, p, w, p / w, d / p, s / p, (d + s) / p))' \
            "$b" "$r" "$pages" "$wall" "$dms" "$rms"
    done
done
echo "(ms/page: CPU ms per fetched page; dcrawl_ms and redis_ms per page, from cpu-clock samples at 1 kHz)"

if [ ${#BINS[@]} -gt 1 ]; then
    echo
    for b in "${BINS[@]}"; do echo "$b=${RES[$b]}"; done | python3 -c '
import sys, statistics as st
rows = []
for line in sys.stdin:
    b, runs = line.rstrip("\n").split("=", 1)
    v = [tuple(map(float, x.split())) for x in runs.split(";") if x]
    rows.append((b, st.median(p / w for p, w, d, s in v),
                 st.median(d / p for p, w, d, s in v),
                 st.median((d + s) / p for p, w, d, s in v)))
b0 = rows[0]
print("median ratios against %s (pages/s: higher is faster; CPU: lower is less)" % b0[0])
for b, ps, dm, tm in rows:
    print("  %-40s pages/s x%.3f  dcrawl CPU/page x%.3f  dcrawl+redis CPU/page x%.3f"
          % (b[-40:], ps / b0[1], dm / b0[2], tm / b0[3]))'
fi

echo
echo "top $TOP symbols by self CPU (last run of ${BINS[-1]}; dcrawl and redis-server):"
perf report -i "$W/perf.data" --no-children --sort comm,dso,sym --stdio -q 2>/dev/null |
    awk -v top="$TOP" '/%/ && !/^ *[|-]/ && n < top { print; n++ }'
