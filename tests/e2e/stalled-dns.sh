#!/usr/bin/env bash
# e2e stalled-dns: a node whose DNS server never answers keeps its
# heartbeat. Inside a network and mount namespace of its own (unshare -n
# -m, loopback up), /etc/resolv.conf is bind-mounted to name a server on
# 127.0.0.53 that reads every query and answers none (`options timeout:8
# attempts:1`: each lookup stalls 8 s, longer than cluster.node_timeout)
# and /etc/hosts to one without the site's names. The site (python3's
# http.server on 127.0.0.1:8080) has 7 pages, each linking to names that
# only that server could answer (stalled-K.test).
#
# The crawl: `dcrawl seed` with cluster.partition_by=ip (a link's
# partition needs its host's address: looked up on the node's loop while
# admitting links) and `dcrawl node --exit-when-idle` with
# fetch.connect_timeout=2 (libcurl gives up on the stalled names' lookups
# before they end). While the node runs, `dcrawl status --json` is read
# every 0.5 s. Checks: the node exits 0; every status read lists it live
# (its heartbeat never older than cluster.node_timeout=5); it printed no
# "node loop was blocked" warning; every site page was fetched with 200
# and every stalled URL has its one line (an error, no response).
. "$(dirname "$0")/lib.sh"
for t in unshare ip mount redis-server python3; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n -m)"; finish; }

site=$WORK/site
python3 - "$site" "$WORK/expected.txt" "$WORK/stalled.txt" <<'PY'
import os, sys
root, exp, stalled = sys.argv[1:4]
pages = ["/"] + ["/p%d.html" % i for i in range(1, 7)]
urls = set()
for n, path in enumerate(pages):
    links = [p for p in pages if p != path]
    extra = ["http://stalled-%d.test:8080/a%d" % (n % 4, n), "http://stalled-%d.test/b%d" % (n, n)]
    urls.update(extra)
    body = "".join('<p>Text %d of %s. <a href="%s">%s</a></p>\n' % (i, path, l, l)
                   for i, l in enumerate(links + extra))
    f = os.path.join(root, "index.html" if path == "/" else path.lstrip("/"))
    os.makedirs(os.path.dirname(f), exist_ok=True)
    open(f, "w").write("<!doctype html><title>%s</title><h1>%s</h1>\n%s" % (path, path, body))
open(os.path.join(root, "robots.txt"), "w").write("User-agent: *\nAllow: /\n")
open(exp, "w").write("".join(p + "\n" for p in sorted(pages)))
open(stalled, "w").write("".join(u + "\n" for u in sorted(urls)))
PY
nexp=$(wc -l <"$WORK/expected.txt")

# inside the namespaces: lo up, the silent DNS server, resolv.conf and
# hosts bind-mounted, the site, Redis on a unix socket, seed, node and the
# status reads; every server stopped before leaving
timeout 240 unshare -n -m bash -c '
    set -u
    W=$2 DCRAWL=$3 MOD=$4
    ip link set lo up || exit 90
    mount --make-rprivate / || exit 91
    printf "nameserver 127.0.0.53\noptions timeout:8 attempts:1\n" >"$W/resolv.conf"
    printf "127.0.0.1 localhost\n" >"$W/hosts"
    mount --bind "$W/resolv.conf" /etc/resolv.conf || exit 92
    mount --bind "$W/hosts" /etc/hosts || exit 93
    closefds() { for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done; }
    # the DNS server: reads queries (UDP and TCP), answers none, for 200 s at most
    ( closefds; exec python3 - "$W/dns.log" <<"PY"
import select, socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.53", 53))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.53", 53)); t.listen(64)
held, n, end = [], 0, time.time() + 200
log = open(sys.argv[1], "w")
while time.time() < end:
    r, _, _ = select.select([u, t], [], [], 0.5)
    if u in r:
        u.recvfrom(4096); n += 1; log.write("udp query %d\n" % n); log.flush()
    if t in r:
        c, _ = t.accept(); held.append(c); log.write("tcp connection\n"); log.flush()
PY
    ) &
    dns=$!
    ( closefds; cd "$1" && exec python3 -m http.server 8080 --bind 127.0.0.1 2>"$W/server.log" >/dev/null ) &
    srv=$!
    ( closefds; exec redis-server --port 0 --unixsocket "$W/redis.sock" --save "" --appendonly no \
        ${MOD:+--loadmodule "$MOD"} >"$W/redis.log" 2>&1 ) &
    red=$!
    for i in $(seq 1 50); do
        [ -S "$W/redis.sock" ] && python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 8080), 1)" 2>/dev/null && break
        sleep 0.1
    done
    R=unix://$W/redis.sock
    echo http://127.0.0.1:8080/ >"$W/seeds.txt"
    "$DCRAWL" seed --redis "$R" --depth 2 --set cluster.partition_by=ip "$W/seeds.txt" \
        >"$W/seed.log" 2>&1 || echo "seed failed: $(cat "$W/seed.log")" >&2
    "$DCRAWL" node --redis "$R" --id stall1 --out "$W/out" --exit-when-idle \
        --set cluster.node_timeout=5 --set cluster.heartbeat=1 --set fetch.connect_timeout=2 \
        --set politeness.delay=0 --set noise.enabled=false --set output.progress_interval=0 \
        >"$W/node.log" 2>"$W/node.err" &
    node=$!
    reads=0
    while kill -0 $node 2>/dev/null && [ $reads -lt 400 ]; do
        "$DCRAWL" status --redis "$R" --json >>"$W/status.jsonl" 2>>"$W/status.err"
        reads=$((reads + 1))
        sleep 0.5
    done
    wait $node
    rc=$?
    kill $srv $red $dns 2>/dev/null; wait $srv $red $dns 2>/dev/null
    exit $rc' _ "$site" "$WORK" "$DCRAWL" "$SEEN_MODULE"
rc=$?
cat "$WORK/node.log" "$WORK/node.err"
check "node exits 0 ($rc)" [ $rc -eq 0 ]
check "the DNS server got queries and answered none ($(grep -c query "$WORK/dns.log" 2>/dev/null))" \
    grep -q query "$WORK/dns.log"

# every status read while the node ran: the node live, heartbeat age < 5 s
python3 - "$WORK/status.jsonl" >"$WORK/status.sum" <<'PY'
import json, sys
reads = live = 0; worst = 0; dead = []
for l in open(sys.argv[1]):
    try:
        s = json.loads(l)
    except ValueError:
        continue
    for n in s["nodes"]:
        if n["id"] != "stall1":
            continue
        reads += 1
        worst = max(worst, n.get("heartbeat_age_ms") or 0)
        if n["live"]:
            live += 1
        else:
            dead.append(s["time_ms"])
print(reads, live, worst, len(dead))
PY
read -r reads live worst dead <"$WORK/status.sum"
check "status read $reads times while the node ran" [ "${reads:-0}" -ge 10 ]
check "the node listed live in every read ($live of $reads; oldest heartbeat ${worst} ms, node_timeout 5000 ms)" \
    [ "${reads:-0}" -gt 0 -a "$live" = "$reads" ]
check "no \"node loop was blocked\" warning" bash -c '! grep -q "loop was blocked" "$1"' _ "$WORK/node.err"

lines() { python3 -c 'import glob, json, sys
for p in glob.glob(sys.argv[1] + "/depth-*/*.jsonl"):
    for l in open(p):
        r = json.loads(l)
        print("%s\t%s\t%s" % (r["url"], r["status"], r.get("error")))' "$1"; }
lines "$WORK/out" >"$WORK/lines"
base=http://127.0.0.1:8080
awk -F'\t' -v b="$base" '$2 == 200 && index($1, b) == 1 { print substr($1, length(b) + 1) }' \
    "$WORK/lines" | sort >"$WORK/fetched"
check "the whole site fetched with 200 ($(wc -l <"$WORK/fetched") of $nexp)" \
    cmp -s "$WORK/fetched" "$WORK/expected.txt"
cut -f1 "$WORK/lines" | grep '^http://stalled-' | sort >"$WORK/stalled.got"
check "every stalled URL has one line, none a response ($(wc -l <"$WORK/stalled.got") of $(wc -l <"$WORK/stalled.txt"))" \
    bash -c 'cmp -s "$1" "$2" && ! awk -F"\t" "/^http:\/\/stalled-/ && \$2 != 0 { bad = 1 } END { exit !bad }" "$3"' \
    _ "$WORK/stalled.got" "$WORK/stalled.txt" "$WORK/lines"
finish
