#!/usr/bin/env bash
# cluster-kill-trials.sh [TRIALS]: the kill -9 acceptance test with 5 random
# trials (default; CI runs 1 through ctest e2e-cluster-kill). Builds the
# sanitizer build in build-test/ if needed; nginx is taken under the shared
# lock /tmp/dcrawl-nginx.lock. SEED=N replays a run.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRIALS=${1:-5}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
[ -x build-test/dcrawl ] || {
    cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DDCRAWL_SANITIZE=ON >/dev/null
    cmake --build build-test -j"$(nproc)"
}
exec flock /tmp/dcrawl-nginx.lock bash tests/e2e/cluster-kill.sh "$PWD/build-test/dcrawl" "$PWD" \
    "$(cd .. && pwd)/shared" "$PWD/build-test/tests/e2e-cluster-kill-trials"
