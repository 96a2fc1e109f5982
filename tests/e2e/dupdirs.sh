#!/usr/bin/env bash
# e2e dupdirs: byte-identical pages in two directories whose relative links
# lead to different pages (the same stub index.html in /v1/ and /v2/, each
# linking "guide.html"; a mirror tree is the same case). The second copy
# is a content duplicate, archived as a revisit; its links must still be
# followed, since from its directory they lead elsewhere: both guides are
# fetched. A copy in the first copy's own directory (/v1/same.html) is a
# revisit too, and its links lead where the first copy's did. A copy
# below the first copy's directory (/trap/, the home page again, as a
# catch-all route serves it for any path) is a revisit whose links are
# not followed: nothing under /trap/ but itself is requested. Default
# settings, depth 3.
. "$(dirname "$0")/lib.sh"
S=$WORK/site
rm -rf "$S"
python3 - "$S" <<'PY'
import os, sys
root = os.path.join(sys.argv[1], "hosts", "127.0.1.1")
text = ("This paragraph is ordinary running text, long enough that the few "
        "words of its links stay well under a quarter of the block. ") * 4
def page(path, body):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write("<!DOCTYPE html><html><head><title>t</title></head><body>"
                       "<main>%s</main></body></html>\n" % body)
os.makedirs(root, exist_ok=True)
open(os.path.join(root, "robots.txt"), "w").write("User-agent: *\nDisallow:\n")
home = ('<p>%s <a href="v1/">version one</a> and <a href="v2/">version two</a> '
        'and <a href="v1/same.html">the same stub</a> and <a href="trap/">a trap</a>.</p>' % text)
page("index.html", home)
page("trap/index.html", home)
stub = '<p>%s Read <a href="guide.html">the guide</a>.</p>' % text
page("v1/index.html", stub)
page("v2/index.html", stub)
page("v1/same.html", stub)
page("v1/guide.html", "<p>%s Guide for version one.</p>" % text)
page("v2/guide.html", "<p>%s Guide for version two, other words.</p>" % text)
PY
serve "$S" || exit 1
timeout 300 "$DCRAWL" crawl --depth 3 --out "$WORK/out" --set politeness.delay=0 \
    http://127.0.1.1:8080/ >"$WORK/crawl.log" 2>&1
rc=$?
serve_stop
cat "$WORK/crawl.log"
check "crawl exits 0" [ $rc -eq 0 ]
python3 - "$WORK/out/merged/pages.jsonl" <<'PY' >"$WORK/pages.txt"
import json, sys
for l in open(sys.argv[1]):
    p = json.loads(l)
    print(p["url"], p["status"], "dup" if p.get("duplicate_of") else "-")
PY
cat "$WORK/pages.txt"
B=http://127.0.1.1:8080
check "both guides fetched (the second stub's link followed)" \
    eval "grep -qx '$B/v1/guide.html 200 -' '$WORK/pages.txt' && grep -qx '$B/v2/guide.html 200 -' '$WORK/pages.txt'"
check "two of the three stubs are revisits, and the trap" \
    eval "[ \"\$(grep -c ' 200 dup\$' '$WORK/pages.txt')\" -eq 3 ] && grep -qx '$B/trap/ 200 dup' '$WORK/pages.txt'"
check "nothing under the trap requested but itself" \
    [ "$(grep -c "^$B/trap/" "$WORK/pages.txt")" -eq 1 ]
check "summary: 3 content duplicates, links followed on 1 or 2" \
    grep -Eq "content duplicates: 3 pages archived as revisits of an earlier copy; links followed on [12] of them" "$WORK/crawl.log"
finish
