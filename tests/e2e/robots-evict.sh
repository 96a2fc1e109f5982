#!/usr/bin/env bash
# e2e robots-evict: a crawl over more hosts than the node's robots.txt
# cache holds (robots.cache_hosts=16, the least allowed) loses nothing.
# Inside a network namespace of its own (unshare -n, loopback up) one
# Python server on *:8080 answers for 127.0.5.1 .. 127.0.5.80, four groups
# of 20 hosts: group 0 are the seeds, and the first page of a host of
# group g links the same host of group g + 1, so each level brings 20 new
# hosts while the older groups' hosts come back with a page each
# (/dN at depth N); every page of depth < 3 also links /private/<depth>,
# which every host's robots.txt disallows. The node crawls a level at a
# time, so by the next level most hosts' rules have been dropped from
# memory and are read back from Redis. Checks: exit 0; every allowed page
# fetched once with 200, and nothing else; no /private URL requested, each
# one listed as disallowed by robots.txt; each robots.txt requested
# exactly once (a dropped host's rules were read back, not fetched again);
# the summary counts hosts dropped from memory and answers taken from Redis.
. "$(dirname "$0")/lib.sh"
for t in unshare ip python3; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n)"; finish; }
HOSTS=80 GROUP=20
cat >"$WORK/server.py" <<'PY'
import sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
group, log = int(sys.argv[1]), open(sys.argv[2], "a", buffering=1)
lock = threading.Lock()

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        host = self.headers.get("Host", "")
        with lock:
            log.write("%s %s\n" % (host, self.path))
        h = int(host.split(":")[0].rsplit(".", 1)[1])
        g = (h - 1) // group
        if self.path == "/robots.txt":
            body, ctype = b"User-agent: *\nDisallow: /private\n", "text/plain"
        else:
            if self.path == "/":
                d = g
            elif self.path in ("/d1", "/d2", "/d3") and int(self.path[2]) > g:
                d = int(self.path[2])
            else:
                self.send_error(404)
                return
            links = ["/d%d" % (d + 1), "/private/%d" % d] if d < 3 else []
            if self.path == "/" and g < 3:
                links.append("http://127.0.5.%d:8080/" % (h + group))
            body = ("<!doctype html><title>%s%s</title><p>Page %s of host %d.</p>%s" % (
                host, self.path, self.path, h,
                "".join('<p><a href="%s">%s</a></p>' % (l, l) for l in links))).encode()
            ctype = "text/html"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

class Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 drops connects under a burst
    daemon_threads = True

Server(("", 8080), H).serve_forever()
PY
seeds=$WORK/seeds.txt
for i in $(seq 1 $GROUP); do echo "http://127.0.5.$i:8080/"; done >"$seeds"
timeout 300 unshare -n bash -c '
    ip link set lo up || exit 90
    ( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done
      exec python3 "$1/server.py" "$2" "$1/requests.log" 2>"$1/server.err" ) &
    srv=$!
    for i in $(seq 1 50); do
        python3 -c "import socket; socket.create_connection((\"127.0.5.1\", 8080), 1)" 2>/dev/null && break
        sleep 0.1
    done
    "$3" crawl --depth 3 --out "$1/out" --set politeness.delay=0 --set noise.enabled=false \
        --set robots.cache_hosts=16 --seeds "$1/seeds.txt" >"$1/crawl.log" 2>&1
    rc=$?
    kill $srv; wait $srv 2>/dev/null
    exit $rc' _ "$WORK" "$GROUP" "$DCRAWL"
rc=$?
cat "$WORK/crawl.log"
check "crawl exits 0 ($rc)" [ $rc -eq 0 ]
sort "$WORK/requests.log" >"$WORK/requests"
# the pages of a host of group g: / at depth g, then /dN for N = g+1 .. 3;
# its private URLs: /private/N for N = g .. 2
pages() { local g=$1 n; echo /; for n in $(seq $((g + 1)) 3); do echo /d$n; done; }
privs() { local g=$1 n; for n in $(seq "$g" 2); do echo /private/$n; done; }
for i in $(seq 1 $HOSTS); do
    g=$(((i - 1) / GROUP))
    for p in /robots.txt $(pages $g); do echo "127.0.5.$i:8080 $p"; done
done | sort >"$WORK/expected"
for i in $(seq 1 $HOSTS); do
    g=$(((i - 1) / GROUP))
    for p in $(pages $g); do echo "http://127.0.5.$i:8080$p 200"; done
    for p in $(privs $g); do echo "http://127.0.5.$i:8080$p skipped"; done
done | sort >"$WORK/expected-lines"
check "every allowed page and robots.txt requested exactly once, nothing else ($(wc -l <"$WORK/requests") requests)" \
    cmp -s "$WORK/requests" "$WORK/expected"
check "no /private URL requested" [ "$(grep -c ' /private' "$WORK/requests")" -eq 0 ]
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    ok = r["status"] == 200 or (r["status"] == 0 and r.get("skipped") == "disallowed by robots.txt")
    print(r["url"], r["status"] if r["status"] == 200 else "skipped" if ok else "bad")' \
    "$WORK/out/merged/pages.jsonl" | sort >"$WORK/lines"
check "every allowed page fetched with 200, every /private URL disallowed by robots.txt, nothing else ($(wc -l <"$WORK/lines") lines)" \
    cmp -s "$WORK/lines" "$WORK/expected-lines"
dropped=$(sed -n 's/.*taken from Redis, \([0-9]*\) hosts dropped from memory.*/\1/p' "$WORK/crawl.log")
restored=$(sed -n 's/.*robots.txt: [0-9]* fetched, \([0-9]*\) taken from Redis.*/\1/p' "$WORK/crawl.log")
check "summary: hosts dropped from the robots.txt cache (${dropped:-?}) came back from Redis (${restored:-?})" \
    [ "${dropped:-0}" -gt 0 -a "${restored:-0}" -gt 0 ]
finish
