#!/usr/bin/env bash
# bench/merge.sh: `dcrawl merge` throughput (MB/s of WARC input) against
# `zcat FILES > /dev/null` on the same files in the same run, and the
# merge's peak RSS.
#
#   bench/merge.sh [GB] [BUILD_DIR] [WORK_DIR]
#
# GB (default 5) of synthetic per-node output is written by merge_gen
# (BUILD_DIR/bench/merge_gen; 4 nodes, 3 depths, content and URL
# duplicates, 20 outlinks a page) under WORK_DIR (default a new /tmp dir,
# removed at the end). Build with -DCMAKE_BUILD_TYPE=Release first:
#   cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-rel --target dcrawl merge_gen
# Goals (issue 7): merge >= 50% of zcat's MB/s; peak RSS <= 256 MB.
set -u
GB=${1:-5}
BUILD=${2:-build-rel}
GEN=$BUILD/bench/merge_gen
DCRAWL=$BUILD/dcrawl
[ -x "$GEN" ] && [ -x "$DCRAWL" ] || { echo "build $GEN and $DCRAWL first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
if [ -n "${3:-}" ]; then dir=$3; mkdir -p "$dir"; else dir=$(mktemp -d /tmp/merge-bench.XXXXXX); fi
trap 'rm -rf "$dir"' EXIT
now() { date +%s.%N; }

t0=$(now)
per=$((GB * 1024 / 4))
for n in 0 1 2 3; do "$GEN" "$dir/in" "$n" "$per" >"$dir/gen-$n.log" & done
wait
echo "generated: $(cat "$dir"/gen-*.log | awk '{p+=$1} END {print p}') pages in $(echo "$(now) - $t0" | bc) s"
files=$(ls "$dir"/in/depth-*/*.warc.gz)
in_bytes=$(cat $files | wc -c)
in_mb=$(echo "scale=1; $in_bytes / 1048576" | bc)
echo "input: $(echo $files | wc -w) WARC files, $in_mb MB (+ $(cat "$dir"/in/depth-*/*.jsonl | wc -c) bytes of .jsonl)"
cat $files "$dir"/in/depth-*/*.jsonl >/dev/null # same page cache state for both

t0=$(now)
zcat $files >/dev/null
tz=$(echo "$(now) - $t0" | bc)
/usr/bin/time -f "%e %M" -o "$dir/time" "$DCRAWL" merge "$dir/in" --out "$dir/merged" \
    >"$dir/merge.log" 2>"$dir/merge.err" || { cat "$dir/merge.err"; exit 1; }
read -r tm rss <"$dir/time"
cat "$dir/merge.log"
zmbs=$(echo "scale=1; $in_mb / $tz" | bc)
mmbs=$(echo "scale=1; $in_mb / $tm" | bc)
echo "zcat:  $tz s, $zmbs MB/s"
echo "merge: $tm s, $mmbs MB/s ($(echo "scale=0; 100 * $mmbs / $zmbs" | bc)% of zcat; goal >= 50%)"
echo "merge peak RSS: $((rss / 1024)) MB (goal <= 256 MB)"
echo "output: $(cat "$dir"/merged/*.warc.gz | wc -c) bytes of WARC, $(wc -l <"$dir/merged/index.cdxj") CDXJ lines"
cat "$dir/merged/summary.json"
