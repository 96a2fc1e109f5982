#!/usr/bin/env bash
# deadhosts.sh: sites that link to hosts that cannot be reached, dcrawl
# (default settings except politeness.delay=0 and noise off; scope.mode
# any, so it tries every linked host) against wget -r -l 3 (which stays on
# the seed's host), old binary against new. Run it as root under the e2e
# lock (it serves HTTP):
#
#   flock /tmp/dcrawl-nginx.lock bash bench/deadhosts.sh [NEW [OLD]]
#
# NEW defaults to build-rel/dcrawl, OLD to /tmp/dcrawl-old (skipped when
# absent); RUNS=N repeats each crawl (default 1); SITES="gen python"
# picks the sites; WORK=DIR (default /tmp/deadhosts) is where both write:
# each timed run starts after a sync, but a disk still adds its own noise
# (wget's ~1,100 small files took 0.30-1.04 s on one afternoon, the same
# crawl each time), so WORK=/dev/shm/deadhosts gives the steadier figure.
# Everything runs inside a network namespace of its own
# (unshare -n, loopback up), so no packet leaves the machine and a name
# lookup fails at once (like a dead DNS name, not a slow one):
#   gen     bench/../shared gen_site.py, 1 host x 3000 pages (8-40 KB) on
#           127.0.4.1:8094, each page given 4 links to dead hosts:
#           dead-K.invalid (no such name) and 127.0.9.K:1 (refused), K of
#           120 each, so 240 dead hosts linked from every level
#   python  the Python 3.11 documentation (python3.11-doc, Sphinx) on
#           127.0.3.1:8090 (bench/real-sites.sh): its off-site links (docs.python.org, github.com,
#           ...) cannot be resolved inside the namespace
#   any other name of bench/real-sites.sh (postgres, glib, javadoc, ...):
#           that site, seeded at its seed URL there; only pages on its
#           host:port count
# NOISE=on crawls with dcrawl's noise removal on, as a user's default crawl
# (the default here is off, as the first figures of this bench).
# Printed per site and crawler: pages with status 200 on the site's host
# (wget: files it saved with 200, robots.txt excepted), wall seconds of the
# whole command (dcrawl: seeding, crawl and merge included), pages/s, and
# the ratio to wget's pages/s. Then (GAP=0 skips it) the gap between two
# requests on one keep-alive connection, host_connections=1 (the default)
# and delay=0: bench/conn_gap.py serves 400 pages of ~17 KB on
# 127.0.0.1:8095 and prints the median and p90 in microseconds, per binary.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
NEW=${1:-$SRC/build-rel/dcrawl}
OLD=${2:-/tmp/dcrawl-old}
RUNS=${RUNS:-1}
SITES=${SITES:-gen python}
WORK=${WORK:-/tmp/deadhosts}
NOISE=${NOISE:-off}
SHARED=${SHARED:-$(cd "$SRC/../shared" 2>/dev/null && pwd || echo /work/shared)}
DEPTH=3
GEN_IP=127.0.4.1 GEN_PORT=8094 PY_IP=127.0.3.1 PY_PORT=8090 # as real-sites.sh

if [ "${DEADHOSTS_INSIDE:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "deadhosts: run as root (unshare -n)" >&2; exit 1; }
    for t in nginx wget unshare ip; do
        command -v $t >/dev/null || { echo "deadhosts: $t is not installed" >&2; exit 1; }
    done
    [ -x "$NEW" ] || { echo "deadhosts: no $NEW (build build-rel first)" >&2; exit 1; }
    rm -rf "$WORK" && mkdir -p "$WORK"
    python3 "$SHARED/bench/gen_site.py" --out "$WORK/gen" --hosts 1 --pages 3000 --seed 14 \
        --ip-base 127.0.4. --port $GEN_PORT --cross-host 0 --verify 0 >"$WORK/gen.log" 2>&1 ||
        { cat "$WORK/gen.log"; exit 1; }
    # 4 dead links per page, before </body> (or at the end)
    python3 - "$WORK/gen/hosts/$GEN_IP" <<'PY' || exit 1
import os, sys, zlib
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not f.endswith(".html"):
            continue
        p = os.path.join(d, f)
        k = zlib.crc32(p.encode())
        a, b = k % 120, (k >> 8) % 120
        links = "".join('<p><a href="%s">elsewhere</a></p>\n' % u for u in (
            "http://dead-%d.invalid/" % a, "http://dead-%d.invalid/page-%d.html" % (b, k % 997),
            "http://127.0.9.%d:1/" % (a + 1), "http://127.0.9.%d:1/x-%d.html" % (b + 1, k % 997)))
        s = open(p).read()
        i = s.rfind("</body>")
        s = s[:i] + links + s[i:] if i >= 0 else s + links
        open(p, "w").write(s)
PY
    export DEADHOSTS_INSIDE=1 NEW OLD RUNS SITES WORK NOISE
    exec unshare -n bash "$0" "$NEW" "$OLD"
fi

# --- inside the namespace: the generated site with shared/bench/serve.sh,
# the Python documentation with real-sites.sh (it serves all its sites)
ip link set lo up || exit 1
. "$HERE/real-sites.sh"
export STATE=$WORK/gen-nginx PORT=$GEN_PORT WORKERS=2
trap 'real_sites_stop; bash "$SHARED/bench/serve.sh" stop >/dev/null 2>&1' EXIT
bash "$SHARED/bench/serve.sh" start "$WORK/gen" >"$WORK/serve.log" 2>&1 || { cat "$WORK/serve.log"; exit 1; }
real_sites_start "$WORK/real" || exit 1

# wget rejects what dcrawl's defaults skip (`dcrawl config` of NEW)
suffixes=$("$NEW" config | sed -n 's/^scope\.skip_suffixes=//p')
[ -n "$suffixes" ] || { echo "deadhosts: no scope.skip_suffixes in $NEW config" >&2; exit 1; }
rej=$(echo "$suffixes" | tr -s ' ' '\n' | sed -n 's/^\.//p' | paste -sd,)
now() { date +%s%N; }
# pages/s figure: COUNT NS -> "count secs rate"
rate() { awk -v c="$1" -v ns="$2" 'BEGIN { s = ns / 1e9; printf "%d %.2f %.0f", c, s, c / s }'; }

run_wget() { # url origin dir
    local t0 t1 n
    rm -rf "$3"; mkdir -p "$3"; sync # no writeback of the last run during this one
    t0=$(now)
    timeout 1800 wget -r -l $DEPTH -nv -e robots=on --follow-tags=a,area,frame,iframe \
        -R "$rej" --ignore-case -P "$3/files" -o "$3/wget.log" "$1"
    t1=$(now)
    n=$(grep -E ' URL:.* -> ' "$3/wget.log" | grep -vc '/robots.txt ')
    rate "$n" $((t1 - t0))
}
run_dcrawl() { # bin url origin dir
    local t0 t1 n noise=(--set noise.enabled=false)
    [ "$NOISE" = on ] && noise=()
    rm -rf "$4"; mkdir -p "$4"; sync
    t0=$(now)
    timeout 1800 "$1" crawl --depth $DEPTH --out "$4/out" --set politeness.delay=0 \
        "${noise[@]}" "$2" >"$4/crawl.log" 2>&1
    t1=$(now)
    n=$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)]
          if r["status"] == 200 and r["url"].startswith(sys.argv[2])))' \
        "$4/out/merged/pages.jsonl" "$3" 2>/dev/null || echo 0)
    rate "$n" $((t1 - t0))
}

echo "deadhosts: depth $DEPTH, runs $RUNS, noise $NOISE; new $NEW; old $OLD; $(wget --version | head -1)"
printf '%-7s %-4s %-11s %7s %8s %8s %7s\n' site run crawler pages seconds pages/s ratio
for site in $SITES; do
    seed=
    case $site in
    gen) origin=http://$GEN_IP:$GEN_PORT ;;
    python) origin=http://$PY_IP:$PY_PORT ;;
    *) seed=$(echo "$REAL_SITES" | awk -v n="$site" '$1 == n { print $2 }')
       [ -n "$seed" ] || { echo "deadhosts: no site $site" >&2; continue; }
       origin=${seed%"${seed#http://*/}"}; origin=${origin%/} ;;
    esac
    seed=${seed:-$origin/}
    for r in $(seq 1 "$RUNS"); do
        read -r wn ws wr < <(run_wget "$seed" "$origin" "$WORK/$site-wget")
        printf '%-7s %-4s %-11s %7s %8s %8s %7s\n' "$site" "$r" wget "$wn" "$ws" "$wr" 1.00
        for who in old new; do
            bin=$NEW; [ $who = old ] && bin=$OLD
            [ -x "$bin" ] || continue
            read -r dn ds dr < <(run_dcrawl "$bin" "$seed" "$origin" "$WORK/$site-$who")
            printf '%-7s %-4s %-11s %7s %8s %8s %7s\n' "$site" "$r" "dcrawl-$who" "$dn" "$ds" "$dr" \
                "$(awk -v a="$dr" -v b="$wr" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
        done
    done
done

[ "${GAP:-1}" = 1 ] || exit 0
echo
echo "gap between two requests on one connection (host_connections=1, delay=0, 400 pages):"
for who in old new; do
    bin=$NEW; [ $who = old ] && bin=$OLD
    [ -x "$bin" ] || continue
    d=$WORK/gap-$who
    rm -rf "$d"; mkdir -p "$d"
    python3 "$HERE/conn_gap.py" --port 8095 --pages 400 --log "$d/gaps.txt" >"$d/server.out" 2>&1 &
    gp=$!
    for _ in $(seq 1 50); do
        python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8095), 1)' 2>/dev/null && break
        sleep 0.1
    done
    timeout 300 "$bin" crawl --depth 1 --out "$d/out" --set politeness.delay=0 \
        --set noise.enabled=false http://127.0.0.1:8095/ >"$d/crawl.log" 2>&1
    kill -TERM $gp; wait $gp
    printf '%-11s %s\n' "dcrawl-$who" "$(cat "$d/server.out")"
done
