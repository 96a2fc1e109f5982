#!/usr/bin/env bash
# e2e toc: a documentation site whose guides and chapters are linked only
# from side menus (tests/e2e/toc_site.py, built as Erlang/OTP's
# documentation is), crawled with the default noise settings to depth 3:
# every guide and chapter must be fetched, through the index's big menu
# and a book's sidebar (a menu of noise.h's NOISE_TOC_MIN links or more
# that the host's navigation has not shown yet is a table of contents)
# and the guides' outlines (menus of links to sections of pages), a
# documentation home page's top bar that copies its cards (the section
# only the bar links to) and a landing page from which only its side menu
# leads on, while the two pages only the small <header> menu links to must
# not be. The
# same crawl under noise.block_rule=ratio (the rule as first written) must
# lose pages (tests/e2e/rule-lib.sh runs and scores both).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rule-lib.sh"
S=$WORK/site
python3 "$SRC/tests/e2e/toc_site.py" "$S" || exit 1
crawl_rules "$S" 3
check "default: crawl exits 0" grep -qx 0 "$WORK/rc-default"
check "default: every guide and chapter fetched, header-only pages not" \
    compare "$S" default whole
check "ratio: crawl exits 0" grep -qx 0 "$WORK/rc-ratio"
check "ratio (the literal rule): pages are lost" compare "$S" ratio loses
finish
