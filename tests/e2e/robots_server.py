#!/usr/bin/env python3
"""robots_server.py DIR: loopback HTTP/1.1 servers for the robots.txt fetch
rules, one site per scenario, each on its own free port of 127.0.0.1 (so
each is its own host to the crawler). Writes DIR/ports.json
({scenario: port}) once all listen, and appends one line per request to
DIR/requests.log: "scenario path start end status" (times in seconds,
float, written after the response is sent). Exits after 180 s at most.

Scenarios (robots.txt behaviour; every site's / links the pages named):
  r404     robots.txt 404                     / -> /a /b
  r503     robots.txt always 503              / -> /a
  redir3   /robots.txt -> /r1 -> /r2 -> /r3 (Disallow: /secret)
                                              / -> /ok /secret
  redir6   /robots.txt -> /r1 ... -> /r6 (Disallow: /secret; 6 hops)
                                              / -> /secret
  delay    Crawl-delay: 1 (sent gzip-encoded) / -> /p1 /p2 /p3
  sitemap  Sitemap: index -> gzip urlset + text sitemap, URLs /hidden1-3
           (and one URL of another host); / has no links
  big      Disallow: /early, ~510 KiB of comments, Disallow: /late
                                              / -> /early /late
"""
import gzip
import http.server
import json
import os
import sys
import threading
import time

LOG_LOCK = threading.Lock()
OUT = sys.argv[1]
PORTS = {}


def page(links, text="page"):
    return ("<html><head><title>t</title></head><body><p>%s</p>%s</body>"
            "</html>" % (text, "".join('<a href="%s">%s</a> ' % (l, l)
                                for l in links))).encode()


def big_robots():
    pad = "".join("# %s\n" % ("x" * 76) for _ in range(510 * 1024 // 80))
    return ("User-agent: *\nDisallow: /early\n" + pad +
            "Disallow: /late\n").encode()


def site(name):
    """(robots, pages): robots is (status, body, headers)."""
    base = "http://127.0.0.1:%d" % PORTS[name]
    if name == "r404":
        return (404, b"no", ()), {"/": page(["/a", "/b"])}
    if name == "r503":
        return (503, b"busy", ()), {"/": page(["/a"])}
    if name in ("redir3", "redir6"):
        return ((301, b"", (("Location", "/r1"),)),
                {"/": page(["/ok", "/secret"])})
    if name == "delay":
        return ((200, b"User-agent: *\nCrawl-delay: 1\n", ()),
                {"/": page(["/p1", "/p2", "/p3"])})
    if name == "sitemap":
        return ((200, ("User-agent: *\nDisallow: /nothing\n"
                       "Sitemap: %s/sitemap-index.xml\n" % base).encode(), ()),
                {"/": page([])})
    if name == "big":
        return (200, big_robots(), ()), {"/": page(["/early", "/late"])}
    raise KeyError(name)


def extra(name, path):
    """Responses beyond robots.txt and pages: redirect chains, sitemaps."""
    base = "http://127.0.0.1:%d" % PORTS[name]
    hops = 3 if name == "redir3" else 6
    if name in ("redir3", "redir6") and path.startswith("/r") and path[2:].isdigit():
        k = int(path[2:])
        if k < hops:
            return 301, b"", (("Location", "/r%d" % (k + 1)),)
        if k == hops:
            return 200, b"User-agent: *\nDisallow: /secret\n", ()
    if name == "sitemap" and path == "/sitemap-index.xml":
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                '<sitemap><loc>%s/sm-urls.xml.gz</loc></sitemap>'
                '<sitemap><loc>%s/sm.txt</loc></sitemap></sitemapindex>'
                % (base, base)).encode()
        return 200, body, (("Content-Type", "application/xml"),)
    if name == "sitemap" and path == "/sm-urls.xml.gz":
        body = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/'
                'schemas/sitemap/0.9"><url><loc>%s/hidden1</loc></url>'
                '<url><loc>%s/hidden2?a=1&amp;b=2</loc></url>'
                '<url><loc>http://127.0.0.2:9/elsewhere</loc></url></urlset>'
                % (base, base)).encode()
        return 200, gzip.compress(body), (("Content-Type", "application/gzip"),)
    if name == "sitemap" and path == "/sm.txt":
        return 200, ("%s/hidden3\n" % base).encode(), (("Content-Type", "text/plain"),)
    if name == "sitemap" and path.startswith("/hidden"):
        return 200, page([], path), (("Content-Type", "text/html"),)
    return None


def handler_for(name):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            start = time.time()
            robots, pages = site(name)
            p = self.path
            if p == "/robots.txt":
                status, body, hdrs = robots
                hdrs = tuple(hdrs) + (("Content-Type", "text/plain"),)
                if name == "delay" and "gzip" in self.headers.get("Accept-Encoding", ""):
                    body = gzip.compress(body)  # must be decoded to be read
                    hdrs = hdrs + (("Content-Encoding", "gzip"),)
            elif p in pages:
                status, body, hdrs = 200, pages[p], (("Content-Type", "text/html"),)
                body = body.replace(b"<p>page</p>", ("<p>%s</p>" % name).encode())
            elif extra(name, p):
                status, body, hdrs = extra(name, p)
                if not any(k == "Content-Type" for k, _ in hdrs):
                    hdrs = tuple(hdrs) + (("Content-Type", "text/plain"),)
            elif name in ("r404", "r503", "redir3", "redir6", "delay", "big"):
                status, body, hdrs = 200, page([], name + p), (("Content-Type", "text/html"),)
            else:
                status, body, hdrs = 404, b"not found", (("Content-Type", "text/plain"),)
            self.send_response(status)
            for k, v in hdrs:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            with LOG_LOCK, open(os.path.join(OUT, "requests.log"), "a") as f:
                f.write("%s %s %.4f %.4f %d\n" % (name, p, start, time.time(), status))
    return H


def main():
    names = ["r404", "r503", "redir3", "redir6", "delay", "sitemap", "big"]
    servers = []
    for n in names:
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_for(n))
        s.daemon_threads = True
        PORTS[n] = s.server_address[1]
        servers.append(s)
        threading.Thread(target=s.serve_forever, daemon=True).start()
    tmp = os.path.join(OUT, "ports.json.tmp")
    with open(tmp, "w") as f:
        json.dump(PORTS, f)
    os.rename(tmp, os.path.join(OUT, "ports.json"))
    time.sleep(180)


if __name__ == "__main__":
    main()
