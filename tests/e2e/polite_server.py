#!/usr/bin/env python3
"""polite_server.py: a loopback HTTP server for the politeness and scope
tests. It serves several origins (IP:port listeners, each its own "host")
from one site description and logs every request with its start and end
time, so a test can check gaps, overlaps and what was (not) requested.

Usage: polite_server.py SITE.json WORKDIR

SITE.json:
  {"origins": {"NAME": {"ip": "127.0.0.5", "delay": 0.2,
                        "pages": {"/": {"links": ["{NAME}/a", "/b"]},
                                  "/ra": {"seq": [[503, {"Retry-After": "2"}],
                                                  [200, {}]]},
                                  "/fail": {"status": 500}}}}}
Each origin binds IP:0 (a free port). "{NAME}" in a link becomes
"http://IP:PORT" of that origin. A page answers "status" (default 200)
with "headers"; with "seq", the n-th request of the path gets the n-th
entry (the last one repeats). "delay" (origin or page) is slept before
answering. A page with "text" answers that text as text/plain (a
robots.txt) instead of HTML. Unknown paths (robots.txt included, unless
listed) are 404.

Writes WORKDIR/origins.json ({"NAME": "IP:PORT"}) once every listener is
up, and WORKDIR/requests.jsonl: one line per request, {"origin": NAME,
"addr": "IP:PORT", "ip", "path", "status", "start", "end"}; start is taken
when the request line has been read, end just before the response bytes
are written (so a client can only see the response after "end").
Stops on SIGTERM or after --max-seconds (default 300).
"""
import http.server
import json
import os
import signal
import socketserver
import sys
import threading
import time


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    site_path, work = sys.argv[1], sys.argv[2]
    max_seconds = 300.0
    if len(sys.argv) > 4 and sys.argv[3] == "--max-seconds":
        max_seconds = float(sys.argv[4])
    with open(site_path) as f:
        site = json.load(f)
    lock = threading.Lock()
    log = open(os.path.join(work, "requests.jsonl"), "a", buffering=1)
    counts = {}
    servers = {}
    addrs = {}

    def make_handler(name, spec):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, fmt, *args):
                pass

            def do_GET(self):
                start = time.time()
                path = self.path
                page = spec.get("pages", {}).get(path)
                status, headers, links = 404, {}, []
                if page is not None:
                    status = page.get("status", 200)
                    headers = dict(page.get("headers", {}))
                    links = page.get("links", [])
                    if "seq" in page:
                        with lock:
                            n = counts.get((name, path), 0)
                            counts[(name, path)] = n + 1
                        st, hd = page["seq"][min(n, len(page["seq"]) - 1)]
                        status, headers = st, dict(hd)
                delay = page.get("delay", spec.get("delay", 0)) if page else spec.get("delay", 0)
                if delay:
                    time.sleep(delay)
                hrefs = []
                for l in links:
                    for other, a in addrs.items():
                        l = l.replace("{%s}" % other, "http://" + a)
                    hrefs.append('<p>Some text about this link, long enough '
                                 'to be content: <a href="%s">%s</a></p>' % (l, l))
                body = ("<html><head><title>%s</title></head><body><h1>%s%s</h1>"
                        "%s</body></html>" % (path, name, path, "".join(hrefs))).encode()
                ctype = "text/html"
                if page is not None and "text" in page:
                    body, ctype = page["text"].encode(), "text/plain"
                head = "HTTP/1.0 %d X\r\nContent-Type: %s\r\n" % (status, ctype)
                for k, v in headers.items():
                    head += "%s: %s\r\n" % (k, v)
                head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
                end = time.time()
                with lock:
                    log.write(json.dumps({"origin": name, "addr": addrs[name],
                                          "ip": spec["ip"], "path": path,
                                          "status": status, "start": start,
                                          "end": end}) + "\n")
                try:
                    self.wfile.write(head.encode() + body)
                    self.wfile.flush()
                except OSError:
                    pass

        return Handler

    for name, spec in site["origins"].items():
        srv = Server((spec["ip"], 0), make_handler(name, spec))
        servers[name] = srv
        addrs[name] = "%s:%d" % (spec["ip"], srv.server_address[1])
    for srv in servers.values():
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = os.path.join(work, "origins.json.tmp")
    with open(tmp, "w") as f:
        json.dump(addrs, f)
    os.rename(tmp, os.path.join(work, "origins.json"))

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    done.wait(max_seconds)
    for srv in servers.values():
        srv.shutdown()
    log.close()


if __name__ == "__main__":
    main()
