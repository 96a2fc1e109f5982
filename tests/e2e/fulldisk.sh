#!/usr/bin/env bash
# e2e fulldisk: the output disk fills. Runs in namespaces of its own
# (unshare -m -n: its tmpfs mounts and its nginx are seen by nobody else,
# and vanish with it; no nginx lock needed).
#
# Each trial: two node daemons crawl the 8 x 100 site to depth 3; n1
# writes to a tmpfs (DISK_MB) that a filler file leaves FREE bytes of, FREE
# drawn from the seed (the fill point), n2 to the ordinary disk. Checks:
#   - n1 stops by itself, exit 3, one line on stderr naming the file
#     (DIR/depth-D/n1-S.warc.gz or .jsonl) and "No space left on device";
#   - right after its exit it holds no lease and owns no partition, and it
#     left the member list (handed back, not left to expire);
#   - its files end with whole records and lines (no torn gzip member, no
#     torn line, no orphan record) and it completed exactly one lease per
#     line written (its summary);
#   - space freed (filler removed), n1 restarted on the same directory:
#     the crawl completes; over both nodes every URL has exactly one line
#     and one record (nothing written twice), the manifest's depth-3 set is
#     complete, duplicate fetches (nginx log) at most the URLs n1 handed
#     back, no host fetched by two nodes at once; merging all outputs gives
#     one line per URL and skips no torn record.
# Then once: `dcrawl crawl` on a small tmpfs and on a full one (exit 3, the
# line, nothing merged), and `dcrawl merge` onto a full disk: exit 3, the
# line names the file, an earlier merge's output stays as it was, no
# temporary file left; the same when only its --tmp sort runs do not fit.
#
# TRIALS (default 1) trials; SEED (default 17) seeds bash's RANDOM, which
# draws each trial's fill point: it is printed, SEED=N replays a run.
if [ "${FULLDISK_NS:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "FAIL - runs as root (unshare -m -n, mount)"; exit 1; }
    export FULLDISK_NS=1
    exec unshare -m -n bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
ip link set lo up || { fail "loopback up in the test's network namespace"; finish; }
mount --make-rprivate / || { fail "private mount namespace"; finish; }

TRIALS=${TRIALS:-1}
SEED=${SEED:-17}
RANDOM=$SEED
DISK_MB=${DISK_MB:-16}
# 0.25 s between a host's requests: the crawl lasts long enough after the
# fill (> 20 s) for the restarted n1 to take partitions back and write
NODE_SET+=(--set politeness.delay=0.25)
echo "TRIALS=$TRIALS SEED=$SEED DISK_MB=$DISK_MB"
S=$(site 8 100) || exit 1
cluster_serve "$S" || exit 1
total=$(manifest_pages "$S" 3)

# tmpfs_at DIR MB: a tmpfs of MB MiB mounted on DIR
tmpfs_at() { mkdir -p "$1" && mount -t tmpfs -o "size=$2m" tmpfs "$1"; }
# leave_free DIR KB: a filler file DIR/.filler takes all but KB KiB
leave_free() {
    local avail
    avail=$(df -k --output=avail "$1" | tail -1)
    [ "$avail" -gt "$2" ] || return 0
    dd if=/dev/zero of="$1/.filler" bs=1k count=$((avail - $2)) status=none 2>/dev/null
    return 0
}
# rand_kb LO HI: RAND_KB = a number in [LO, HI] from RANDOM (two draws:
# > 32767), drawn in this shell (a $(...) subshell reseeds RANDOM)
rand_kb() { RAND_KB=$(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1))); }
# wait_exit ID SECS: bounded wait for node ID to exit; its status in EXIT_RC
wait_exit() {
    local pid=${NODE_PID[$1]} i
    for i in $(seq 1 $(($2 * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then EXIT_RC=timeout; return 1; fi
    wait "$pid"
    EXIT_RC=$?
    unset "NODE_PID[$1]"
}
# the figures a check_cluster / fulldisk_check output gives
figure() { sed -n "s/^figures: //p" "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

trial() {
    local k=$1 free out=$WORK/trial-$1 errline lines leases handed leased owned member
    local after n2lines dupf t0=$SECONDS
    OUTS=$out
    rand_kb 250 2500
    free=$RAND_KB
    tmpfs_at "$out/n1" "$DISK_MB" || { fail "trial $k: tmpfs mounted"; return; }
    leave_free "$out/n1" "$free"
    redis_start "trial-$k" || { fail "trial $k: redis"; return; }
    "$DCRAWL" seed --redis "$R" --depth 3 "$S/roots.txt" >"$out/seed.log" 2>&1
    echo "trial $k: n1's disk has $free KiB free (of $total pages, about half are n1's)"
    node_start n1
    node_start n2
    wait_exit n1 240
    # what Redis says right after the exit, and n1's files as it left them;
    # then space is freed and n1 restarted at once (the checks come after)
    leased=$(node_leases "$R" n1)
    owned=$(partition_owners "$R" | awk '$2 == "n1" { print $1 }')
    member=$(rcli "$R" zscore "$PREFIX:nodes" n1)
    mv "$out/n1.log" "$out/n1-full.log"
    cp -a "$out/n1" "$out/n1-at-fill"
    rm -f "$out/n1/.filler" "$out/n1-at-fill/.filler"
    node_start n1
    check "trial $k: n1 stops on the full disk with exit 3 (got $EXIT_RC)" [ "$EXIT_RC" = 3 ]
    errline=$(grep '^dcrawl node:' "$out/n1-full.log")
    echo "trial $k: n1: $errline"
    check "trial $k: one error line: the file and strerror" \
        bash -c '[ "$(grep -c "^dcrawl node:" "$1")" -eq 1 ] && grep -Eq "^dcrawl node: cannot write the output: $2/depth-[0-9]+/n1-[0-9]{5}\.(warc\.gz|jsonl): No space left on device" "$1"' \
        _ "$out/n1-full.log" "$out/n1"
    check "trial $k: at its exit n1 holds no lease (${leased:-?}), owns no partition (${owned:-0}), is no member ('$member')" \
        [ "${leased:-1}" -eq 0 -a -z "$owned" -a -z "$member" ]
    handed=$(sed -n 's/.*; \([0-9]*\) leased URLs and the partitions handed back$/\1/p' "$out/n1-full.log")
    leases=$(sed -n 's/.*per node: \([0-9]*\) lines written, \([0-9]*\) leases completed.*/\2/p' "$out/n1-full.log")
    lines=$(cat "$out"/n1-at-fill/depth-*/*.jsonl 2>/dev/null | wc -l)
    python3 "$SRC/tests/e2e/fulldisk_check.py" --label "trial $k: n1 at the fill" --out "$out/n1-at-fill" \
        --lines "${leases:--1}" --once --bench "$BENCH" >"$out/check-fill.log" 2>&1
    check "trial $k: n1's files end whole, one completed lease per line ($lines lines, ${leases:-?} leases)" [ $? -eq 0 ]
    grep -v '^ok' "$out/check-fill.log"
    crawl_wait_done "$R" 240
    rc=$?
    check "trial $k: the crawl completes after n1's restart (waited $CRAWL_SECS s)" [ $rc -eq 0 ]
    nodes_stop
    check "trial $k: SIGTERM: both nodes exit 0" [ "$NODES_STOP_RC" -eq 0 ]
    after=$(($(cat "$out"/n1/depth-*/*.jsonl | wc -l) - lines))
    check "trial $k: n1 restarted on the same directory writes pages ($after lines)" [ "$after" -gt 0 ]
    cluster_log_take "trial-$k" || exit 1
    kill "${REDIS_PIDS[-1]}"
    check_cluster "$S" 3 "$WORK/trial-$k.access.log" "$out/n1" "$out/n2" -- \
        --nodes n1,n2 --allow-dups "${handed:-0}" >"$out/check-cluster.log" 2>&1
    check "trial $k: manifest set, duplicate fetches <= $handed handed back, hosts exclusive" [ $? -eq 0 ]
    grep -v '^ok' "$out/check-cluster.log"
    python3 "$SRC/tests/e2e/fulldisk_check.py" --label "trial $k: all" --out "$out/n1" --out "$out/n2" \
        --once --bench "$BENCH" --manifest "$S/manifest.json" --depth 3 >"$out/check-all.log" 2>&1
    check "trial $k: every page written exactly once over both nodes, none lost" [ $? -eq 0 ]
    grep -v '^ok' "$out/check-all.log"
    merge_all "$k"
    n2lines=$(cat "$out"/n2/depth-*/*.jsonl | wc -l)
    dupf=$(sed -n 's/.*nginx log: [0-9]* page requests, \([0-9]*\) duplicate requests.*/\1/p' "$out/check-cluster.log")
    echo "trial $k figures: free ${free} KiB; n1 before the fill: $lines lines, ${leases:-?} leases completed;" \
        "handed back ${handed:-?}; n1 after the restart: $after lines; n2: $n2lines lines;" \
        "written twice: $(figure "$out/check-all.log" dup_lines); lost: $(figure "$out/check-all.log" missing);" \
        "duplicate fetches (log): ${dupf:-?}; $((SECONDS - t0)) s"
    umount "$out/n1"
}

# merge_all K: both nodes' output merged: one line per URL, nothing torn
merge_all() {
    local all=$OUTS/all d n urls
    for d in "$OUTS"/n1/depth-* "$OUTS"/n2/depth-*; do
        mkdir -p "$all/${d##*/}"
        cp -a "$d"/. "$all/${d##*/}/"
    done
    "$DCRAWL" merge "$all" >"$OUTS/merge.log" 2>&1
    check "trial $1: merge of both nodes' output exits 0" [ $? -eq 0 ]
    urls=$(cat "$OUTS"/n*/depth-*/*.jsonl | python3 -c '
import json, sys
print(len({json.loads(l)["url"] for l in sys.stdin}))')
    n=$(wc -l <"$all/merged/pages.jsonl" 2>/dev/null || echo 0)
    check "trial $1: merged pages.jsonl: one line per URL ($n lines, $urls URLs), no torn record skipped" \
        bash -c '[ "$1" -eq "$2" ] && grep -q " 0 torn records skipped" "$3"' _ "$n" "$urls" "$OUTS/merge.log"
}

for k in $(seq 1 "$TRIALS"); do trial "$k"; done

# ---- dcrawl crawl (one-shot) on a small disk, and on a full one
echo "trials done after $SECONDS s"
C=$WORK/crawl-disk
tmpfs_at "$C" 2 || fail "crawl: tmpfs mounted"
"$DCRAWL" crawl --depth 3 --out "$C/small" --seeds "$S/roots.txt" --set politeness.delay=0 \
    -q >"$WORK/crawl-small.out" 2>"$WORK/crawl-small.err"
rc=$?
cat "$WORK/crawl-small.err"
check "crawl on a 2 MiB disk: exit 3, one line naming the file and the reason, nothing merged" \
    bash -c '[ "$1" -eq 3 ] && [ "$(wc -l <"$2")" -eq 1 ] &&
        grep -Eq "^dcrawl crawl: cannot write the output: $3/depth-[0-9]+/[^/]+\.(warc\.gz|jsonl): No space left on device" "$2" &&
        [ ! -e "$3/merged/pages.jsonl" ]' _ $rc "$WORK/crawl-small.err" "$C/small"
python3 "$SRC/tests/e2e/fulldisk_check.py" --label "crawl on a 2 MiB disk" --out "$C/small" --once
check "crawl on a 2 MiB disk: its files end whole" [ $? -eq 0 ]
leave_free "$C" 0
"$DCRAWL" crawl --depth 3 --out "$C/full" --seeds "$S/roots.txt" -q >"$WORK/crawl-full.out" 2>"$WORK/crawl-full.err"
rc=$?
cat "$WORK/crawl-full.err"
check "crawl on a full disk: exit 3, the line names the file, no '0 pages' summary" \
    bash -c '[ "$1" -eq 3 ] && grep -Eq "^dcrawl crawl: cannot write the output: $3/depth-0/.*: No space left on device" "$2" &&
        ! grep -q "crawled 0 pages" "$4"' _ $rc "$WORK/crawl-full.err" "$C/full" "$WORK/crawl-full.out"
umount "$C"

# ---- dcrawl merge onto a full disk
echo "crawl checks done after $SECONDS s"
A=$WORK/trial-1/all
M=$WORK/merge-disk
tmpfs_at "$M" 64 || fail "merge: tmpfs mounted"
"$DCRAWL" merge "$A" --out "$M/merged" >"$WORK/merge-ok.log" 2>&1
check "merge onto a 64 MiB disk succeeds" [ $? -eq 0 ]
(cd "$M/merged" && sha1sum ./* >"$WORK/merged.sha1")
leave_free "$M" 256
"$DCRAWL" merge "$A" --out "$M/merged" >"$WORK/merge-full.out" 2>"$WORK/merge-full.err"
rc=$?
cat "$WORK/merge-full.err"
check "merge onto a full disk: exit 3, one line naming the file and the reason" \
    bash -c '[ "$1" -eq 3 ] && [ "$(wc -l <"$2")" -eq 1 ] &&
        grep -Eq "^dcrawl merge: $3/[^ ]+: No space left on device$" "$2"' _ $rc "$WORK/merge-full.err" "$M/merged"
check "merge onto a full disk: the earlier output is intact, no temporary file left" \
    bash -c 'cd "$1" && sha1sum -c --quiet "$2" && [ -z "$(ls -A | grep -v -e "^depth-[0-9]*\.warc\.gz$" -e "^pages\.jsonl$" -e "^index\.cdxj$" -e "^summary\.json$")" ]' \
    _ "$M/merged" "$WORK/merged.sha1"
"$DCRAWL" merge "$A" --out "$WORK/merge-tmpfull" --tmp "$M" --mem 1 >"$WORK/merge-tmp.out" 2>"$WORK/merge-tmp.err"
rc=$?
cat "$WORK/merge-tmp.err"
check "merge whose sort runs do not fit (--tmp on the full disk): exit 3, the run file named, nothing published" \
    bash -c '[ "$1" -eq 3 ] && grep -Eq "^dcrawl merge: sort run $3/\.sort-[^ ]+: No space left on device$" "$2" &&
        [ ! -e "$4/pages.jsonl" ] && [ -z "$(ls -A "$3" | grep "^\.sort-")" ]' \
    _ $rc "$WORK/merge-tmp.err" "$M" "$WORK/merge-tmpfull"
umount "$M"
serve_stop
finish
