#!/usr/bin/env bash
# demo.sh: the README's first command. Installs what is missing, builds
# dcrawl, generates a small demo site (10 hosts x 200 pages, shared/bench's
# generator), serves it with nginx on 127.0.1.x:8091 (its own port and state
# dir, so it never disturbs a benchmark on 8080) and crawls it to depth
# 3 with `dcrawl crawl` on the embedded Redis, then prints the summary.
# The demo site is ours and on loopback, so politeness.delay=0 is fine
# here; keep the default (1 s per host) for real sites.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-$(cd .. && pwd)/shared}
SITE=${SITE:-/tmp/dcrawl-demo-site}
OUT=${OUT:-/tmp/dcrawl-demo}
export PORT=${PORT:-8091} STATE=${STATE:-/tmp/dcrawl-demo-nginx}
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dcrawl >/dev/null
[ -f "$SITE/manifest.json" ] ||
    python3 "$SHARED/bench/gen_site.py" --out "$SITE" --hosts 10 --pages 200 --seed 1 \
        --port "$PORT" >/dev/null
bash "$SHARED/bench/serve.sh" start "$SITE" >/dev/null
rm -rf "$OUT"
build/dcrawl crawl --seeds "$SITE/roots.txt" --depth 3 --out "$OUT" \
    --set politeness.delay=0 "$@"
echo "(the demo site stays served on 127.0.1.x:$PORT; stop it with: PORT=$PORT STATE=$STATE bash $SHARED/bench/serve.sh stop)"
