#!/usr/bin/env python3
"""slow_upstream.py: a slow origin behind nginx (tests/e2e/partition.sh).

Serves GET PATH from the directory named by the X-Root request header
(set by nginx's proxy_set_header: the host's site directory), but only
after --delay seconds, so a transfer spans a network cut. A client that
closes early is nginx's business (it logs 499 when the client leaves).
Each request's start is appended to --log as "<X-Dcrawl-Node> <path>" (a
test can cut a network link while a node's slow transfer runs).
Listens on 127.0.0.1:--port until killed; one thread per request.
"""
import argparse, os, posixpath, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--delay", type=float, required=True)
ap.add_argument("--log", required=True)
a = ap.parse_args()
log = open(a.log, "a", buffering=1)


class H(BaseHTTPRequestHandler):
    def do_GET(self):
        root = self.headers.get("X-Root", "")
        path = posixpath.normpath(urllib.parse.urlsplit(self.path).path)
        full = os.path.join(root, path.lstrip("/"))
        log.write("%s %s\n" % (self.headers.get("X-Dcrawl-Node", "-"), path))
        time.sleep(a.delay)
        if not root or ".." in path or not os.path.isfile(full):
            self.send_error(404)
            return
        with open(full, "rb") as fh:
            body = fh.read()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args):
        pass


class S(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


S(("127.0.0.1", a.port), H).serve_forever()
