#!/usr/bin/env bash
# e2e noise: `dcrawl crawl` of the 10 x 200 site to depth 3 with the noise
# filter on (the default), scored against manifest-content.json (the pages
# reachable through links that links.jsonl labels "content"): the crawl
# must fetch >= 95 % of the content-only depth-3 set, and pages that only
# navigation links reach (outside the content-only closure) must be <= 5 %
# of what it fetched. The summary must carry the noise counters, and the
# labelled evaluation (build/bench/noise_bench eval) must pass.
. "$(dirname "$0")/lib.sh"
S=$(site 10 200) || exit 1
serve "$S" || exit 1
out=$WORK/out
timeout 300 "$DCRAWL" crawl --seeds "$S/roots.txt" --depth 3 --out "$out" \
    --set politeness.delay=0 >"$WORK/crawl.log" 2>&1
rc=$?
cat "$WORK/crawl.log"
serve_stop
check "dcrawl crawl exits 0" [ $rc -eq 0 ]
check "summary has the noise counters" grep -q "noise: .* dropped by block" "$WORK/crawl.log"
score() {
    python3 - "$S/manifest-content.json" "$out/merged/pages.jsonl" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
c3 = set(m["within_depth"]["3"])
closure = set()
for v in m["within_depth"].values():
    closure |= set(v)
fetched = set()
for line in open(sys.argv[2]):
    p = json.loads(line)
    if p.get("status") == 200 and not p["url"].endswith("/robots.txt"):
        fetched.add(p["url"])
cov = len(fetched & c3) / len(c3)
nav_only = len(fetched - closure) / max(1, len(fetched))
print("fetched %d; content-only depth-3 set %d, covered %.4f; nav-only %d = %.4f of fetched"
      % (len(fetched), len(c3), cov, len(fetched - closure), nav_only))
sys.exit(0 if cov >= 0.95 and nav_only <= 0.05 else 1)
PY
}
check "content-only coverage >= 0.95, nav-only share <= 0.05" score
BENCHBIN=$(dirname "$DCRAWL")/bench/noise_bench
if [ -x "$BENCHBIN" ]; then
    check "labelled evaluation: precision and recall >= 0.95" "$BENCHBIN" eval "$S"
fi
finish
