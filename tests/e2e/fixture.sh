#!/usr/bin/env bash
# e2e fixture: what a real site does that the bench site does not: a 503
# that works on the retry, a 500 that never does (retried fetch.retries
# times, then recorded), a gzip-encoded page whose links are found, a body
# over fetch.max_bytes (cut and flagged, its links still found), a
# redirect (recorded, its target fetched as a new URL), robots.txt and non-http links obeyed.
. "$(dirname "$0")/lib.sh"
python3 "$SRC/tests/e2e/fixture.py" "$WORK/port" &
FIX=$!
for _ in $(seq 1 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
port=$(cat "$WORK/port")
base=http://127.0.0.1:$port
out=$WORK/out
timeout 120 "$DCRAWL" crawl --depth 2 --out "$out" --set politeness.delay=0 --set noise.enabled=false \
    --set fetch.retries=1 --set fetch.max_bytes=1M "$base/" >"$WORK/crawl.log" 2>&1
rc=$?
cat "$WORK/crawl.log"
check "crawl exits 0" [ $rc -eq 0 ]
counts=$(curl -s "$base/_counts")
kill $FIX 2>/dev/null
echo "requests: $counts"
q() { python3 -c 'import json,sys
recs = {}
for l in open(sys.argv[1]):
    r = json.loads(l); recs[r["url"].split("/", 3)[3]] = r
print(eval(sys.argv[2], {"r": recs}))' "$out/merged/pages.jsonl" "$1"; }
check "503 then 200: recorded as 200" [ "$(q 'r["flaky"]["status"]')" = 200 ]
check "always 500: recorded as 500 after one retry" [ "$(q 'r["always500"]["status"]')" = 500 ]
check "always 500: requested exactly twice" [ "$(echo "$counts" | python3 -c 'import json,sys; print(json.load(sys.stdin)["/always500"])')" = 2 ]
check "gzip page: links found in the decoded body" [ "$(q 'r["from-gzip"]["status"]')" = 200 ]
check "gzip page: stored as sent, decoded length larger" [ "$(q 'r["gzip"]["decoded_length"] > r["gzip"]["length"]')" = True ]
check "big page: cut at fetch.max_bytes and flagged" [ "$(q 'r["big"]["truncated"] and r["big"]["length"] == 1048576')" = True ]
check "big page: links before the cut found" [ "$(q 'r["from-big"]["status"]')" = 200 ]
check "redirect: 302 recorded with its target" [ "$(q 'r["redirect"]["status"] == 302 and r["redirect"]["redirect_to"].endswith("/target")')" = True ]
check "redirect: target fetched as its own URL, same depth" [ "$(q 'r["target"]["status"] == 200 and r["target"]["depth"] == r["redirect"]["depth"]')" = True ]
check "robots.txt: /private/x not requested" [ "$(echo "$counts" | python3 -c 'import json,sys; print("/private/x" in json.load(sys.stdin))')" = False ]
check "summary counts the retries" grep -q "retries 2" "$WORK/crawl.log"
finish
