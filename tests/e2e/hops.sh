#!/usr/bin/env bash
# e2e hops: a page the noise filter's dropped menu link puts 1 hop from the
# seed, reached by content links only at depth 3 (tests/e2e/hops_site.py),
# crawled to depth 3 with the default noise settings: it and the pages
# below it are fetched at their link distance over all links (1, 2, 3),
# the page 4 hops away and the two only the menu reaches are not, and no
# URL is fetched twice. A crawl that counted content links only would
# put the site map at 3 and never reach the pages below it.
. "$(dirname "$0")/lib.sh"
S=$WORK/site
python3 "$SRC/tests/e2e/hops_site.py" "$S" || exit 1
serve "$S" || exit 1
timeout 300 "$DCRAWL" crawl --depth 3 --out "$WORK/out" \
    --set politeness.delay=0 http://127.0.1.1:8080/ >"$WORK/crawl.log" 2>&1
rc=$?
cat "$WORK/crawl.log"
serve_stop
check "crawl exits 0" test "$rc" = 0
check "fetched at their link distance, the rest not, nothing twice" \
    python3 - "$S" "$WORK/out/merged/pages.jsonl" "$STATE/access.log" <<'PY'
import collections, json, sys
site, pages, log = sys.argv[1:]
want = dict(l.split() for l in open(site + "/depths.txt"))
absent = set(open(site + "/absent.txt").read().split())
got = {}
for line in open(pages):
    p = json.loads(line)
    if p.get("status") == 200 and not p["url"].endswith("/robots.txt"):
        got[p["url"]] = str(p["depth"])
bad = {u: (d, got.get(u)) for u, d in want.items() if got.get(u) != d}
extra = sorted(absent & set(got))
gets = collections.Counter(l.split('"')[1] for l in open(log) if '"GET ' in l)
twice = [r for r, n in gets.items() if n > 1]
print("depth (want, got) wrong: %s; fetched but must not be: %s; "
      "requested twice: %s" % (bad, extra, twice))
sys.exit(1 if bad or extra or twice else 0)
PY
finish
