#!/usr/bin/env bash
# e2e scope: a page links to URLs that each break one scope rule (skip
# suffix, repeated path segments, another host under scope.mode=host,
# scope.exclude, url.max_length) and to four plain pages under a host
# budget of 4 URLs (the seed uses one). The server's request log shows
# none of the dropped URLs was requested, exactly 3 of the 4 plain pages
# were, the other host was never contacted; the summary counts each
# reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/polite-lib.sh"

long=/$(printf 'l%.0s' $(seq 1 120))
site='{"origins": {
 "a": {"ip": "127.0.0.65", "pages": {
   "/": {"links": ["/ok1", "/img.jpg", "/style.CSS?v=2", "/x/x/x/x", "/a/b/a/b/a/b/a/",
                   "/private/secret", "/ok2", "/list?sort=1", "{b}/other", "/ok3", "/ok4",
                   "'"$long"'"]},
   "/ok1": {}, "/ok2": {}, "/ok3": {}, "/ok4": {}, "/img.jpg": {}, "/style.CSS?v=2": {},
   "/x/x/x/x": {}, "/a/b/a/b/a/b/a/": {}, "/private/secret": {}, "/list?sort=1": {},
   "'"$long"'": {}}},
 "b": {"ip": "127.0.0.66", "pages": {"/other": {}}}}}'
pserve scope "$site" || exit 1
timeout 120 "$DCRAWL" crawl --depth 1 --out "$SDIR/out" --set noise.enabled=false \
    --set politeness.delay=0 --set scope.mode=host --set 'scope.exclude=/private/ [?&]sort=' \
    --set scope.host_budget=4 --set url.max_length=100 "http://$(origin a)/" >"$SDIR/crawl.log" 2>&1
rc=$?
pstop
check "crawl exits 0" [ $rc -eq 0 ] || cat "$SDIR/crawl.log"
pycheck "dropped URLs never requested, the other host never contacted" '
bad = {"/img.jpg", "/style.CSS?v=2", "/x/x/x/x", "/a/b/a/b/a/b/a/", "/private/secret", "/list?sort=1"}
got = set(paths("a"))
if got & bad: print("requested", sorted(got & bad))
if any(len(p) > 100 for p in got): print("long URL requested")
if by("b"): print("host b contacted", paths("b"))'
pycheck "host budget 4: the seed and exactly 3 of the 4 plain pages" '
p = paths("a")
ok = [x for x in p if x.startswith("/ok")]
if len(ok) != 3 or len(set(ok)) != 3 or p.count("/") != 1: print(p)'
check "summary counts each reason" grep -q \
    "scope: 8 links dropped (suffix 2, repeated segments 2, off host 1, off domain 0, not included 0, excluded 2, host budget 1)" \
    "$SDIR/crawl.log"
grep "scope:" "$SDIR/crawl.log"

# a bad setting is refused before anything is fetched
"$DCRAWL" crawl --depth 0 --out "$WORK/bad" --set 'scope.include=(' "http://127.0.0.65:1/" >"$WORK/bad.log" 2>&1
rc=$?
check "bad scope.include: exit status 2 (got $rc)" [ $rc -eq 2 ]
check "bad scope.include: the message names the key" grep -q "scope.include" "$WORK/bad.log"
"$DCRAWL" crawl --depth 0 --out "$WORK/bad2" --set 'scope.mode=hosts' "http://127.0.0.65:1/" >"$WORK/bad2.log" 2>&1
rc=$?
check "bad scope.mode: exit status 2 (got $rc)" [ $rc -eq 2 ]
finish
