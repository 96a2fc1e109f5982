#!/usr/bin/env python3
"""fixture.py PORT_FILE: a small HTTP/1.1 server on 127.0.0.1 (free port,
written to PORT_FILE) for the cases nginx cannot play: a page that fails
once then works, one that always fails, a gzip-encoded page, a body larger
than the crawler's cap, a redirect. Counts requests per path; GET /_counts
returns them as JSON. Exits after 120 s at most."""
import gzip, http.server, json, sys, threading

counts = {}
lock = threading.Lock()

def page(links, text="fixture page"):
    body = "<html><head><title>t</title></head><body><p>%s</p>%s</body></html>" % (
        text, "".join('<a href="%s">%s</a> ' % (l, l) for l in links))
    return body.encode()

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body, ctype="text/html", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        p = self.path
        with lock:
            counts[p] = counts.get(p, 0) + 1
            n = counts[p]
        if p == "/_counts":
            return self.send(200, json.dumps(counts).encode(), "application/json")
        if p == "/robots.txt":
            return self.send(200, b"User-agent: *\nDisallow: /private\n", "text/plain")
        if p == "/":
            return self.send(200, page(["/flaky", "/always500", "/gzip", "/big",
                                        "/redirect", "/private/x", "mailto:a@b"]))
        if p == "/flaky":
            if n == 1:
                return self.send(503, b"try later")
            return self.send(200, page([], "flaky page, second try"))
        if p == "/always500":
            return self.send(500, b"broken")
        if p == "/gzip":
            return self.send(200, gzip.compress(page(["/from-gzip"])),
                             extra=[("Content-Encoding", "gzip")])
        if p == "/big":
            return self.send(200, page(["/from-big"]) + b"x" * (3 * 1024 * 1024))
        if p == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/target")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if p in ("/from-gzip", "/from-big", "/target"):
            return self.send(200, page([], p))
        return self.send(404, b"not here")

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1], "w") as fh:
    fh.write(str(srv.server_address[1]))
threading.Timer(120, srv.shutdown).start()
srv.serve_forever()
