#!/usr/bin/env bash
# e2e private: scope.private_addresses. Inside a network and mount namespace
# of the test's own (unshare -n -m: loopback up, with 10.255.255.1,
# 169.254.169.254 and fd00:ec2::254 added to it; /etc/hosts bind-mounted
# with intranet.test -> 10.255.255.1, mixed.test -> fd00:ec2::254 and
# 127.0.0.1, tried in that order), e2e/private_server.py serves a site
# on 127.0.0.1:8080 whose pages link to those addresses (by address, by
# name, through a 302) and stand-ins for an intranet host and the metadata
# service on them, logging every connection it accepts. Crawls:
#   seeds (default)   the site crawled whole, exit 0; no connection to a
#                     private address; each such URL has a line "skipped":
#                     "private address ADDR (RANGE) not allowed by ..."; the
#                     summary counts them; mixed.test fetched through its
#                     second, allowed address; again with robots.obey=false
#                     (the pages' own check, not robots.txt's)
#   deny              the loopback seed itself refused: exit 1, the reason
#                     on stderr and in its line; no connection at all
#   allow             the private stand-ins fetched (connections logged)
#   seed + node       `dcrawl seed` into a Redis while a `dcrawl node` that
#                     started before it runs: the node learns the seeds'
#                     range from Redis and crawls the site, still refusing
#                     the private addresses; then a seed on 10.255.255.1:
#                     now that range is allowed, its page fetched
. "$(dirname "$0")/lib.sh"
for t in unshare ip mount python3 redis-server; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n -m)"; finish; }
redis_start private || exit 1

cat >"$WORK/inside.sh" <<'EOF'
# runs inside the namespaces: $1 dcrawl, $2 source dir, $3 work dir, $4 Redis URL
D=$1 SRC=$2 W=$3 R=$4
ip link set lo up || exit 90
for a in 10.255.255.1/32 169.254.169.254/32 fd00:ec2::254/128; do
    ip addr add "$a" dev lo || exit 91
done
printf '%s\n' '127.0.0.1 localhost' '::1 localhost' '10.255.255.1 intranet.test' \
    'fd00:ec2::254 mixed.test' '127.0.0.1 mixed.test' >"$W/hosts"
mount --bind "$W/hosts" /etc/hosts || exit 92
# the server keeps no descriptor above 2 (the ctest lock among them)
( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done
  exec python3 "$SRC/tests/e2e/private_server.py" 8080 "$W/conn.log" "$W/req.log" \
      127.0.0.1 10.255.255.1 169.254.169.254 fd00:ec2::254 >"$W/server.out" 2>"$W/server.err" ) &
srv=$!
for i in $(seq 1 100); do grep -q ready "$W/server.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$W/server.out" || { kill $srv; exit 93; }
SETS=(--set politeness.delay=0 --set noise.enabled=false)
# crawl NAME ARGS...: one crawl; its connections and requests kept apart
crawl() {
    local name=$1; shift
    : >"$W/conn.log"; : >"$W/req.log"
    timeout 120 "$D" crawl --depth 2 --out "$W/out-$name" "${SETS[@]}" "$@" \
        http://127.0.0.1:8080/ >"$W/$name.log" 2>"$W/$name.err"
    echo $? >"$W/$name.rc"
    mv "$W/conn.log" "$W/$name.conn"; mv "$W/req.log" "$W/$name.req"
}
crawl seeds
crawl noobey --set robots.obey=false
crawl deny --set scope.private_addresses=deny
crawl allow --set scope.private_addresses=allow
# a node running before the seeds come (it has read no range yet)
: >"$W/conn.log"; : >"$W/req.log"
"$D" node --redis "$R" --out "$W/out-node" --id n1 "${SETS[@]}" --set crawl.depth=1 \
    >"$W/node.log" 2>"$W/node.err" &
node=$!
sleep 0.5
"$D" seed --redis "$R" --depth 1 - \
    <<<"http://127.0.0.1:8080/" >"$W/seed.log" 2>"$W/seed.err"
echo $? >"$W/seed.rc"
# depth 0 and 1: /, a, b, redir, mixed.test's b, the redirect's target
# and 4 private links
for i in $(seq 1 600); do
    [ "$(cat "$W"/out-node/depth-*/*.jsonl 2>/dev/null | wc -l)" -ge 10 ] && break
    sleep 0.1
done
mv "$W/conn.log" "$W/node.conn"; mv "$W/req.log" "$W/node.req"
# a seed on the private address the node has refused so far: its range
# is allowed from now on (the node's refused robots.txt entry asks again)
"$D" seed --redis "$R" - <<<"http://10.255.255.1:8080/seeded" >"$W/seed2.log" 2>"$W/seed2.err"
for i in $(seq 1 600); do
    grep -qF '"http://10.255.255.1:8080/seeded"' "$W"/out-node/depth-0/*.jsonl 2>/dev/null && break
    sleep 0.1
done
kill -TERM $node; wait $node
echo $? >"$W/node.rc"
mv "$W/conn.log" "$W/node2.conn"
kill $srv; wait $srv 2>/dev/null
exit 0
EOF
timeout 600 unshare -n -m bash "$WORK/inside.sh" "$DCRAWL" "$SRC" "$WORK" "$R"
rc=$?
check "the namespace was set up and every crawl ran ($rc)" [ $rc -eq 0 ]
for n in seeds noobey deny allow; do
    echo "--- $n: exit $(cat "$WORK/$n.rc" 2>/dev/null)"; cat "$WORK/$n.err" 2>/dev/null
done

# lines OUT: url, status, skipped of each merged line (tab separated)
lines() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s\t%s\t%s" % (r["url"], r["status"], r.get("skipped") or ""))' "$1"; }
P=8080
cat >"$WORK/private-urls" <<EOF
http://10.255.255.1:$P/
http://10.255.255.1:$P/from-a
http://10.255.255.1:$P/from-redirect
http://169.254.169.254:$P/latest/meta-data/
http://[fd00:ec2::254]:$P/v6
http://intranet.test:$P/
EOF
# check_refused NAME MODE MAXDEPTH: the private URLs (to MAXDEPTH) each
# have one line, status 0, skipped with the reason; the site fetched
check_refused() {
    local name=$1 mode=$2 lf=$WORK/$1.lines
    check "$name: no connection to a private address ($(grep -vc '^127\.0\.0\.1$' "$WORK/$name.conn") made)" \
        [ -s "$WORK/$name.conn" -a "$(grep -vc '^127\.0\.0\.1$' "$WORK/$name.conn")" -eq 0 ]
    check "$name: each private URL skipped with its address's reason" \
        python3 - "$lf" "$WORK/private-urls" "$mode" "$3" <<'PY'
import sys
lines, urls, mode, maxd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
got = {}
for l in open(lines):
    u, st, sk = l.rstrip("\n").split("\t")
    got.setdefault(u, []).append((st, sk))
reason = {"10.255.255.1": "private address 10.255.255.1 (private 10.0.0.0/8)",
          "intranet.test": "private address 10.255.255.1 (private 10.0.0.0/8)",
          "169.254.169.254": "private address 169.254.169.254 (cloud metadata 169.254.169.254/32)",
          "[fd00:ec2::254]": "private address fd00:ec2::254 (cloud metadata fd00:ec2::254/128)"}
want = [u for u in open(urls).read().split() if maxd >= 2 or "from-a" not in u]
bad = 0
for u in want:
    host = u.split("/")[2].rsplit(":", 1)[0]
    exp = reason[host] + " not allowed by scope.private_addresses=" + mode
    if got.get(u) != [("0", exp)]:
        print("  %s: %s, want skipped %r" % (u, got.get(u), exp)); bad += 1
others = [u for u in got if not u.startswith(("http://127.0.0.1:", "http://mixed.test:"))
          and u not in want and "/seeded" not in u]
if others:
    print("  unexpected lines:", others); bad += 1
sys.exit(bad > 0)
PY
}

# --- seeds (the default), with and without robots.txt
site="/ /a.html /b.html"
for name in seeds noobey; do
    lines "$WORK/out-$name/merged/pages.jsonl" >"$WORK/$name.lines" 2>/dev/null
    check "$name: exit 0 ($(cat "$WORK/$name.rc"))" [ "$(cat "$WORK/$name.rc")" = 0 ]
    for p in $site; do
        check "$name: $p fetched with 200" grep -qxF "http://127.0.0.1:$P$p	200	" "$WORK/$name.lines"
    done
    check "$name: /redir fetched (302)" grep -qxF "http://127.0.0.1:$P/redir	302	" "$WORK/$name.lines"
    check "$name: mixed.test fetched through 127.0.0.1, its allowed address" \
        grep -qxF "http://mixed.test:$P/b.html	200	" "$WORK/$name.lines"
    check_refused "$name" seeds 2
    check "$name: the summary counts 6 URLs skipped for a private address" \
        grep -q "private addresses: 6 URLs skipped: private address" "$WORK/$name.log"
    check "$name: seeding reports the range the seed allows" \
        grep -qF "non-public ranges allowed (scope.private_addresses=seeds): 127.0.0.0/8" "$WORK/$name.log"
done
check "seeds: robots.txt of the private hosts never requested (127.0.0.1 asked twice: the site, mixed.test)" \
    [ "$(grep -c "/robots.txt$" "$WORK/seeds.req")" -eq 2 -a "$(grep -c "^127.0.0.1 /robots.txt$" "$WORK/seeds.req")" -eq 2 ]

# --- deny: the seed itself is refused
lines "$WORK/out-deny/merged/pages.jsonl" >"$WORK/deny.lines" 2>/dev/null
check "deny: exit 1 ($(cat "$WORK/deny.rc"))" [ "$(cat "$WORK/deny.rc")" = 1 ]
reason="private address 127.0.0.1 (loopback 127.0.0.0/8) not allowed by scope.private_addresses=deny"
check "deny: stderr says why for the seed host" \
    grep -qxF "dcrawl: http://127.0.0.1:$P/: $reason" "$WORK/deny.err"
check "deny: the seed's line is skipped with the reason" \
    grep -qxF "http://127.0.0.1:$P/	0	$reason" "$WORK/deny.lines"
check "deny: no connection at all ($(wc -l <"$WORK/deny.conn"))" [ ! -s "$WORK/deny.conn" ]

# --- allow: the private stand-ins are fetched
lines "$WORK/out-allow/merged/pages.jsonl" >"$WORK/allow.lines" 2>/dev/null
check "allow: exit 0 ($(cat "$WORK/allow.rc"))" [ "$(cat "$WORK/allow.rc")" = 0 ]
for a in 10.255.255.1 169.254.169.254 fd00:ec2::254; do
    check "allow: connections to $a ($(grep -cxF "$a" "$WORK/allow.conn"))" grep -qxF "$a" "$WORK/allow.conn"
done
for u in $(cat "$WORK/private-urls"); do
    check "allow: $u fetched with 200" grep -qxF "$u	200	" "$WORK/allow.lines"
done
check "allow: mixed.test's first address is fd00:ec2::254 (refused in the seeds crawls)" \
    grep -qxF "fd00:ec2::254 /b.html" "$WORK/allow.req"
check "allow: nothing skipped for a private address" \
    grep -q "private addresses: 0 URLs skipped" "$WORK/allow.log"

# --- a running node, then `dcrawl seed`
cat "$WORK/seed.log" "$WORK/seed.err"
check "seed: exit 0" [ "$(cat "$WORK/seed.rc")" = 0 ]
check "seed: reports the range recorded" \
    grep -qF "non-public ranges allowed (scope.private_addresses=seeds): 127.0.0.0/8" "$WORK/seed.log"
check "node: stopped with exit 0 ($(cat "$WORK/node.rc"))" [ "$(cat "$WORK/node.rc")" = 0 ]
cat "$WORK"/out-node/depth-*/*.jsonl 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    print("%s\t%s\t%s" % (r["url"], r["status"], r.get("skipped") or ""))' >"$WORK/node.lines"
for p in $site; do
    check "node: $p fetched with 200" grep -qxF "http://127.0.0.1:$P$p	200	" "$WORK/node.lines"
done
check "node: mixed.test fetched through 127.0.0.1" \
    grep -qxF "http://mixed.test:$P/b.html	200	" "$WORK/node.lines"
check_refused node seeds 1
cat "$WORK/seed2.log" "$WORK/seed2.err"
check "seed on 10.255.255.1: reports its range" \
    grep -qF "non-public ranges allowed (scope.private_addresses=seeds): 10.0.0.0/8" "$WORK/seed2.log"
check "node: the private seed fetched with 200 once its range was seeded" \
    grep -qxF "http://10.255.255.1:$P/seeded	200	" "$WORK/node.lines"
check "node: connections to 10.255.255.1 only after that seed ($(grep -cxF 10.255.255.1 "$WORK/node2.conn"))" \
    grep -qxF 10.255.255.1 "$WORK/node2.conn"
finish
