#!/usr/bin/env bash
# crawl-delay.sh: do hosts with a robots.txt Crawl-delay hold back the
# others when politeness.delay=0?
#
#   bash bench/crawl-delay.sh [--slow 60] [--slow-pages 17] [--fast-pages 2000]
#       [--crawl-delay 1] BIN [BIN...]
#
# Site (tests/e2e/polite_server.py, one process, threads): a root on
# 127.0.2.1 linking to every page of SLOW hosts (127.0.2.2...), each with
# SLOW_PAGES pages and a robots.txt "Crawl-delay: CRAWL_DELAY", and of one
# fast host (127.0.3.1) with FAST_PAGES pages and no robots.txt. Served on
# loopback, no latency.
#
# Crawl: each BIN crawl --depth 1 from the root, politeness.delay=0, noise
# off, everything else default (fetch.concurrency 256, so the node holds at
# most 512 leases). The Crawl-delay hosts need SLOW_PAGES x CRAWL_DELAY
# seconds whatever the crawler does; the fast host's pages need well under
# a second on loopback, unless the node's room is full of leases that wait
# for a Crawl-delay.
#
# Prints per BIN, from the server's request log (seconds from the first
# request): when the fast host's last page ended and when the Crawl-delay
# hosts' last page ended; and the summary's count of leases handed back to
# wait out a Crawl-delay in the frontier (a build without that line: "-").
# Needs python3; runs on loopback only.
set -u
SLOW=60 SLOW_PAGES=17 FAST_PAGES=2000 CDELAY=1
BINS=()
while [ $# -gt 0 ]; do
    case $1 in
    --slow) SLOW=$2; shift 2 ;;
    --slow-pages) SLOW_PAGES=$2; shift 2 ;;
    --fast-pages) FAST_PAGES=$2; shift 2 ;;
    --crawl-delay) CDELAY=$2; shift 2 ;;
    *) BINS+=("$1"); shift ;;
    esac
done
[ ${#BINS[@]} -gt 0 ] || { echo "usage: crawl-delay.sh [options] BIN [BIN...]" >&2; exit 2; }
[ "$SLOW" -le 250 ] || { echo "crawl-delay.sh: at most 250 slow hosts" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/dcrawl-crawl-delay.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

python3 - "$SLOW" "$SLOW_PAGES" "$FAST_PAGES" "$CDELAY" >"$WORK/site.json" <<'PY'
import json, sys
slow, sp, fp, cd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
o, links = {}, []
for i in range(slow):
    n = "c%d" % i
    o[n] = {"ip": "127.0.2.%d" % (2 + i),
            "pages": {"/robots.txt": {"text": "User-agent: *\nCrawl-delay: %s\n" % cd}}}
    for j in range(sp):
        o[n]["pages"]["/p%d" % j] = {}
        links.append("{%s}/p%d" % (n, j))
o["f"] = {"ip": "127.0.3.1", "pages": {"/p%d" % j: {} for j in range(fp)}}
links += ["{f}/p%d" % j for j in range(fp)]
o["a"] = {"ip": "127.0.2.1", "pages": {"/": {"links": links}}}
print(json.dumps({"origins": o}))
PY

echo "crawl-delay bench: $SLOW hosts x $SLOW_PAGES pages with Crawl-delay $CDELAY s, one host of $FAST_PAGES pages without; depth 1, politeness.delay=0"
printf '%-40s %14s %18s %14s\n' "build" "fast host done" "Crawl-delay done" "handed back"
for bin in "${BINS[@]}"; do
    w=$WORK/run
    rm -rf "$w"; mkdir -p "$w"
    python3 "$SRC/tests/e2e/polite_server.py" "$WORK/site.json" "$w" --max-seconds 600 \
        >"$w/server.log" 2>&1 &
    sp=$!
    for i in $(seq 1 200); do [ -s "$w/origins.json" ] && break; sleep 0.05; done
    root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["a"])' "$w/origins.json")
    echo "http://$root/" >"$w/seeds.txt"
    timeout 600 "$bin" crawl --seeds "$w/seeds.txt" --depth 1 --out "$w/out" \
        --set noise.enabled=false --set politeness.delay=0 >"$w/crawl.log" 2>&1
    rc=$?
    kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
    if [ $rc -ne 0 ]; then echo "$bin: crawl exited $rc"; tail -5 "$w/crawl.log"; continue; fi
    back=$(sed -n 's/.* \([0-9]*\) leases handed back to wait out.*/\1/p' "$w/crawl.log")
    python3 - "$w/requests.jsonl" "$bin" "${back:--}" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
t0 = min(r["start"] for r in rs)
fast = [r["end"] - t0 for r in rs if r["origin"] == "f"]
slow = [r["end"] - t0 for r in rs if r["origin"].startswith("c") and r["path"] != "/robots.txt"]
print("%-40s %12.2f s %16.2f s %14s" % (sys.argv[2][-40:], max(fast), max(slow), sys.argv[3]))
PY
done
