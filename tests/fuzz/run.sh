#!/usr/bin/env bash
# run.sh: build the libFuzzer harnesses (clang, ASan + UBSan) and run each
# one for a fixed time, one after the other (one process, -jobs=1).
#
#   tests/fuzz/run.sh [SECONDS] [HARNESS...]
#
# SECONDS per harness (default 20: the nine harnesses then take about three
# minutes, which is what CI's ctest "fuzz-short" runs); HARNESS names like
# "url" or "fuzz-url" (default: all). Before fuzzing, every input kept in
# regress/<harness>/ (crashes found and fixed) is replayed. One line per
# harness: executions, executions per second, coverage (cov: and ft: of
# libFuzzer's last status line) and the result. Exit status 1 when any
# harness crashed, leaked, hung or failed a check: the input that did it is
# kept (its path is printed) -- after the fix, copy it into regress/.
#
# Environment: DCRAWL_FUZZ_BUILD build directory (default: build-fuzz at the
# top of the source tree), configured and built here when needed;
# DCRAWL_FUZZ_ARGS extra libFuzzer flags; DCRAWL_FUZZ_KEEP=1 starts from the
# corpus the last run grew instead of the seeds alone. Fuzzers run under nice -n 19 (the
# machine may be shared). Work files (the corpus grown during the run, logs,
# crash inputs) go to $DCRAWL_FUZZ_BUILD/work/<harness>/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${DCRAWL_FUZZ_BUILD:-$src/build-fuzz}
secs=${1:-20}
[ $# -gt 0 ] && shift
all=(url robots html sitemap inflate warc merge-lines conf redis-reply)
if [ $# -gt 0 ]; then names=("${@#fuzz-}"); else names=("${all[@]}"); fi
case $secs in ''|*[!0-9]*) echo "run.sh: SECONDS must be a number" >&2; exit 2 ;; esac

# max input length per harness (bytes)
max_len() {
    case $1 in
        url) echo 9000 ;; inflate|merge-lines|redis-reply) echo 16384 ;;
        conf) echo 8192 ;; *) echo 65536 ;;
    esac
}

command -v clang >/dev/null || { echo "run.sh: clang missing (scripts/deps.sh installs it)" >&2; exit 2; }
if [ ! -f "$build/CMakeCache.txt" ]; then
    CC=clang cmake -S "$src" -B "$build" -DDCRAWL_FUZZ=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target fuzz -j2 >/dev/null ||
    { echo "run.sh: build failed (cmake --build $build --target fuzz)" >&2; exit 2; }

# the merge harness writes a crawl directory per input: keep it in memory
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fail=0
for n in "${names[@]}"; do
    bin=$build/tests/fuzz/fuzz-$n
    [ -x "$bin" ] || { echo "fuzz-$n: no such harness" >&2; fail=1; continue; }
    work=$build/work/$n
    rm -rf "$work/crash"
    [ -n "${DCRAWL_FUZZ_KEEP:-}" ] || rm -rf "$work/corpus"
    mkdir -p "$work/corpus" "$work/crash"
    # 1. the crash inputs of the past, each once
    if [ -d "$here/regress/$n" ] && [ -n "$(ls -A "$here/regress/$n")" ]; then
        if ! "$bin" -runs=1 "$here/regress/$n"/* >"$work/regress.log" 2>&1; then
            echo "fuzz-$n: regress FAILED (log: $work/regress.log)"
            fail=1
            continue
        fi
    fi
    # 2. fuzzing
    dict=()
    [ -f "$here/dict/$n.dict" ] && dict=(-dict="$here/dict/$n.dict")
    seeds=()
    [ -d "$here/corpus/$n" ] && seeds=("$here/corpus/$n")
    rc=0
    # shellcheck disable=SC2086
    nice -n 19 "$bin" -max_total_time="$secs" -max_len="$(max_len "$n")" \
        -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/crash/" "${dict[@]}" ${DCRAWL_FUZZ_ARGS:-} \
        "$work/corpus" "${seeds[@]}" >"$work/fuzz.log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/fuzz.log" | tail -1 || true)
    crash=$(ls "$work/crash" 2>/dev/null | head -1)
    if [ "$rc" -eq 0 ] && [ -z "$crash" ]; then
        result=ok
    else
        result="FAILED rc=$rc input=$work/crash/${crash:-?} log=$work/fuzz.log"
        fail=1
    fi
    printf 'fuzz-%-12s %5ss execs=%s exec/s=%s %s result=%s\n' "$n" "$secs" \
        "${execs:-?}" "${rate:-?}" "${cov:-cov: ?}" "$result"
done
exit $fail
