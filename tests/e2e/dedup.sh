#!/usr/bin/env bash
# e2e dedup: `dcrawl dedup` prints exactly the reference's new URLs
# (e2e/dedup_ref.py: canonical form, first copy only, input order) for
# inputs of several chunks, bad lines with their line numbers; across runs
# and files the seen-set holds (a URL printed once is never printed
# again); --check-only marks nothing; the same output with -j 1..8, from
# stdin, and with a cache of 16 entries (every repeat then goes to Redis).
# Its own redis-server(s), no nginx.
. "$(dirname "$0")/lib.sh"

python3 "$SRC/tests/e2e/dedup_ref.py" "$WORK" || exit 1
W=$WORK
cd "$W" || exit 1   # bad lines are named as the files are given

# dedup_run NAME ARGS...: stdout to $W/NAME.out, bad lines to $W/NAME.err
dedup_run() {
    local name=$1; shift
    "$DCRAWL" dedup --redis "$R" "$@" >"$W/$name.out" 2>"$W/$name.log"
    echo $? >"$W/$name.rc"
    grep -v '^dedup: \|^dcrawl dedup: ' "$W/$name.log" >"$W/$name.err"
    tail -n 1 "$W/$name.log"
}
same() { cmp -s "$1" "$2"; }

redis_start one || exit 1
dedup_run a1 -j 2 a.txt
check "a.txt: exit 0" [ "$(cat "$W/a1.rc")" = 0 ]
check "a.txt: the new URLs are the reference's, in input order" same "$W/a1.out" "$W/a.want"
check "a.txt: bad lines with their line numbers" same "$W/a1.err" "$W/a.bad"
nread=$(grep -vc '^$\|^#' a.txt)
nbad=$(wc -l <a.bad)
check "a.txt: totals count them" grep -q "^dedup: $nread URLs read: $(wc -l <a.want) new, .*, $nbad bad" "$W/a1.log"
dedup_run a2 -j 1 a.txt
check "a.txt again: nothing new" [ ! -s "$W/a2.out" ]
dedup_run b1 -j 3 - <"$W/b.txt"
check "b.txt from stdin: only the URLs not in a.txt" same "$W/b1.out" "$W/b.want"
sed "s|^b.txt:|stdin:|" "$W/b.bad" >"$W/b.bad.stdin"
check "b.txt from stdin: bad lines named stdin" same "$W/b1.err" "$W/b.bad.stdin"

redis_start two || exit 1
cat "$W/a.want" "$W/b.want" >"$W/ab.want"
dedup_run c1 --check-only -j 2 a.txt b.txt
check "--check-only over a.txt b.txt: the reference's" same "$W/c1.out" "$W/ab.want"
dedup_run c2 --check-only a.txt b.txt
check "--check-only marked nothing" same "$W/c2.out" "$W/ab.want"
dedup_run c3 -j 8 --set dedup.cache_entries=16 a.txt b.txt
check "-j 8, 16-entry cache, two files: the reference's" same "$W/c3.out" "$W/ab.want"
cat "$W/a.bad" "$W/b.bad" >"$W/ab.bad"
check "two files: bad lines of each, in order" same "$W/c3.err" "$W/ab.bad"
dedup_run c4 -j 4 b.txt a.txt
check "then nothing is new" [ ! -s "$W/c4.out" ]

dedup_run missing "$W/no-such-file"
check "a missing file: exit 1" [ "$(cat "$W/missing.rc")" = 1 ]
finish
