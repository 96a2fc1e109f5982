#!/usr/bin/env bash
# crawl-bench.sh: dcrawl against the peers of ../shared/bench/run_peers.sh
# (wget, HTTrack, Scrapy, Crawlee) on the same generated site, in one run:
# first on plain loopback, then in the 50 ms latency mode. Prints the
# harness's tables and dcrawl's ratios against each peer.
#
#   bench/crawl-bench.sh [--default] [--peers "wget httrack scrapy crawlee"]
#                        [--no-latency | --latency-only] [--set KEY=VALUE]...
#
# --set passes one more dcrawl setting to its crawl (repeatable; after
# peer-dcrawl.sh's own, so it wins). The 50 ms latency row of issue 14:
#   flock /tmp/dcrawl-nginx.lock bash bench/crawl-bench.sh --peers httrack \
#     --latency-only --set fetch.concurrency=256
# (peer-dcrawl.sh already sets host_connections=ip_connections=32).
#
# The harness is copied to a temp dir (shared/ stays read-only) with
# bench/peer-dcrawl.sh added as peers/dcrawl.sh. Needs a Release build:
# build/dcrawl, else build-rel/dcrawl (or DCRAWL_BIN).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
MODE=--small PEERS="wget httrack scrapy crawlee" LAT=1 PLAIN=1
SETS=${DCRAWL_BENCH_SETS:-}
while [ $# -gt 0 ]; do
    case $1 in
    --default) MODE="" ;;
    --peers) PEERS=$2; shift ;;
    --no-latency) LAT=0 ;;
    --latency-only) PLAIN=0 ;;
    --set) SETS="$SETS --set $2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
DEF_BIN=$ROOT/build/dcrawl
[ -x "$DEF_BIN" ] || DEF_BIN=$ROOT/build-rel/dcrawl
export DCRAWL_BIN=${DCRAWL_BIN:-$DEF_BIN}
[ -x "$DCRAWL_BIN" ] || { echo "build dcrawl first ($DCRAWL_BIN)" >&2; exit 1; }
H=${BENCH_COPY:-/tmp/dcrawl-bench-harness}
rm -rf "$H"
mkdir -p "$H"
cp -r "$SHARED/bench/." "$H/"
chmod -R u+w "$H"
cp "$ROOT/bench/peer-dcrawl.sh" "$H/peers/dcrawl.sh"
rm -f "$H"/results*.md "$H"/results*.json

export DCRAWL_BENCH_SETS=$SETS
[ -n "$SETS" ] && echo "dcrawl settings added:$SETS"
[ "$PLAIN" = 1 ] && "$H/run_peers.sh" $MODE --peers "$PEERS dcrawl"
[ "$LAT" = 1 ] && "$H/run_peers.sh" $MODE --latency 50 --peers "$PEERS dcrawl"
"$H/serve.sh" stop >/dev/null 2>&1 || true
for f in "$H"/results*.md; do echo; echo "== $(basename "$f")"; cat "$f"; done
echo
python3 "$ROOT/bench/ratios.py" "$H"/results*.json
