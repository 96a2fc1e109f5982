#!/usr/bin/env bash
# e2e warc: every WARC file a crawl writes (per node and merged) is read by
# a third-party reader (npm warcio) with every record's digests verified,
# and the response (and revisit) records' WARC-Target-URI set equals
# pages.jsonl's URLs; content duplicates are revisit records; every page
# has a metadata record; index.cdxj leads to the right record for 100
# random URLs (checked with python's zlib, not dcrawl's reader); a second
# merge with --keep shortest-url and the conformance samples (--add) keeps
# the valid samples, reports the broken ones, and passes warcio too.
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
nmeta=$(python3 -c 'import gzip,sys
n=0
for p in sys.argv[1:]:
    n+=gzip.open(p).read().count(b"\r\nWARC-Type: metadata\r\n")
print(n)' "$out"/merged/*.warc.gz)
nrec=$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("warc_record_id")))' "$out/merged/pages.jsonl")
check "one metadata record per page with records ($nmeta vs $nrec)" [ "$nmeta" -eq "$nrec" ]
python3 - "$out/merged" >"$WORK/cdxj.log" 2>&1 <<'PY'
import json, random, sys, zlib
d = sys.argv[1]
idx = {}
prev = None
for line in open(d + "/index.cdxj"):
    assert prev is None or prev <= line, "index.cdxj not sorted"
    prev = line
    key, ts, js = line.split(" ", 2)
    assert len(ts) == 14 and ts.isdigit(), line
    j = json.loads(js)
    idx.setdefault(j["url"], []).append(j)
pages = [json.loads(l) for l in open(d + "/pages.jsonl")]
pages = [p for p in pages if p.get("warc_record_id")]
random.seed(7)
pick = random.sample(pages, min(100, len(pages)))
ok = 0
for p in pick:
    url = p.get("final_url") or p["url"]
    hits = idx.get(url)
    assert hits, "not in index.cdxj: " + url
    j = hits[-1]
    with open(d + "/" + j["filename"], "rb") as f:
        f.seek(int(j["offset"]))
        raw = f.read(int(j["length"]))
    z = zlib.decompressobj(31)
    rec = z.decompress(raw)
    assert z.eof and not z.unused_data, "not one whole gzip member: " + url
    head = rec.split(b"\r\n\r\n", 1)[0].decode("utf-8", "replace")
    fields = dict(l.split(": ", 1) for l in head.split("\r\n")[1:])
    assert fields["WARC-Target-URI"] == url, (url, fields["WARC-Target-URI"])
    assert fields["WARC-Record-ID"] == p["warc_record_id"], url
    assert fields["WARC-Type"] in ("response", "revisit"), url
    ok += 1
print("cdxj lookups ok:", ok)
PY
check "index.cdxj: 100 random URLs lead to their records ($(tail -1 "$WORK/cdxj.log"))" grep -q "lookups ok: 100" "$WORK/cdxj.log"
cat "$WORK/cdxj.log" | tail -3
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["pages"] > 300 and s["status"]["2xx"] > 0' "$out/merged/summary.json"
check "summary.json parses and counts pages" [ $? -eq 0 ]
samples="$SHARED/conformance/warc/samples"
adds=""
for f in "$samples"/*.warc*; do adds="$adds --add $f"; done
timeout 300 "$DCRAWL" merge "$out" --out "$WORK/m2" --keep shortest-url $adds \
    >"$WORK/m2.log" 2>&1
check "merge --keep shortest-url --add samples exits 0" [ $? -eq 0 ]
nbad=$(grep -c "file skipped" "$WORK/m2.log")
check "broken samples reported and skipped ($nbad)" [ "$nbad" -eq 4 ]
grep -q "8 foreign files added, 4 skipped" "$WORK/m2.log"
check "valid samples merged" [ $? -eq 0 ]
node "$npmdir/warc-check.mjs" "$WORK"/m2/*.warc.gz >"$WORK/m2.uris" 2>"$WORK/m2.err"
check "warcio reads the merge with samples, all digests verified" [ $? -eq 0 ]
cat "$WORK/m2.err"
grep -q "^response http://httpbin.org/post" "$WORK/m2.uris"
check "a sample's response is in the merged output" [ $? -eq 0 ]
finish
