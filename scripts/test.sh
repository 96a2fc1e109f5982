#!/usr/bin/env bash
# test.sh: the README's second command, and what CI runs (.ci/run).
# Installs what is missing, stops at once (exit 1, one "missing tool: X
# (install: apt-get install P)" line each) when a command the tests run is
# still not there (scripts/deps.sh --check), builds with AddressSanitizer +
# UBSan and runs every test (unit and end-to-end) with ctest. A Release
# build (what the README's first command and the benchmarks use) is
# compiled first, so warnings that only optimization reveals fail here too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/deps.sh --check || { echo "test.sh: tools missing (above)" >&2; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-rel -j"$(nproc)"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DDCRAWL_SANITIZE=ON >/dev/null
cmake --build build-test -j"$(nproc)"
cd build-test
ctest --output-on-failure --timeout 900 "$@"
