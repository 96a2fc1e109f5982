#!/usr/bin/env bash
# e2e deadhosts: a site whose pages link to hosts that cannot be reached,
# crawled to depth 3 inside a network namespace of its own (unshare -n,
# loopback up; the resolver's packets cannot leave it, so *.invalid fails
# at once). The site (python3's http.server on 127.0.0.1:8080, its request
# log kept) has 13 pages over 3 levels; every page links to names that do
# not resolve (dead-K.invalid) and to closed ports (127.0.9.K:1, refused),
# some of them linked again from a deeper level (a dead host's robots.txt
# is not tried again: that waits ROBOTS_REVIVE_MS, 30 s). Checks: exit 0; every page fetched with 200;
# every dead URL has one line, status 0, "robots.txt unreachable: <error>";
# one line per URL; nothing requested twice (the server's log).
. "$(dirname "$0")/lib.sh"
for t in unshare ip; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n)"; finish; }

site=$WORK/site
python3 - "$site" "$WORK/expected.txt" "$WORK/dead.txt" <<'PY'
import os, sys
root, exp, dead = sys.argv[1:4]
pages = {"/": ["/s%d/" % i for i in range(1, 4)]}
for i in range(1, 4):
    pages["/s%d/" % i] = ["/s%d/p%d.html" % (i, k) for k in range(1, 4)] + ["/"]
    for k in range(1, 4):
        pages["/s%d/p%d.html" % (i, k)] = ["/s%d/" % i]
deadurls = set()
for n, (path, links) in enumerate(sorted(pages.items())):
    # a dead name and a refused port of its own, and two shared by all
    # pages (so they come back at every level)
    extra = ["http://dead-%d.invalid/p%d" % (n, n), "http://127.0.9.%d:1/r%d" % (n + 1, n),
             "http://dead-all.invalid/%s" % path.strip("/").replace("/", "-"),
             "http://127.0.9.200:1/%s" % path.strip("/").replace("/", "-")]
    deadurls.update(extra)
    links = links + extra
    f = os.path.join(root, path.lstrip("/"), "index.html" if path.endswith("/") else "")
    f = f.rstrip("/")
    os.makedirs(os.path.dirname(f), exist_ok=True)
    body = "".join('<p>Text %d of %s. <a href="%s">%s</a></p>\n' % (i, path, l, l)
                   for i, l in enumerate(links))
    open(f, "w").write("<!doctype html><title>%s</title><h1>%s</h1>\n%s" % (path, path, body))
open(os.path.join(root, "robots.txt"), "w").write("User-agent: *\nAllow: /\n")
open(exp, "w").write("".join(p + "\n" for p in sorted(pages)))
open(dead, "w").write("".join(u + "\n" for u in sorted(deadurls)))
PY
nexp=$(wc -l <"$WORK/expected.txt")
out=$WORK/out
# inside the namespace: lo up, the site served, the crawl (embedded Redis
# on a unix socket), the server stopped
timeout 300 unshare -n bash -c '
    ip link set lo up || exit 90
    # the server keeps no descriptor above 2 (the ctest lock among them) if it outlives the test
    ( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done
      cd "$1" && exec python3 -m http.server 8080 --bind 127.0.0.1 2>"$2/server.log" >/dev/null ) &
    srv=$!
    for i in $(seq 1 50); do
        python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 8080), 1)" 2>/dev/null && break
        sleep 0.1
    done
    "$3" crawl --depth 3 --out "$2/out" --set politeness.delay=0 --set noise.enabled=false \
        http://127.0.0.1:8080/ >"$2/crawl.log" 2>"$2/crawl.err"
    rc=$?
    kill $srv; wait $srv 2>/dev/null
    exit $rc' _ "$site" "$WORK" "$DCRAWL"
rc=$?
cat "$WORK/crawl.log" "$WORK/crawl.err"
check "crawl exits 0 ($rc)" [ $rc -eq 0 ]

lines() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s\t%s\t%s\t%s" % (r["url"], r["status"], r.get("error"), r.get("skipped")))' "$1"; }
lines "$out/merged/pages.jsonl" >"$WORK/lines"
base=http://127.0.0.1:8080
awk -F'\t' -v b="$base" '$2 == 200 && index($1, b) == 1 { print substr($1, length(b) + 1) }' \
    "$WORK/lines" | sort >"$WORK/fetched"
check "the whole site fetched with 200 ($(wc -l <"$WORK/fetched") of $nexp)" \
    cmp -s "$WORK/fetched" "$WORK/expected.txt"
check "every dead URL has a line: status 0, skipped: robots.txt unreachable: <its error>" \
    python3 - "$WORK/lines" "$WORK/dead.txt" <<'EOF'
import sys
got = {}
for l in open(sys.argv[1]):
    u, st, err, sk = l.rstrip("\n").split("\t")
    got[u] = (st, err, sk)
bad = 0
for u in open(sys.argv[2]).read().split():
    st, err, sk = got.get(u, (None, None, None))
    want = "Could not resolve host" if ".invalid" in u else "Failed to connect"
    if st != "0" or not err.startswith(want) or sk != "robots.txt unreachable: " + err:
        print("dead URL:", u, got.get(u)); bad += 1
sys.exit(bad > 0)
EOF
check "one line per URL in merged/pages.jsonl ($(wc -l <"$WORK/lines"))" \
    [ "$(cut -f1 "$WORK/lines" | sort | uniq -d | wc -l)" -eq 0 ]
check "lines: the site's pages and the dead URLs, nothing else" \
    [ "$(wc -l <"$WORK/lines")" -eq $((nexp + $(wc -l <"$WORK/dead.txt"))) ]
grep -oE '"GET [^ ]+' "$WORK/server.log" | cut -c6- | sort >"$WORK/requests"
check "nothing requested twice ($(wc -l <"$WORK/requests") requests)" \
    [ -z "$(uniq -d "$WORK/requests")" ]
check "the server saw robots.txt and the pages, once each" \
    cmp -s "$WORK/requests" <(sort <(echo /robots.txt) "$WORK/expected.txt")
check "summary: every dead URL counted as skipped for an unreachable robots.txt" \
    grep -q "0 disallowed by robots.txt rules, $(wc -l <"$WORK/dead.txt") because robots.txt was unreachable" "$WORK/crawl.log"
finish
