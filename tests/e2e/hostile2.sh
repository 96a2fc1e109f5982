#!/usr/bin/env bash
# e2e hostile2: more hostile servers (hostile2_server.py, each on its own
# free port of 127.0.0.1, so each is its own robots.txt host), crawled with
# short limits (fetch.timeout 4 s, connect_timeout 2 s, low-speed 100 B/s
# over 2 s, no retries) next to normal pages that must still be fetched:
#   10,000 Set-Cookie headers -> "response header block over 256 KiB";
#   a 1 MiB Location header -> "response header line too long";
#   a 100 MiB robots.txt -> cut at 500 KiB, its rules obeyed, the server
#   did not get to send it all;
#   a sitemap index that lists itself (and one that lists it back) -> each
#   sitemap fetched once, the page it lists crawled;
#   HTTP/2 HEADERS + endless CONTINUATION frames -> nghttp2's error;
#   a TLS server that reads the ClientHello and never answers -> each
#   connection ends at fetch.connect_timeout, the page skipped with
#   "robots.txt unreachable: SSL connection timeout".
# Peak RSS of that crawl (peak_rss.py) against a control crawl of the
# normal pages only. Then the HTTP/2 SETTINGS flood in a crawl of its own,
# twice (/page: the server never reads the client's ACKs; /drain: it reads
# them): the fetcher's small send buffer makes nghttp2's limit on queued
# ACKs end the connection after some hundred KiB, and a transfer that
# keeps one libcurl call reading for 2 s is ended with its connection shut
# down ("frame flood"). Asserted: each flood connection lasted at most
# fetch.timeout + 2 s (the server's clock), the page recorded with a clear
# error, the normal page of the crawl fetched, and the crawl's peak RSS
# within 32 MiB of the control crawl.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3   # Debian's, with python3-hpack (scripts/deps.sh)
/usr/bin/python3 -c 'import hpack' 2>/dev/null || { fail "python3-hpack is installed (scripts/deps.sh)"; finish; }
pki=$WORK/pki
mkdir -p "$pki"
(
    cd "$pki" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
        -subj "/CN=dcrawl test CA" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" &&
    openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=127.0.0.1" &&
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >srv.ext &&
    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile srv.ext -out srv.pem
) >"$WORK/openssl.log" 2>&1
check "openssl made a CA and a server certificate" [ -s "$pki/srv.pem" ]
(close_fds; exec $PY "$SRC/tests/e2e/hostile2_server.py" "$WORK/ports" "$pki/srv.pem" "$pki/srv.key") \
    >"$WORK/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/ports" ] && break; sleep 0.1; done
[ -s "$WORK/ports" ] || { cat "$WORK/server.log"; fail "hostile server started"; finish; }
eval "$(python3 -c 'import json,sys
for k, v in json.load(open(sys.argv[1])).items(): print("%s=%d" % (k, v))' "$WORK/ports")"
plain=http://127.0.0.1:$plain
SETS=(--set politeness.delay=0 --set noise.enabled=false --set fetch.retries=0
      --set fetch.timeout=4 --set fetch.connect_timeout=2 --set fetch.low_speed_limit=100
      --set fetch.low_speed_time=2 --set "fetch.ca_file=$pki/ca.pem")
crawl() { # crawl NAME SEED... -> $WORK/NAME/{out,log,rss}, sets rc and ms
    local name=$1; shift
    local t0
    t0=$(date +%s%N)
    timeout 120 python3 "$SRC/tests/e2e/peak_rss.py" "$WORK/$name.rss" "$DCRAWL" crawl --depth 2 \
        --out "$WORK/$name" "${SETS[@]}" "$@" >"$WORK/$name.log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "crawl $name: exit $rc in $ms ms, $(tr '\n' ' ' <"$WORK/$name.rss")"
}
rss() { awk '/^dcrawl_kb/ {print $2}' "$WORK/$1.rss"; }

crawl control "$plain/ok"
check "control crawl exits 0" [ $rc -eq 0 ]
crawl main "$plain/ok" "$plain/cookies" "$plain/longloc" "http://127.0.0.1:$robots/" \
    "http://127.0.0.1:$sitemap/" "https://127.0.0.1:$h2cont/page" "https://127.0.0.1:$tlsstall/page"
cat "$WORK/main.log"
check "crawl of the hostile servers exits 0" [ $rc -eq 0 ]
# tlsstall: robots.txt tried 3 times (2 s each, 1 s and 2 s apart) -> ~9 s
check "crawl of the hostile servers ends in < 40 s" [ "$ms" -lt 40000 ]
curl -s "$plain/_counts" >"$WORK/counts.json"
curl -s "$plain/_log" >"$WORK/notes.json"
echo "requests: $(cat "$WORK/counts.json")"
echo "server notes: $(cat "$WORK/notes.json")"

# q OUT EXPR: EXPR over r (pages.jsonl by "port path"), n (request counts
# by "server path"), s (server notes)
q() { python3 -c 'import json,sys
r = {}
for l in open(sys.argv[1]):
    x = json.loads(l); h = x["url"].split("/", 3)
    r[h[2].split(":")[1] + " /" + h[3]] = x
n = json.load(open(sys.argv[2])); s = json.load(open(sys.argv[3]))
print(eval(sys.argv[4], {"r": r, "n": n, "s": s, "P": dict(json.load(open(sys.argv[5])))}))' \
    "$WORK/$1/merged/pages.jsonl" "$WORK/counts.json" "$WORK/notes.json" "$2" "$WORK/ports"; }
is() { [ "$(q main "$1")" = True ]; }
pg() { echo "r[\"%d $2\" % P[\"$1\"]]"; } # pg SERVER PATH -> its record

check "normal pages of the crawl fetched (seed and its link)" \
    is "$(pg plain /ok)['status'] == 200 and $(pg plain /ok2)['status'] == 200"
check "10,000 Set-Cookie headers: 'response header block over 256 KiB'" \
    is "$(pg plain /cookies)['status'] == 0 and $(pg plain /cookies)['error'] == 'response header block over 256 KiB'"
check "1 MiB Location: 'response header line too long', nothing admitted from it" \
    is "$(pg plain /longloc)['status'] == 0 and $(pg plain /longloc)['error'].startswith('response header line too long') and len([k for k in n if k.startswith('plain /aaaa')]) == 0"
check "100 MiB robots.txt: requested once, the server did not get to send it all" \
    is "n['robots /robots.txt'] == 1 and s['robots /robots.txt']['sent'] < 50 << 20"
check "100 MiB robots.txt: its rules obeyed (Disallow: /private), the other link fetched" \
    is "$(pg robots /private/x)['skipped'] == 'disallowed by robots.txt' and 'robots /private/x' not in n and $(pg robots /fine)['status'] == 200"
check "sitemap index listing itself: each sitemap fetched once" \
    is "n['sitemap /index.xml'] == 1 and n['sitemap /index-b.xml'] == 1 and n['sitemap /pages.xml'] == 1"
check "sitemap index listing itself: the page it lists crawled" \
    is "$(pg sitemap /from-sitemap)['status'] == 200"
check "HTTP/2 endless CONTINUATION: recorded with nghttp2's error, within fetch.timeout" \
    is "$(pg h2cont /page)['status'] == 0 and 'CONTINUATION' in $(pg h2cont /page)['error'] and n['h2cont /robots.txt'] == 1"
check "TLS handshake stall: page skipped, robots.txt unreachable: SSL connection timeout" \
    is "$(pg tlsstall /page)['skipped'] == 'robots.txt unreachable: SSL connection timeout'"
check "TLS handshake stall: every connection ended within connect_timeout + 1.5 s" \
    is "[v['seconds'] for k, v in s.items() if k.startswith('tlsstall')] and all(v['seconds'] <= 3.5 for k, v in s.items() if k.startswith('tlsstall'))"
ctl=$(rss control)
main=$(rss main)
echo "peak RSS: control $ctl KiB, hostile crawl $main KiB"
check "peak RSS of the hostile crawl within 64 MiB of the control crawl, under 200 MiB" \
    [ "${ctl:-0}" -gt 0 -a "${main:-0}" -gt 0 -a $((main - ctl)) -lt $((64 * 1024)) -a "$main" -lt $((200 * 1024)) ]

# In an ASan build freed memory waits in ASan's quarantine (256 MiB by
# default) before it is reused, and each flood frame frees some, so the
# peak would measure the quarantine: it is kept to 8 MiB for this crawl
# (no effect on other builds).
# The flood holds libcurl (and so the node's other transfers) for up to the
# fetcher's call cap; the normal page keeps the default low-speed window
# (10 s), longer than that hold, as any transfer has unless low_speed_time
# is set very short.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8 \
    crawl flood "https://127.0.0.1:$h2settings/page" "https://127.0.0.1:$h2settings/drain" "$plain/ok" \
    --set fetch.low_speed_time=10
check "HTTP/2 SETTINGS flood: the crawl ends (< 40 s)" [ "$ms" -lt 40000 -a $rc -le 1 ]
curl -s "$plain/_log" >"$WORK/notes.json"
echo "server notes: $(cat "$WORK/notes.json")"
# which ends it first depends on the timing: nghttp2's limit on queued
# SETTINGS ACKs once the socket is full ("Failed sending data to the
# peer") or the fetcher's 2 s cap on one call ("frame flood")
for p in /page /drain; do
    check "HTTP/2 SETTINGS flood $p: recorded with a clear error" \
        [ "$(q flood "$(pg h2settings $p)['status'] == 0 and ('frame flood' in $(pg h2settings $p)['error'] or 'Failed sending' in $(pg h2settings $p)['error'])")" = True ]
done
# (the two pages may share one HTTP/2 connection: the server notes one
# line per connection, under the first path it was asked for)
check "HTTP/2 SETTINGS flood: every flood connection lasted at most fetch.timeout + 2 s" \
    [ "$(q flood "[v for k, v in s.items() if k.startswith('h2settings')] != [] and all(v['seconds'] <= 6 for k, v in s.items() if k.startswith('h2settings'))")" = True ]
check "HTTP/2 SETTINGS flood: the normal page of the crawl fetched" \
    [ "$(q flood "$(pg plain /ok)['status'] == 200")" = True ]
flood=$(rss flood)
echo "peak RSS: SETTINGS flood crawl $flood KiB (control $ctl KiB)"
check "HTTP/2 SETTINGS flood: peak RSS within 32 MiB of the control crawl" \
    [ "${flood:-0}" -gt 0 -a $((${flood:-0} - ${ctl:-0})) -lt $((32 * 1024)) ]
finish
