#!/usr/bin/env bash
# status-screenshot.sh [OUT.png] [BUILD_DIR]: a screenshot of the status
# page (`dcrawl status --http`) while 3 nodes crawl on loopback. Runs the
# e2e test tests/e2e/status-web.sh (redis-server, nginx on 127.0.1.x, a
# seeded 8-host site, 3 `dcrawl node`, the status server, headless
# Chromium) under the nginx lock the tests share, and copies its 1280x900
# screenshot to OUT.png (default status-page.png). BUILD_DIR holds the
# dcrawl binary (default build-rel, then build-test). Needs root (the
# browser runs in a network namespace of its own) and scripts/deps.sh.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:-status-page.png}")
BUILD=${2:-}
if [ -z "$BUILD" ]; then
    for b in "$SRC/build-rel" "$SRC/build-test"; do
        [ -x "$b/dcrawl" ] && { BUILD=$b; break; }
    done
fi
[ -n "$BUILD" ] && BUILD=$(realpath "$BUILD")
[ -n "$BUILD" ] && [ -x "$BUILD/dcrawl" ] ||
    { echo "status-screenshot: no dcrawl binary (build first, or give BUILD_DIR)" >&2; exit 2; }
WORK=$(realpath -m "$BUILD/status-screenshot")
STATUS_WEB_SHOT=$OUT flock /tmp/dcrawl-nginx.lock \
    bash "$SRC/tests/e2e/status-web.sh" "$BUILD/dcrawl" "$SRC" "$SRC/../shared" "$WORK"
[ -f "$OUT" ] || { echo "status-screenshot: no screenshot (see $WORK)" >&2; exit 1; }
echo "status-screenshot: $OUT"
