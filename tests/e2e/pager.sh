#!/usr/bin/env bash
# e2e pager: a 58-page site whose pages link onward only from link-only
# paragraphs and lists (a blog index with a numbered pager, "next
# previous" paragraphs, a sliding numbered pager, a <nav> pager inside
# <main>; tests/e2e/pager_site.py), crawled with the default noise
# settings to depth 30: every page must be fetched, and the two pages that
# only the site's <header> and <footer> link to must not be (the default
# rule still drops semantic navigation, on the host's first page too).
# The same crawl under noise.block_rule=ratio (the rule as first written)
# must lose pages, which shows the site tests what the default keeps.
. "$(dirname "$0")/lib.sh"
S=$WORK/site
python3 "$SRC/tests/e2e/pager_site.py" "$S" || exit 1
serve "$S" || exit 1
for rule in default ratio; do
    set=(); [ $rule = ratio ] && set=(--set noise.block_rule=ratio)
    timeout 300 "$DCRAWL" crawl --depth 30 --out "$WORK/out-$rule" \
        --set politeness.delay=0 "${set[@]}" http://127.0.1.1:8080/ \
        >"$WORK/crawl-$rule.log" 2>&1
    echo $? >"$WORK/rc-$rule"
    cat "$WORK/crawl-$rule.log"
done
serve_stop
# compare OUT WANT: fetched (200) vs content.txt / navonly.txt
compare() {
    python3 - "$S" "$WORK/out-$1/merged/pages.jsonl" "$1" "$2" <<'PY'
import json, sys
site, pages, rule, want = sys.argv[1:]
content = set(open(site + "/content.txt").read().split())
navonly = set(open(site + "/navonly.txt").read().split())
got = set()
for line in open(pages):
    p = json.loads(line)
    if p.get("status") == 200:
        got.add(p["url"])
miss, nav = sorted(content - got), sorted(navonly & got)
print("%s: %d of %d content pages fetched, missing %s; nav-only fetched %s"
      % (rule, len(content & got), len(content), miss[:8], nav))
if want == "whole":
    sys.exit(0 if not miss and not nav else 1)
sys.exit(0 if miss else 1)  # "loses": the literal ratio rule cuts it off
PY
}
check "default: crawl exits 0" grep -qx 0 "$WORK/rc-default"
check "default: every content page fetched, header/footer-only pages not" \
    compare default whole
check "ratio: crawl exits 0" grep -qx 0 "$WORK/rc-ratio"
check "ratio (the literal rule): pages are lost" compare ratio loses
finish
