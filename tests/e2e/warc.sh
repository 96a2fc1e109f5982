#!/usr/bin/env bash
# e2e warc: every WARC file a crawl writes (per node and merged) is read by
# a third-party reader (npm warcio) with every record's digests verified,
# and the response (and revisit) records' WARC-Target-URI set equals
# pages.jsonl's URLs; content duplicates are revisit records.
. "$(dirname "$0")/lib.sh"
npmdir=$WORK/npm
mkdir -p "$npmdir"
cp "$SRC/tests/e2e/package.json" "$SRC/tests/e2e/package-lock.json" "$npmdir/"
(cd "$npmdir" && timeout 300 npm ci --no-audit --no-fund >npm.log 2>&1) ||
    { cat "$npmdir/npm.log"; fail "npm ci warcio"; finish; }
cp "$SRC/tests/e2e/warc-check.mjs" "$npmdir/"
S=$(site 10 200) || exit 1
serve "$S" || exit 1
out=$WORK/out
timeout 300 "$DCRAWL" crawl --seeds "$S/roots.txt" --depth 2 --out "$out" -q \
    --set politeness.delay=0 --set noise.enabled=false >"$WORK/crawl.log" 2>&1
check "crawl exits 0" [ $? -eq 0 ]
serve_stop
node "$npmdir/warc-check.mjs" "$out"/depth-*/*.warc.gz >"$WORK/pernode.uris" 2>"$WORK/pernode.err"
check "warcio reads every per-node WARC, all digests verified" [ $? -eq 0 ]
cat "$WORK/pernode.err"
node "$npmdir/warc-check.mjs" "$out"/merged/*.warc.gz >"$WORK/merged.uris" 2>"$WORK/merged.err"
check "warcio reads every merged WARC, all digests verified" [ $? -eq 0 ]
cat "$WORK/merged.err"
jsonl_urls() { python3 -c 'import json,sys
for p in sys.argv[1:]:
    for l in open(p):
        r = json.loads(l)
        if r.get("warc_record_id"): print(r.get("final_url") or r["url"])' "$@" | sort; }
sed -n 's/^\(response\|revisit\) //p' "$WORK/pernode.uris" | sort >"$WORK/a"
jsonl_urls "$out"/depth-*/*.jsonl >"$WORK/b"
check "per-node: response URIs == pages.jsonl URLs ($(wc -l <"$WORK/a") vs $(wc -l <"$WORK/b"))" cmp -s "$WORK/a" "$WORK/b"
sed -n 's/^\(response\|revisit\) //p' "$WORK/merged.uris" | sort >"$WORK/c"
jsonl_urls "$out/merged/pages.jsonl" >"$WORK/d"
check "merged: response URIs == pages.jsonl URLs ($(wc -l <"$WORK/c") vs $(wc -l <"$WORK/d"))" cmp -s "$WORK/c" "$WORK/d"
check "responses were recorded" [ "$(wc -l <"$WORK/c")" -gt 300 ]
nrev=$(grep -c '^revisit ' "$WORK/merged.uris")
ndup=$(grep -c '"duplicate_of":"' "$out/merged/pages.jsonl")
check "content duplicates are revisit records read by warcio ($nrev revisits, $ndup duplicate_of)" [ "$nrev" -gt 0 -a "$nrev" -eq "$ndup" ]
finish
