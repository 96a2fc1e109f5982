#!/usr/bin/env bash
# e2e tls: HTTPS crawls and seeds that cannot be reached, all on loopback.
# The test makes a CA and a server certificate (SAN IP:127.0.0.1) with
# openssl and serves an 18-page site with a private nginx over TLS with
# http2 on a free port of 127.0.0.1 (access log: $server_protocol per
# request). Then:
#   1. fetch.ca_file = the CA: the whole site is crawled over HTTP/2 (every
#      request in nginx's log is HTTP/2.0, every response record of the
#      WARC says HTTP/2), warcio reads the per-node and merged WARCs with
#      every digest verified; the robots.txt-disallowed link has a
#      "skipped" line that merge keeps and that has no WARC record; a
#      later skipped line of a fetched URL does not replace it in merge;
#      fetch.ca_path (a hashed directory) works too.
#   2. no CA: the certificate error is in pages.jsonl (error and skipped:
#      robots.txt unreachable), in the summary (errors, most frequent) and
#      in the per-seed-host line on stderr; exit status 1. The same with
#      robots.obey=false: the page's own request fails with that error.
#   3. a refused seed (a closed loopback port): status 0 and libcurl's
#      text, the summary, exit 1; the same with `dcrawl seed` + `dcrawl
#      node --exit-when-idle`.
#   4. an unresolvable seed (x.invalid), crawled inside a new network
#      namespace (unshare -n: no interface but a down lo, so the resolver's
#      packets cannot leave; the embedded Redis is on a unix socket):
#      "Could not resolve host", exit 1.
#   5. a good seed and a refused one: exit 0, the failure still listed.
. "$(dirname "$0")/lib.sh"
for t in openssl nginx unshare node npm; do
    command -v "$t" >/dev/null || { fail "$t is installed (scripts/deps.sh)"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n for the resolver case)"; finish; }
npmdir=$WORK/npm
mkdir -p "$npmdir"
cp "$SRC/tests/e2e/package.json" "$SRC/tests/e2e/package-lock.json" "$SRC/tests/e2e/warc-check.mjs" "$npmdir/"
(cd "$npmdir" && timeout 300 npm ci --no-audit --no-fund >npm.log 2>&1) ||
    { cat "$npmdir/npm.log"; fail "npm ci warcio"; finish; }

# --- CA, server certificate
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
openssl verify -CAfile "$pki/ca.pem" "$pki/srv.pem" >>"$WORK/openssl.log" 2>&1
check "the server certificate verifies against the CA (openssl verify)" [ $? -eq 0 ]

# --- the site: / -> 4 sections -> 3 pages each -> /deep/1.html (depth 3);
# /private/ is linked from / and disallowed by robots.txt
site=$WORK/site
python3 - "$site" "$WORK/expected.txt" <<'PY'
import os, sys
root, exp = sys.argv[1], sys.argv[2]
pages = {}
secs = ["s%d" % i for i in range(1, 5)]
pages["/"] = ["/%s/" % s for s in secs] + ["/private/secret.html"]
for s in secs:
    pages["/%s/" % s] = ["/%s/p%d.html" % (s, k) for k in range(1, 4)] + ["/"]
    for k in range(1, 4):
        pages["/%s/p%d.html" % (s, k)] = ["/%s/" % s]
pages["/s1/p1.html"].append("/deep/1.html")
pages["/deep/1.html"] = []
pages["/private/secret.html"] = []
for path, links in pages.items():
    f = os.path.join(root, path.lstrip("/"), "index.html" if path.endswith("/") else "")
    f = f.rstrip("/") if not path.endswith("/") else f
    os.makedirs(os.path.dirname(f), exist_ok=True)
    body = "".join('<p>Text of %s about topic %d. <a href="%s">%s</a></p>\n' % (path, i, l, l)
                   for i, l in enumerate(links))
    open(f, "w").write("<!doctype html><title>%s</title><h1>%s</h1>\n%s" % (path, path, body))
open(os.path.join(root, "robots.txt"), "w").write("User-agent: *\nDisallow: /private/\n")
with open(exp, "w") as o:
    for p in sorted(pages):
        if not p.startswith("/private/"):
            o.write(p + "\n")
PY
chmod -R a+rX "$site" "$pki"
nexp=$(wc -l <"$WORK/expected.txt")

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(freeport)
CLOSED=$(freeport) # bound and closed again: nothing listens there
ng=$WORK/nginx-tls
mkdir -p "$ng/tmp"
cat >"$ng/nginx.conf" <<CONF
worker_processes 1;
pid $ng/nginx.pid;
error_log $ng/error.log;
events { worker_connections 128; }
http {
  include /etc/nginx/mime.types;
  log_format proto '\$server_protocol \$request_method \$request_uri \$status';
  access_log $ng/access.log proto;
  client_body_temp_path $ng/tmp; proxy_temp_path $ng/tmp; fastcgi_temp_path $ng/tmp;
  uwsgi_temp_path $ng/tmp; scgi_temp_path $ng/tmp;
  server {
    listen 127.0.0.1:$PORT ssl http2;
    ssl_certificate $pki/srv.pem;
    ssl_certificate_key $pki/srv.key;
    root $site;
    index index.html;
  }
}
CONF
(close_fds; exec nginx -c "$ng/nginx.conf" -p "$ng") >"$WORK/nginx.log" 2>&1 ||
    { cat "$WORK/nginx.log" "$ng/error.log"; fail "nginx starts"; finish; }
trap '[ -f "$ng/nginx.pid" ] && kill "$(cat "$ng/nginx.pid")" 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 50); do [ -s "$ng/nginx.pid" ] && break; sleep 0.1; done
BASE=https://127.0.0.1:$PORT
curl -s --cacert "$pki/ca.pem" --http2 -o /dev/null -w '%{http_version}' "$BASE/" >"$WORK/curl.txt"
check "nginx serves the site over TLS with HTTP/2 (curl: HTTP/$(cat "$WORK/curl.txt"))" [ "$(cat "$WORK/curl.txt")" = 2 ]
: >"$ng/access.log"

SETS=(--set politeness.delay=0 --set noise.enabled=false --set fetch.retries=0
      --set fetch.connect_timeout=5 --set fetch.timeout=20)
# jq-free reading of pages.jsonl: prints "url<TAB>status<TAB>error<TAB>skipped"
lines() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s\t%s\t%s\t%s" % (r["url"], r["status"], r.get("error"), r.get("skipped")))' "$1"; }

# --- 1. with the CA
out=$WORK/good
timeout 120 "$DCRAWL" crawl --depth 3 --out "$out" "${SETS[@]}" \
    --set fetch.ca_file="$pki/ca.pem" "$BASE/" >"$WORK/good.log" 2>&1
rc=$?
cat "$WORK/good.log"
check "with fetch.ca_file: exit 0" [ $rc -eq 0 ]
lines "$out/merged/pages.jsonl" >"$WORK/good.lines"
awk -F'\t' -v b="$BASE" '$2 == 200 { sub(b, "", $1); print $1 }' "$WORK/good.lines" | sort >"$WORK/good.fetched"
check "with fetch.ca_file: the whole site fetched, status 200 ($(wc -l <"$WORK/good.fetched") of $nexp)" \
    cmp -s "$WORK/good.fetched" "$WORK/expected.txt"
check "with fetch.ca_file: the disallowed link has a skipped line in merged/pages.jsonl" \
    grep -qxF "$BASE/private/secret.html	0	None	disallowed by robots.txt" "$WORK/good.lines"
check "merged/pages.jsonl: one line per URL, no other lines ($(wc -l <"$WORK/good.lines"))" \
    [ "$(wc -l <"$WORK/good.lines")" -eq $((nexp + 1)) ]
check "merged/summary.json: $((nexp + 1)) pages, 1 skipped" python3 -c 'import json,sys
s = json.load(open(sys.argv[1])); sys.exit(0 if s["pages"] == int(sys.argv[2]) and s["skipped"] == 1 else 1)' \
    "$out/merged/summary.json" $((nexp + 1))
nreq=$(wc -l <"$ng/access.log")
nh2=$(grep -c '^HTTP/2.0 GET ' "$ng/access.log")
check "nginx log: every request HTTP/2.0 ($nh2 of $nreq; pages + robots.txt = $((nexp + 1)))" \
    [ "$nreq" -eq $((nexp + 1)) -a "$nh2" -eq "$nreq" ]
check "nginx log: /private/ never requested" [ "$(grep -c ' /private/' "$ng/access.log")" -eq 0 ]
node "$npmdir/warc-check.mjs" "$out"/depth-*/*.warc.gz >"$WORK/pernode.uris" 2>"$WORK/pernode.err"
check "warcio reads every per-node WARC, all digests verified ($(tail -1 "$WORK/pernode.err"))" [ $? -eq 0 ]
node "$npmdir/warc-check.mjs" "$out"/merged/*.warc.gz >"$WORK/merged.uris" 2>"$WORK/merged.err"
check "warcio reads every merged WARC, all digests verified ($(tail -1 "$WORK/merged.err"))" [ $? -eq 0 ]
nresp=$(grep -c '^response ' "$WORK/merged.uris")
check "merged WARC: one response per fetched page ($nresp), none for the skipped URL" \
    [ "$nresp" -eq "$nexp" -a "$(grep -c '/private/' "$WORK/merged.uris")" -eq 0 ]
python3 - "$out"/merged/*.warc.gz >"$WORK/h2.log" 2>&1 <<'PY'
import gzip, sys
n = bad = 0
for p in sys.argv[1:]:
    data = gzip.open(p).read()
    for rec in data.split(b"WARC/1.1\r\n")[1:]:
        head, _, block = rec.partition(b"\r\n\r\n")
        if b"WARC-Type: response" not in head:
            continue
        n += 1
        if not block.startswith(b"HTTP/2 200"):
            bad += 1
print("responses", n, "not HTTP/2", bad)
sys.exit(0 if n and not bad else 1)
PY
check "merged WARC: every response record is an HTTP/2 response ($(cat "$WORK/h2.log"))" [ $? -eq 0 ]

# a "skipped" line of the same URL from another node, written later, does
# not replace the fetched copy in merge; a later fetched copy still does
# not lose to it either way round
mkdir -p "$out/depth-0"
python3 - "$out/merged/pages.jsonl" "$out/depth-0/other-00000.jsonl" "$BASE/" <<'PY'
import json, sys
src, dst, url = sys.argv[1:]
for l in open(src):
    r = json.loads(l)
    if r["url"] == url:
        break
r.update(status=0, error="Failed to connect", skipped="robots.txt unreachable: Failed to connect",
         fetched_at="2099-01-01T00:00:00.000Z", node="other", digest=None, warc_file=None,
         warc_offset=None, warc_length=None, warc_response_length=None, warc_record_id=None,
         outlinks=[])
r.pop("score", None)
open(dst, "w").write(json.dumps(r) + "\n")
PY
"$DCRAWL" merge "$out" --out "$WORK/remerge" >"$WORK/remerge.log" 2>&1
check "merge: exits 0 with a later skipped line of a fetched URL" [ $? -eq 0 ]
lines "$WORK/remerge/pages.jsonl" >"$WORK/remerge.lines"
check "merge: the fetched copy wins over the later skipped line" \
    eval 'grep -qxF "$BASE/	200	None	None" "$WORK/remerge.lines" && [ "$(grep -c "^$BASE/	" "$WORK/remerge.lines")" -eq 1 ]'

# fetch.ca_path: a directory of hashed certificates works like ca_file
mkdir -p "$WORK/cadir" && cp "$pki/ca.pem" "$WORK/cadir/" && openssl rehash "$WORK/cadir" >/dev/null 2>&1
timeout 60 "$DCRAWL" crawl --depth 0 --out "$WORK/capath" "${SETS[@]}" \
    --set fetch.ca_path="$WORK/cadir" "$BASE/" >"$WORK/capath.log" 2>&1
rc=$?
check "fetch.ca_path (openssl rehash dir): the seed fetched, exit 0" \
    eval '[ $rc -eq 0 ] && lines "$WORK/capath/merged/pages.jsonl" | grep -qxF "$BASE/	200	None	None"'

# --- 2. without the CA
err_cert="SSL certificate problem: unable to get local issuer certificate"
out=$WORK/nocert
timeout 120 "$DCRAWL" crawl --depth 3 --out "$out" "${SETS[@]}" "$BASE/" >"$WORK/nocert.log" 2>"$WORK/nocert.err"
rc=$?
cat "$WORK/nocert.log" "$WORK/nocert.err"
check "no CA: exit 1" [ $rc -eq 1 ]
check "no CA: the per-seed-host line names the certificate error" \
    grep -qxF "dcrawl: $BASE/: robots.txt unreachable: $err_cert" "$WORK/nocert.err"
lines "$out/merged/pages.jsonl" >"$WORK/nocert.lines"
check "no CA: pages.jsonl has the seed with status 0, the error and the skipped reason" \
    grep -qxF "$BASE/	0	$err_cert	robots.txt unreachable: $err_cert" "$WORK/nocert.lines"
check "no CA: summary counts the URL as skipped for an unreachable robots.txt" \
    grep -q "0 disallowed by robots.txt rules, 1 because robots.txt was unreachable" "$WORK/nocert.log"
check "no CA: summary lists the error with its count and host" \
    grep -qE "^ +1  robots.txt unreachable: $err_cert \(e.g. 127.0.0.1:$PORT\)$" "$WORK/nocert.log"
out=$WORK/nocert-norobots
timeout 120 "$DCRAWL" crawl --depth 3 --out "$out" "${SETS[@]}" --set robots.obey=false \
    "$BASE/" >"$WORK/nocert2.log" 2>"$WORK/nocert2.err"
rc=$?
cat "$WORK/nocert2.log" "$WORK/nocert2.err"
check "no CA, robots.obey=false: exit 1" [ $rc -eq 1 ]
check "no CA, robots.obey=false: the per-seed-host line is the page's own error" \
    grep -qxF "dcrawl: $BASE/: $err_cert" "$WORK/nocert2.err"
lines "$out/merged/pages.jsonl" >"$WORK/nocert2.lines"
check "no CA, robots.obey=false: pages.jsonl: status 0, the error, not skipped" \
    grep -qxF "$BASE/	0	$err_cert	None" "$WORK/nocert2.lines"
check "no CA, robots.obey=false: summary lists the error" \
    grep -qE "^ +1  $err_cert \(e.g. 127.0.0.1:$PORT\)$" "$WORK/nocert2.log"

# --- 3. refused
REFUSED=http://127.0.0.1:$CLOSED/
out=$WORK/refused
timeout 120 "$DCRAWL" crawl --depth 1 --out "$out" "${SETS[@]}" --set robots.obey=false \
    "$REFUSED" >"$WORK/refused.log" 2>"$WORK/refused.err"
rc=$?
cat "$WORK/refused.log" "$WORK/refused.err"
check "refused: exit 1" [ $rc -eq 1 ]
lines "$out/merged/pages.jsonl" >"$WORK/refused.lines"
check "refused: pages.jsonl: status 0 and libcurl's connect error" \
    grep -qE "^$REFUSED	0	Failed to connect to 127.0.0.1 port $CLOSED after [0-9]+ ms: (Couldn't connect to server|Connection refused)	None$" "$WORK/refused.lines"
check "refused: the per-seed-host line" grep -qE "^dcrawl: $REFUSED: Failed to connect to 127.0.0.1 port $CLOSED " "$WORK/refused.err"
check "refused: summary groups it without host and port" \
    grep -qE "^ +1  Failed to connect to HOST port N after N ms: .* \(e.g. 127.0.0.1:$CLOSED\)$" "$WORK/refused.log"

# a seed over scope.host_budget is not queued: counted on the seeds line
timeout 60 "$DCRAWL" crawl --depth 0 --out "$WORK/budget" "${SETS[@]}" --set robots.obey=false \
    --set scope.host_budget=1 "${REFUSED}a" "${REFUSED}b" >"$WORK/budget.log" 2>&1
check "two seeds of one host, scope.host_budget=1: one queued, one counted as over the budget" \
    eval 'grep -q "^seeds: 1 accepted, 0 already seen, 0 rejected, 1 over scope.host_budget" "$WORK/budget.log" &&
          [ "$(wc -l <"$WORK/budget/merged/pages.jsonl")" -eq 1 ]'
# the same through `dcrawl seed` + `dcrawl node --exit-when-idle`
redis_start refused || { fail "redis-server starts"; finish; }
"$DCRAWL" seed --redis "$R" --depth 1 - <<<"$REFUSED" >/dev/null 2>&1
timeout 120 "$DCRAWL" node --redis "$R" --out "$WORK/refused-node" --exit-when-idle "${SETS[@]}" \
    --set robots.obey=false >"$WORK/refused-node.log" 2>"$WORK/refused-node.err"
rc=$?
cat "$WORK/refused-node.err"
check "refused, dcrawl node --exit-when-idle: exit 1 and the seed host's line" \
    eval '[ $rc -eq 1 ] && grep -qE "^dcrawl: $REFUSED: Failed to connect to 127.0.0.1 port $CLOSED " "$WORK/refused-node.err"'
"$DCRAWL" node --redis "$R" --out "$WORK/refused-node2" --exit-when-idle "${SETS[@]}" >"$WORK/refused-node2.log" 2>&1
check "a node with nothing left to do exits 0" [ $? -eq 0 ]

# --- 4. unresolvable, in a network namespace of its own
out=$WORK/unresolved
timeout 120 unshare -n "$DCRAWL" crawl --depth 1 --out "$out" "${SETS[@]}" \
    http://x.invalid/ >"$WORK/unres.log" 2>"$WORK/unres.err"
rc=$?
cat "$WORK/unres.log" "$WORK/unres.err"
check "unresolvable: exit 1" [ $rc -eq 1 ]
lines "$out/merged/pages.jsonl" >"$WORK/unres.lines"
check "unresolvable: pages.jsonl: status 0, robots.txt unreachable: Could not resolve host" \
    grep -qxF "http://x.invalid/	0	Could not resolve host: x.invalid	robots.txt unreachable: Could not resolve host: x.invalid" "$WORK/unres.lines"
check "unresolvable: the per-seed-host line" \
    grep -qxF "dcrawl: http://x.invalid/: robots.txt unreachable: Could not resolve host: x.invalid" "$WORK/unres.err"
check "unresolvable: summary lists it with the host taken out" \
    grep -qE "^ +1  robots.txt unreachable: Could not resolve host: HOST \(e.g. x.invalid\)$" "$WORK/unres.log"

# --- 5. one good seed, one refused
out=$WORK/mixed
timeout 120 "$DCRAWL" crawl --depth 3 --out "$out" "${SETS[@]}" --set fetch.ca_file="$pki/ca.pem" \
    "$BASE/" "$REFUSED" >"$WORK/mixed.log" 2>"$WORK/mixed.err"
rc=$?
cat "$WORK/mixed.log" "$WORK/mixed.err"
check "mixed: exit 0" [ $rc -eq 0 ]
check "mixed: no per-seed-host lines on stderr" [ ! -s "$WORK/mixed.err" ]
lines "$out/merged/pages.jsonl" >"$WORK/mixed.lines"
check "mixed: the good site is fetched ($(grep -c '	200	' "$WORK/mixed.lines") pages)" \
    [ "$(grep -c "^$BASE/.*	200	None	None$" "$WORK/mixed.lines")" -eq "$nexp" ]
check "mixed: the refused seed is listed in pages.jsonl" \
    grep -qE "^$REFUSED	0	Failed to connect to 127.0.0.1 port $CLOSED .*	robots.txt unreachable: Failed to connect" "$WORK/mixed.lines"
check "mixed: summary lists the failure" \
    grep -qE "^ +1  robots.txt unreachable: Failed to connect to HOST port N after N ms: .* \(e.g. 127.0.0.1:$CLOSED\)$" "$WORK/mixed.log"

# --- settings: a CA file that does not exist is a configuration error
"$DCRAWL" crawl --out "$WORK/badca" --set fetch.ca_file="$WORK/none.pem" "$BASE/" >"$WORK/badca.log" 2>&1
rc=$?
check "fetch.ca_file missing: exit 2 with one line naming it" \
    eval '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/badca.log")" -eq 1 ] && grep -q "fetch.ca_file: $WORK/none.pem: No such file" "$WORK/badca.log"'
"$DCRAWL" crawl --out "$WORK/badcapath" --set fetch.ca_path="$pki/ca.pem" "$BASE/" >"$WORK/badcapath.log" 2>&1
rc=$?
check "fetch.ca_path not a directory: exit 2" \
    eval '[ $rc -eq 2 ] && grep -q "fetch.ca_path: .*: not a directory" "$WORK/badcapath.log"'
finish
