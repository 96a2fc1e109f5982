#!/usr/bin/env bash
# e2e toc: a documentation site whose guides and chapters are linked only
# from side menus (tests/e2e/toc_site.py, built as Erlang/OTP's
# documentation is), crawled with the default noise settings to depth 3:
# every guide and chapter must be fetched, through the index's big menu
# and a book's sidebar (a menu of noise.h's NOISE_TOC_MIN links or more
# that the host's navigation has not shown yet is a table of contents)
# and the guides' outlines (menus of links to sections of pages), while
# the two pages only the small <header> menu links to must not be. The same crawl under noise.block_rule=ratio (the
# rule as first written) must lose pages.
. "$(dirname "$0")/lib.sh"
S=$WORK/site
python3 "$SRC/tests/e2e/toc_site.py" "$S" || exit 1
serve "$S" || exit 1
for rule in default ratio; do
    set=(); [ $rule = ratio ] && set=(--set noise.block_rule=ratio)
    timeout 300 "$DCRAWL" crawl --depth 3 --out "$WORK/out-$rule" \
        --set politeness.delay=0 "${set[@]}" http://127.0.1.1:8080/ \
        >"$WORK/crawl-$rule.log" 2>&1
    echo $? >"$WORK/rc-$rule"
    cat "$WORK/crawl-$rule.log"
done
serve_stop
# compare RULE WANT: fetched (200) vs content.txt / navonly.txt
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
check "default: every guide, chapter and book chapter fetched, header-only pages not" \
    compare default whole
check "ratio: crawl exits 0" grep -qx 0 "$WORK/rc-ratio"
check "ratio (the literal rule): pages are lost" compare ratio loses
finish
