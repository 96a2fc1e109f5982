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
. "$(dirname "$0")/rule-lib.sh"
S=$WORK/site
python3 "$SRC/tests/e2e/pager_site.py" "$S" || exit 1
crawl_rules "$S" 30
check "default: crawl exits 0" grep -qx 0 "$WORK/rc-default"
check "default: every content page fetched, header/footer-only pages not" \
    compare "$S" default whole
check "ratio: crawl exits 0" grep -qx 0 "$WORK/rc-ratio"
check "ratio (the literal rule): pages are lost" compare "$S" ratio loses
finish
