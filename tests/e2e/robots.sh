#!/usr/bin/env bash
# e2e robots: the robots.txt fetch rules, Crawl-delay and sitemaps against
# robots_server.py (its own loopback server, one port per scenario; not
# nginx), in one crawl of depth 1 plus `dcrawl robots URL` checks.
#   404 -> all crawled; 503 -> nothing crawled, robots.txt tried again
#   (ROBOTS_FAIL_TRIES = 4 tries, 1 + 2 + 4 s apart), the seed listed as
#   skipped ("robots.txt unreachable: HTTP 503") and counted apart from the
#   URLs the rules disallow; 3 redirects followed;
#   6 redirects -> "unavailable" -> allow all; Crawl-delay: 1 -> gaps of at
#   least 1 s; Sitemap -> its URLs fetched though no page links them (only
#   those on the robots.txt's host); a 510 KiB robots.txt -> only the first
#   500 KiB used.
. "$(dirname "$0")/lib.sh"
python3 "$SRC/tests/e2e/robots_server.py" "$WORK" &
SRV=$!
trap 'kill $SRV 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/ports.json" ] && break; sleep 0.1; done
port() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$WORK/ports.json" "$1"; }
seeds=$WORK/seeds.txt
: >"$seeds"
for s in r404 r503 redir3 redir6 delay sitemap big; do
    echo "http://127.0.0.1:$(port $s)/" >>"$seeds"
done
out=$WORK/out
t0=$(date +%s)
timeout 120 "$DCRAWL" crawl --seeds "$seeds" --depth 1 --out "$out" \
    --set politeness.delay=0 --set noise.enabled=false --set fetch.retries=0 \
    --set fetch.max_redirects=5 >"$WORK/crawl.log" 2>&1
rc=$?
t1=$(date +%s)
cat "$WORK/crawl.log"
echo "crawl took $((t1 - t0)) s"
check "crawl exits 0" [ $rc -eq 0 ]
LOG=$WORK/requests.log
n() { awk -v s="$1" -v p="$2" '$1 == s && $2 == p' "$LOG" | wc -l; }
got() { [ "$(n "$1" "$2")" -ge 1 ]; }
none() { [ "$(n "$1" "$2")" -eq 0 ]; }

check "404: / crawled" got r404 /
check "404: /a and /b crawled" eval 'got r404 /a && got r404 /b'
check "503: no page requested" [ "$(awk '$1 == "r503" && $2 != "/robots.txt"' "$LOG" | wc -l)" -eq 0 ]
check "503: robots.txt retried (4 tries)" [ "$(n r503 /robots.txt)" -eq 4 ]
check "503: retries spaced 1, 2, 4 s" python3 - "$LOG" <<'EOF'
import sys
t = [float(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("r503 /robots.txt ")]
gaps = [b - a for a, b in zip(t, t[1:])]
print("503 robots.txt gaps:", ["%.2f" % g for g in gaps])
sys.exit(0 if len(gaps) == 3 and all(g >= w * 0.95 for g, w in zip(gaps, (1, 2, 4))) else 1)
EOF
p503=$(port r503)
check "503: the seed has a skipped line (status 0, robots.txt unreachable: HTTP 503)" python3 - "$out/merged/pages.jsonl" "http://127.0.0.1:$p503/" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in recs if r["url"] == sys.argv[2]]
print(mine and {k: mine[0][k] for k in ("status", "error", "skipped", "warc_record_id")})
sys.exit(0 if len(mine) == 1 and mine[0]["status"] == 0 and
         mine[0]["skipped"] == "robots.txt unreachable: HTTP 503" and
         mine[0]["error"] == "HTTP 503" and mine[0]["warc_record_id"] is None else 1)
EOF
check "503: summary counts it as unreachable, not as disallowed by rules" \
    grep -q "URLs skipped: [0-9]* disallowed by robots.txt rules, 1 because robots.txt was unreachable" "$WORK/crawl.log"
check "503: summary lists the error with the host" \
    grep -qE "^ +1  robots.txt unreachable: HTTP 503 \(e.g. 127.0.0.1:$p503\)$" "$WORK/crawl.log"
check "redirect x3: chain followed to /r3" got redir3 /r3
check "redirect x3: rules applied (/secret not requested)" none redir3 /secret
check "redirect x3: /ok crawled" got redir3 /ok
check "redirect x6: 5 hops followed, /r6 never requested" eval 'got redir6 /r5 && none redir6 /r6'
check "redirect x6: treated as unavailable, allow all (/secret crawled)" got redir6 /secret
check "crawl-delay 1: gaps between requests >= 1 s" python3 - "$LOG" <<'EOF'
import sys
reqs = sorted((float(l.split()[2]), float(l.split()[3]), l.split()[1])
              for l in open(sys.argv[1]) if l.startswith("delay ") and " /robots.txt " not in l)
gaps = [b[0] - a[1] for a, b in zip(reqs, reqs[1:])]
print("crawl-delay gaps:", ["%.2f" % g for g in gaps], [r[2] for r in reqs])
sys.exit(0 if len(reqs) == 4 and min(gaps) >= 0.99 else 1)
EOF
check "sitemap: URLs from a gzip urlset fetched" eval 'got sitemap /hidden1 && got sitemap "/hidden2?a=1&b=2"'
check "sitemap: URL from a text sitemap (via the index) fetched" got sitemap /hidden3
check "sitemap: other host's URL not admitted" [ "$(grep -c 'elsewhere' "$out/merged/pages.jsonl")" -eq 0 ]
check "sitemap: index and both sitemaps fetched once" eval '[ "$(n sitemap /sitemap-index.xml)" -eq 1 ] && [ "$(n sitemap /sm-urls.xml.gz)" -eq 1 ] && [ "$(n sitemap /sm.txt)" -eq 1 ]'
check "big robots.txt: rule in the first 500 KiB obeyed" none big /early
check "big robots.txt: rule after 500 KiB ignored" got big /late

# the checker, against the same servers
chk() { timeout 30 "$DCRAWL" robots "http://127.0.0.1:$(port "$1")/" --agent dcrawl "http://127.0.0.1:$(port "$1")/$2" 2>&1; }
# first PATTERN: $o's first line matches; has PATTERN: one of its lines
# does. Here-strings, not pipes: under pipefail a reader that stops early
# (head, grep -q) can fail the pipeline by SIGPIPE whatever the text.
first() { grep -q "$1" <<< "${o%%$'\n'*}"; }
has() { grep -q "$1" <<< "$o"; }
o=$(chk r404 a); echo "$o"
check "dcrawl robots: 404 -> allow all" eval 'first "^# robots.txt: 404 -> allow all" && has "^allowed "'
o=$(chk r503 a); echo "$o"
check "dcrawl robots: 503 -> disallow all" eval 'first "^# robots.txt: 503 -> disallow all" && has "^disallowed "'
o=$(chk redir3 secret); echo "$o"
check "dcrawl robots: 3 redirects followed, /secret disallowed" eval 'first "^# robots.txt: 200 -> rules parsed" && has "^disallowed "'
o=$(chk redir6 secret); echo "$o"
check "dcrawl robots: 6 redirects -> allow all" eval 'first "^# robots.txt: too many redirects -> allow all" && has "^allowed "'
o=$(chk delay x); echo "$o"
check "dcrawl robots: crawl-delay shown" has "^# crawl-delay: 1$"
o=$(timeout 30 "$DCRAWL" robots http://127.0.0.1:1/ --set fetch.connect_timeout=2 http://127.0.0.1:1/x 2>&1); echo "$o"
check "dcrawl robots: unreachable -> disallow all" eval 'first "^# robots.txt: unreachable .* -> disallow all" && has "^disallowed "'
"$DCRAWL" robots --agent x >/dev/null 2>&1
check "dcrawl robots: no FILE is a usage error (2)" [ $? -eq 2 ]
finish
