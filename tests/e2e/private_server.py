#!/usr/bin/env python3
"""private_server.py: the servers of e2e/private.sh, run inside the test's
network namespace. One port (PORT) on several addresses:

  127.0.0.1    the site a crawl starts from: / links to two more pages, to
               a redirect (/redir: 302 to the private address) and to the
               private addresses, by address and by name (intranet.test,
               which the namespace's /etc/hosts maps to 10.255.255.1), and
               to mixed.test, mapped to fd00:ec2::254 and 127.0.0.1;
  10.255.255.1, 169.254.169.254, fd00:ec2::254
               stand-ins for an intranet host and the cloud metadata
               service: every path answers 200 with a page linking one
               level deeper.

Every accepted connection is logged to CONNLOG as "ADDRESS" (the address
it was made to) before anything is read, so a connection that never sends
a request is seen too; every request to REQLOG as "ADDRESS PATH".

usage: private_server.py PORT CONNLOG REQLOG ADDRESS...
"""
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
CONNLOG, REQLOG = sys.argv[2], sys.argv[3]
ADDRS = sys.argv[4:]
LOCK = threading.Lock()


def log(path, line):
    with LOCK, open(path, "a") as f:
        f.write(line + "\n")


def url(host, path):
    return "http://%s:%d%s" % ("[%s]" % host if ":" in host else host, PORT, path)


def site_page(path):
    """(status, headers, body) of the loopback site."""
    links = {
        "/": ["/a.html", "/b.html", "/redir", url("10.255.255.1", "/"),
              url("169.254.169.254", "/latest/meta-data/"),
              url("intranet.test", "/"), url("fd00:ec2::254", "/v6"),
              url("mixed.test", "/b.html")],
        "/a.html": ["/b.html", url("10.255.255.1", "/from-a")],
        "/b.html": ["/"],
    }
    if path == "/robots.txt":
        return 200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n"
    if path == "/redir":
        return 302, {"Location": url("10.255.255.1", "/from-redirect")}, ""
    if path not in links:
        return 404, {"Content-Type": "text/plain"}, "not found\n"
    body = "".join('<p>Link %d of %s: <a href="%s">%s</a></p>\n' % (i, path, l, l)
                   for i, l in enumerate(links[path]))
    return 200, {"Content-Type": "text/html"}, "<!doctype html><title>%s</title>\n%s" % (path, body)


def private_page(path):
    if path == "/robots.txt":
        return 404, {"Content-Type": "text/plain"}, "none\n"
    body = '<!doctype html><title>secret %s</title><p>secret <a href="%sdeeper">deeper</a></p>\n' % (
        path, path if path.endswith("/") else path + "/")
    return 200, {"Content-Type": "text/html"}, body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        local = self.server.server_address[0]
        log(REQLOG, "%s %s" % (local, self.path))
        status, headers, body = (site_page if local == "127.0.0.1" else private_page)(self.path)
        data = body.encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr):
        self.address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        super().__init__((addr, PORT), Handler)

    def get_request(self):
        conn, peer = super().get_request()
        log(CONNLOG, self.server_address[0])
        return conn, peer


servers = [Server(a) for a in ADDRS]
for s in servers[1:]:
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", flush=True)
servers[0].serve_forever()
