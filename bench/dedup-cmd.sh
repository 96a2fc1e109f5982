#!/usr/bin/env bash
# dedup-cmd.sh: `dcrawl dedup` (the command users run) over a URL list, next
# to dedup_bench's path figure on the same link stream, in one run.
#
#   bash bench/dedup-cmd.sh [--urls 5000000] [-j 2] [--build build-rel]
#        [--no-bench]
#
# The list: the first N links of bench/linkstream.c's stream, written by
# build-rel/bench/linkstream_gen (seeded; 5 M links hold about 1.5 M
# distinct canonical URLs; cached as /tmp/dcrawl-dedup-list-N.txt). A fresh
# redis-server (unix socket in a temp dir, the project's settings, the
# build's dcrawl-seen.so loaded: the crawl's default mod-u64 layout) is
# started for the command. Timed: `dcrawl dedup -j J --redis ... LIST
# >/dev/null`, wall clock from start to exit (reading the file, connecting
# and the final totals included). Printed: input URLs/s, the new URLs
# (= distinct, the seen-set starts empty), Redis INFO used_memory after
# minus before per new URL, and the process's CPU time. Then dedup_bench
# --sizes N --jobs J (no baselines; it starts its own redis-server) and its
# path line, for the ratio. Figures only, nothing asserted.
set -euo pipefail
N=5000000 J=2 BUILD=build-rel BENCH=1
while [ $# -gt 0 ]; do
    case $1 in
    --urls) N=$2; shift 2 ;;
    -j) J=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --no-bench) BENCH=0; shift ;;
    *) echo "usage: dedup-cmd.sh [--urls N] [-j J] [--build DIR] [--no-bench]" >&2; exit 2 ;;
    esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$SRC/$BUILD
[ -d "$B" ] || B=$BUILD
for f in dcrawl dcrawl-seen.so bench/linkstream_gen bench/dedup_bench; do
    [ -e "$B/$f" ] || { echo "dedup-cmd.sh: no $B/$f (build $BUILD first)" >&2; exit 1; }
done
LIST=/tmp/dcrawl-dedup-list-$N.txt
if [ ! -s "$LIST" ]; then
    "$B/bench/linkstream_gen" "$N" >"$LIST.tmp" && mv "$LIST.tmp" "$LIST"
fi
TMP=$(mktemp -d /tmp/dcrawl-dedup-cmd.XXXXXX)
RPID=
cleanup() {
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
redis-server --port 0 --unixsocket "$TMP/redis.sock" --unixsocketperm 700 \
    --dir "$TMP" --save '' --appendonly no --daemonize no \
    --set-max-intset-entries 8192 --loadmodule "$B/dcrawl-seen.so" \
    >"$TMP/redis.log" 2>&1 &
RPID=$!
for _ in $(seq 1 100); do [ -S "$TMP/redis.sock" ] && break; sleep 0.05; done
rcli() { redis-cli -s "$TMP/redis.sock" "$@"; }
used() { rcli INFO memory | tr -d '\r' | sed -n 's/^used_memory://p'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; list $LIST ($N lines)"
mem0=$(used)
t0=$(date +%s.%N)
/usr/bin/time -f '%U %S %M' -o "$TMP/time" \
    "$B/dcrawl" dedup -j "$J" --redis "unix://$TMP/redis.sock" "$LIST" \
    >/dev/null 2>"$TMP/err"
t1=$(date +%s.%N)
mem1=$(used)
tail -n 1 "$TMP/err"
fresh=$(sed -n 's/.* URLs read: \([0-9]*\) new.*/\1/p' "$TMP/err")
read -r usr sys rss <"$TMP/time"
python3 - "$N" "$t0" "$t1" "$fresh" "$mem0" "$mem1" "$usr" "$sys" "$rss" "$J" <<'PY'
import sys
n, t0, t1, fresh, m0, m1, usr, sys_, rss, j = sys.argv[1:]
secs = float(t1) - float(t0)
print("dcrawl dedup -j %s: %d URLs in %.2f s = %.2f M URLs/s; %d new; "
      "Redis used_memory %.2f bytes per new URL; CPU %.2f s, peak RSS %d MB"
      % (j, int(n), secs, int(n) / secs / 1e6, int(fresh),
         (int(m1) - int(m0)) / max(int(fresh), 1),
         float(usr) + float(sys_), int(rss) // 1024))
PY
[ "$BENCH" = 1 ] || exit 0
kill "$RPID" && wait "$RPID" 2>/dev/null || true
RPID=
"$B/bench/dedup_bench" --sizes "$N" --jobs "$J" --baseline 0 \
    --baseline-nopipe 0 >"$TMP/bench" 2>&1 || { cat "$TMP/bench"; exit 1; }
grep -E '^[0-9]+ URLs|path:|used_memory' "$TMP/bench" | sed 's/^/dedup_bench: /'
