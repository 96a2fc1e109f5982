#!/usr/bin/env bash
# e2e bigpages: every link of a 3 MB and a 9 MB page (tests/e2e/bigpages.py:
# links spread from the first bytes to the very last ones, traps in
# comments and scripts, some longer than a parse slice), served by nginx.
# `dcrawl crawl` to depth 2 with noise.enabled=false, then with the
# defaults, must fetch every listed page (status 200), request none of the
# traps, and fetch nothing twice. The dcrawl process's peak RSS (VmHWM,
# e2e/peak_rss.py; parse.threads=2, the other settings default) is printed
# for both crawls, with the embedded redis-server's apart; it must be
# <= 64 MB in an optimized build without sanitizers (DCRAWL_RSS_CHECK=1,
# set by tests/CMakeLists.txt). Under ASan the figure means nothing, so a
# sanitized run (CI's) checks the limit on the Release binary next to it,
# build-rel/dcrawl (scripts/test.sh builds it first; DCRAWL_REL overrides),
# with two more crawls; without one the output says the check was skipped.
. "$(dirname "$0")/lib.sh"
S=/tmp/dcrawl-test-bigpages
if [ ! -f "$S/expected.txt" ] || [ "$SRC/tests/e2e/bigpages.py" -nt "$S/expected.txt" ]; then
    rm -rf "$S"
    python3 "$SRC/tests/e2e/bigpages.py" --out "$S" >"$WORK/gen.log" 2>&1 ||
        { cat "$WORK/gen.log"; exit 1; }
fi
serve "$S" || exit 1
LIMIT_KB=$((64 * 1024))
REL=${DCRAWL_REL:-$SRC/build-rel/dcrawl}
modes="noise-off defaults"
if [ "${DCRAWL_RSS_CHECK:-0}" != 1 ] && [ -x "$REL" ]; then
    modes="$modes rel-noise-off rel-defaults"
    echo "sanitized build: the RSS limit is checked on $REL"
fi
for mode in $modes; do
    set_noise=()
    bin=$DCRAWL rss_check=${DCRAWL_RSS_CHECK:-0}
    case $mode in rel-*) bin=$REL rss_check=1 ;; esac
    case $mode in *noise-off) set_noise=(--set noise.enabled=false) ;; esac
    timeout 300 python3 "$SRC/tests/e2e/peak_rss.py" "$WORK/rss-$mode" \
        "$bin" crawl --depth 2 --out "$WORK/out-$mode" --set politeness.delay=0 \
        --set parse.threads=2 "${set_noise[@]}" http://127.0.1.1:8080/ \
        >"$WORK/crawl-$mode.log" 2>&1
    rc=$?
    check "$mode: dcrawl crawl exits 0" [ $rc -eq 0 ] || cat "$WORK/crawl-$mode.log"
    check "$mode: every linked page fetched once, no trap requested" \
        python3 - "$S" "$WORK/out-$mode/merged/pages.jsonl" <<'PY'
import collections, json, sys
exp = set(open(sys.argv[1] + "/expected.txt").read().split())
traps = set(open(sys.argv[1] + "/traps.txt").read().split())
n = collections.Counter()
ok = set()
for line in open(sys.argv[2]):
    p = json.loads(line)
    n[p["url"]] += 1
    if p.get("status") == 200:
        ok.add(p["url"])
ok.discard("http://127.0.1.1:8080/robots.txt")
miss, extra = sorted(exp - ok), sorted(ok - exp)
twice = [u for u, c in n.items() if c > 1]
print("expected %d, fetched %d, missing %d %s, unexpected %d %s, traps %d, twice %d"
      % (len(exp), len(ok), len(miss), miss[:5], len(extra), extra[:5],
         len(ok & traps), len(twice)))
sys.exit(0 if not miss and not extra and not (ok & traps) and not twice else 1)
PY
    dkb=$(awk '$1 == "dcrawl_kb" {print $2}' "$WORK/rss-$mode" 2>/dev/null)
    rkb=$(awk '$1 == "children_kb" {print $2}' "$WORK/rss-$mode" 2>/dev/null)
    echo "$mode: peak RSS: dcrawl ${dkb:-?} kB, embedded redis-server ${rkb:-?} kB"
    if [ "$rss_check" = 1 ]; then
        check "$mode: dcrawl peak RSS ${dkb:-?} kB <= $LIMIT_KB kB" [ "${dkb:-0}" -gt 0 ] &&
            [ "$dkb" -le $LIMIT_KB ]
    else
        echo "$mode: RSS limit not checked here (sanitizer or unoptimized build)"
    fi
done
serve_stop
check "no trap in nginx's access log" bash -c "! grep -q ' /trap/' '$STATE/access.log'"
finish
