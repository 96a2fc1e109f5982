#!/usr/bin/env bash
# e2e hostile: servers that misbehave never stall the node, and the HTTP
# edge cases are recorded as they happened. The fixture server (fixture.py,
# its /h/ routes, loopback, free port) logs every request and, for the
# hostile handlers, how many bytes it sent and how long the client stayed.
# One crawl of /h/ with short limits (timeout 4 s, low-speed 100 B/s over
# 2 s, max_bytes 4M, max_redirects 3), then one check (or a few) per
# behaviour against the server's log and pages.jsonl / the WARC:
#   drip 1 B/s -> low-speed timeout; 400 B/s forever -> total timeout;
#   accept and never answer -> ends at the low-speed limit; 60 MiB page ->
#   cut at max_bytes; gzip bomb (256 MiB) -> decoded up to the cap, peak RSS
#   measured against a control crawl; broken chunking -> clear error;
#   redirect loop -> each hop once; endless redirect chain -> failed after
#   max_redirects hops; redirect to a seen URL -> nothing fetched; non-HTML
#   type -> recorded, not parsed; ISO-8859-1 / Shift_JIS / invalid bytes;
#   meta robots nofollow / noindex / none, rel=nofollow, rel=canonical,
#   meta refresh.
. "$(dirname "$0")/lib.sh"
python3 "$SRC/tests/e2e/fixture.py" "$WORK/port" --bomb &
FIX=$!
trap 'kill $FIX 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "fixture server did not start"; exit 1; }
port=$(cat "$WORK/port")
base=http://127.0.0.1:$port
out=$WORK/out
SETS=(--set politeness.delay=0 --set politeness.host_connections=8 --set noise.enabled=false
      --set fetch.retries=0 --set fetch.max_bytes=4M --set parse.max_bytes=1M
      --set fetch.timeout=4 --set fetch.connect_timeout=2 --set fetch.low_speed_limit=100
      --set fetch.low_speed_time=2 --set fetch.max_redirects=3)
t0=$(date +%s%N)
timeout 60 "$DCRAWL" crawl --depth 2 --out "$out" "${SETS[@]}" "$base/h/" >"$WORK/crawl.log" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$WORK/crawl.log"
echo "crawl took $ms ms"
check "crawl exits 0" [ $rc -eq 0 ]
check "crawl of every hostile server ends in < 20 s" [ "$ms" -lt 20000 ]
counts=$(curl -s "$base/_counts")
notes=$(curl -s "$base/_log")
echo "requests: $counts"
echo "server notes: $notes"
echo "$counts" >"$WORK/counts.json"
echo "$notes" >"$WORK/notes.json"

# q EXPR: EXPR over r (pages.jsonl by path), n (request counts by path),
# s (server notes by path)
q() { python3 -c 'import json,sys
recs = {}
for l in open(sys.argv[1]):
    x = json.loads(l); recs["/" + x["url"].split("/", 3)[3]] = x
n = json.load(open(sys.argv[2])); s = json.load(open(sys.argv[3]))
print(eval(sys.argv[4], {"r": recs, "n": n, "s": s}))' \
    "$out/merged/pages.jsonl" "$WORK/counts.json" "$WORK/notes.json" "$1"; }
is() { [ "$(q "$1")" = True ]; }

check "drip 1 B/s: ended by the low-speed limit" is '"too slow" in r["/h/drip"]["error"] and r["/h/drip"]["status"] == 0'
check "drip 1 B/s: server saw the client leave after ~2 s, <= 4 bytes sent" \
    is '1.5 <= s["/h/drip"]["seconds"] <= 5 and s["/h/drip"]["sent"] <= 4'
check "400 B/s forever: ended by fetch.timeout (4 s)" \
    is '"timed out" in r["/h/slowforever"]["error"] and 3.5 <= s["/h/slowforever"]["seconds"] <= 7'
check "accepts, never answers: ended within 5 s, recorded as failed" \
    is 'r["/h/silent"]["status"] == 0 and r["/h/silent"]["error"] and s["/h/silent"]["seconds"] <= 5'
check "60 MiB page: cut at fetch.max_bytes, flagged truncated" \
    is 'r["/h/huge"]["truncated"] and r["/h/huge"]["length"] == 4 << 20 and r["/h/huge"]["status"] == 200'
check "60 MiB page: the server did not get to send it all" is 's["/h/huge"]["sent"] < 60 << 20'
check "60 MiB page: the link before the cut followed" is 'n.get("/h/from-huge") == 1'
check "gzip bomb: stored as sent, decoded only up to the cap, truncated" \
    is 'r["/h/bomb"]["length"] == s["/h/bomb"]["compressed"] and r["/h/bomb"]["decoded_length"] == 4 << 20 and r["/h/bomb"]["truncated"]'
check "gzip bomb: its link (before the cap) followed" is 'n.get("/h/from-bomb") == 1'
check "broken chunked encoding: clear error" \
    is 'r["/h/badchunk"]["status"] == 0 and "chunk" in r["/h/badchunk"]["error"]'
check "redirect loop: each hop requested once" is 'n["/h/loop-a"] == 1 and n["/h/loop-b"] == 1'
check "redirect loop: both hops recorded (302, redirect_to, same depth)" \
    is 'r["/h/loop-a"]["status"] == 302 and r["/h/loop-a"]["redirect_to"].endswith("/h/loop-b") and r["/h/loop-b"]["redirect_to"].endswith("/h/loop-a") and r["/h/loop-a"]["depth"] == r["/h/loop-b"]["depth"] == 1'
check "redirect chain: hops 0..3 requested once, hop 4 never" \
    is 'all(n.get("/h/chain/%d" % i) == 1 for i in range(4)) and "/h/chain/4" not in n'
check "redirect chain: the 4th hop recorded as failed (too many redirects)" \
    is 'r["/h/chain/3"]["error"] == "too many redirects" and r["/h/chain/2"]["error"] is None and r["/h/chain/3"]["depth"] == 1'
check "redirect to a URL already seen: costs nothing" \
    is 'r["/h/gone-redirect"]["redirect_to"] == "'"$base"'/h/" and n["/h/"] == 1'
check "redirect: the 302 is a WARC response record" python3 -c 'import gzip,json,sys
for l in open(sys.argv[1]):
    x = json.loads(l)
    if x["url"].endswith("/h/loop-a"):
        with open(sys.argv[2] + "/merged/" + x["warc_file"], "rb") as f:
            f.seek(x["warc_offset"]); rec = gzip.decompress(f.read(x["warc_response_length"]))
        sys.exit(0 if b"WARC-Type: response" in rec and b"302" in rec and b"Location: /h/loop-b" in rec else 1)
sys.exit(1)' "$out/merged/pages.jsonl" "$out"
check "application/pdf: recorded, its links not parsed" \
    is 'r["/h/document"]["status"] == 200 and r["/h/document"]["content_type"] == "application/pdf" and "/h/from-pdf" not in n'
check "charset from the header (ISO-8859-1): link converted to UTF-8" is 'n.get("/h/caf%C3%A9") == 1'
check "charset from <meta> (Shift_JIS): link converted to UTF-8" is 'n.get("/h/%E6%97%A5%E6%9C%AC") == 1'
check "invalid bytes: page recorded, its link still found" is 'r["/h/badbytes"]["status"] == 200 and n.get("/h/after-bad") == 1'
check "meta robots nofollow: no link followed" is 'r["/h/nofollow"]["status"] == 200 and "/h/nf-target" not in n'
check "meta robots noindex: flagged, links followed" is 'r["/h/noindex"]["noindex"] and n.get("/h/ni-target") == 1 and not r["/h/nofollow"]["noindex"]'
check "meta dcrawl none: noindex and nofollow" is 'r["/h/none"]["noindex"] and "/h/none-target" not in n'
check "rel=nofollow: that link skipped, the other followed" is '"/h/rnf-target" not in n and n.get("/h/rf-target") == 1'
check "rel=canonical recorded, not fetched" \
    is 'r["/h/canon"]["canonical"] == "'"$base"'/h/canonical-page" and "/h/canonical-page" not in n'
check "meta refresh recorded and its target fetched" \
    is 'r["/h/refresh"]["refresh"] == "'"$base"'/h/refresh-target" and r["/h/refresh-target"]["depth"] == 2'
check "nothing requested twice" is 'all(v == 1 for k, v in n.items() if k.startswith("/h/"))'

# Peak memory: the bomb alone against a control page, same settings. A
# decoder that ignored the cap would need >= 256 MiB more.
peak() { # peak LOG URL -> max RSS of the crawl (KiB)
    python3 -c 'import resource,subprocess,sys
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"), timeout=60)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -1)' \
        "$1" timeout 60 "$DCRAWL" crawl --depth 0 --out "$WORK/$(basename "$1" .log)" "${SETS[@]}" "$2"
}
ctl=$(peak "$WORK/control.log" "$base/h/canon")
bomb=$(peak "$WORK/bomb.log" "$base/h/bomb")
echo "peak RSS: control $ctl KiB, gzip bomb $bomb KiB (fetch.max_bytes 4 MiB, bomb 256 MiB decoded)"
check "gzip bomb: peak RSS within 8 x fetch.max_bytes of a control crawl" \
    [ "$ctl" -gt 0 -a "$bomb" -gt 0 -a $((bomb - ctl)) -lt $((8 * 4096)) ]
# The silent server again with the low-speed limit out of the way: the
# total timeout (3 s here) ends it.
t0=$(date +%s%N)
timeout 60 "$DCRAWL" crawl --depth 0 --out "$WORK/silent" "${SETS[@]}" --set fetch.timeout=3 \
    --set fetch.low_speed_time=60 "$base/h/silent" >"$WORK/silent.log" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
curl -s "$base/_log" >"$WORK/notes.json"
check "accepts, never answers (no low-speed limit): ended by fetch.timeout in $ms ms" \
    bash -c "[ $ms -lt 10000 ] && grep -q '\"error\":\"Operation timed out after 3' '$WORK/silent/merged/pages.jsonl'"
check "accepts, never answers: no page got a response, so exit 1 and the seed's error on stderr" \
    bash -c "[ $rc -eq 1 ] && grep -q '^dcrawl: $base/h/silent: Operation timed out after 3' '$WORK/silent.log'"
check "accepts, never answers: the server saw the client leave after ~3 s" \
    is '2.5 <= s["/h/silent"]["seconds"] <= 5'
finish
