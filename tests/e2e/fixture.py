#!/usr/bin/env python3
"""fixture.py PORT_FILE [--bomb]: a small HTTP/1.1 server on 127.0.0.1 (free port,
written to PORT_FILE) for the cases nginx cannot play: a page that fails
once then works, one that always fails, a gzip-encoded page, a body larger
than the crawler's cap, a redirect.

Under /h/ it plays hostile and odd servers (hostile.sh): a body dripped one
byte a second, one sent fast enough for the low-speed limit but never
finished, a 60 MiB page, a gzip bomb, a server that reads the request and
never answers, broken chunked encoding, redirect loops and an endless
redirect chain, a non-HTML type with links in it, pages in ISO-8859-1 and
Shift_JIS (header and <meta> charset, invalid bytes), meta robots
nofollow/noindex/none, rel=nofollow, rel=canonical, meta refresh.

Counts requests per path; GET /_counts returns them as JSON, GET /_log
the hostile handlers' notes (bytes sent before the client gave up, how
long it stayed). --bomb builds the gzip bomb (256 MiB of HTML decoded from
about 256 KiB) before the port is written. Exits after 600 s at most; a handler never runs longer
than 60 s."""
import gzip, http.server, json, select, sys, threading, time, zlib

counts = {}
notes = {}
lock = threading.Lock()
BOMB_RAW = 256 << 20   # the gzip bomb's decoded size
bomb = None

def make_bomb():
    """One gzip stream of BOMB_RAW bytes (an HTML start, then spaces)."""
    global bomb
    with lock:
        if bomb is None:
            c = zlib.compressobj(9, zlib.DEFLATED, 31)
            head = b"<html><body><a href='/h/from-bomb'>x</a>"
            parts = [c.compress(head)]
            chunk = b" " * (1 << 20)
            for _ in range(BOMB_RAW >> 20):
                parts.append(c.compress(chunk))
            parts.append(c.flush())
            bomb = b"".join(parts)
    return bomb

def note(path, **kw):
    with lock:
        notes[path] = kw

def hpage(body_html, head=""):
    return ("<html><head>%s<title>t</title></head><body>%s</body></html>" %
            (head, body_html)).encode("latin-1")

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

    def raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def client_gone(self, wait):
        """Wait up to `wait` s; True when the client closed the connection."""
        r, _, _ = select.select([self.connection], [], [], wait)
        if not r:
            return False
        try:
            return self.connection.recv(1, 0x40) == b""  # MSG_DONTWAIT
        except BlockingIOError:
            return False
        except OSError:
            return True

    def stream(self, p, head, piece, every, limit):
        """Send head, then piece every `every` s, until the client goes,
        limit pieces are sent, or 60 s; note bytes sent and seconds."""
        t0, sent = time.time(), 0
        try:
            self.raw(head)
            for _ in range(limit):
                if time.time() - t0 > 60:
                    break
                self.raw(piece)
                sent += len(piece)
                if every and self.client_gone(every):
                    break
        except OSError:
            pass
        note(p, sent=sent, seconds=round(time.time() - t0, 2))
        self.close_connection = True

    def hostile(self, p):
        if p == "/h/":
            links = ["/h/drip", "/h/slowforever", "/h/huge", "/h/bomb",
                     "/h/silent", "/h/badchunk", "/h/loop-a", "/h/chain/0",
                     "/h/document", "/h/latin1", "/h/sjis", "/h/badbytes",
                     "/h/nofollow", "/h/noindex", "/h/none", "/h/relnofollow",
                     "/h/canon", "/h/refresh", "/h/gone-redirect"]
            return self.send(200, hpage("".join('<a href="%s">%s</a> ' % (l, l)
                                                 for l in links)))
        if p == "/h/drip":  # one byte a second, never finished
            return self.stream(p, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               b"Content-Length: 100000\r\n\r\n", b"x", 1.0, 100000)
        if p == "/h/slowforever":  # 400 B/s: above the low-speed limit, never ends
            return self.stream(p, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               b"Content-Length: 100000000\r\n\r\n", b"y" * 100, 0.25, 100000)
        if p == "/h/huge":  # 60 MiB, as fast as the client reads
            body_start = b"<html><body><a href='/h/from-huge'>x</a>"
            size = 60 << 20
            return self.stream(p, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               b"Content-Length: %d\r\n\r\n" % size + body_start,
                               b"z" * 65536, 0, (size - len(body_start)) // 65536)
        if p == "/h/bomb":
            b = make_bomb()
            note(p, compressed=len(b), decoded=BOMB_RAW)
            return self.send(200, b, extra=[("Content-Encoding", "gzip")])
        if p == "/h/silent":  # reads the request, never answers
            t0 = time.time()
            while time.time() - t0 < 60 and not self.client_gone(0.2):
                pass
            note(p, sent=0, seconds=round(time.time() - t0, 2))
            self.close_connection = True
            return
        if p == "/h/badchunk":
            try:
                self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n"
                         b"10\r\n<html><body>abc\r\nzz-not-hex\r\nmore\r\n")
                self.client_gone(10)
            except OSError:
                pass
            self.close_connection = True
            return
        if p in ("/h/loop-a", "/h/loop-b"):  # a -> b -> a
            return self.redirect("/h/loop-b" if p == "/h/loop-a" else "/h/loop-a")
        if p.startswith("/h/chain/"):  # endless: n -> n+1
            n = int(p.rsplit("/", 1)[1] or 0)
            return self.redirect("/h/chain/%d" % (n + 1))
        if p == "/h/gone-redirect":  # to a URL already fetched: costs nothing
            return self.redirect("/h/")
        if p == "/h/document":
            return self.send(200, b"%PDF-1.4 <a href='/h/from-pdf'>x</a>",
                             "application/pdf")
        if p == "/h/latin1":  # header charset; \xe9 is e-acute in ISO-8859-1
            return self.send(200, b"<html><body><a href='/h/caf\xe9'>x</a></body></html>",
                             "text/html; charset=ISO-8859-1")
        if p == "/h/sjis":  # <meta> charset only
            href = "/h/\u65e5\u672c".encode("shift_jis")
            return self.send(200, b"<html><head><meta http-equiv='Content-Type' "
                             b"content='text/html; charset=Shift_JIS'></head><body>"
                             b"<a href='" + href + b"'>x</a></body></html>", "text/html")
        if p == "/h/badbytes":  # invalid Shift_JIS and UTF-8 sequences
            return self.send(200, b"<html><head><meta charset=shift_jis></head><body>"
                             b"\x81\xff\xfd\x80<a href='/h/after-bad'>\xa0\xe0</a>\x82",
                             "text/html")
        if p == "/h/nofollow":
            return self.send(200, hpage("<a href='/h/nf-target'>x</a>",
                                        "<meta name='robots' content='nofollow'>"))
        if p == "/h/noindex":
            return self.send(200, hpage("<a href='/h/ni-target'>x</a>",
                                        "<meta name='ROBOTS' content='NOINDEX, follow'>"))
        if p == "/h/none":  # the crawler's own token
            return self.send(200, hpage("<a href='/h/none-target'>x</a>",
                                        "<meta name='dcrawl' content='none'>"))
        if p == "/h/relnofollow":
            return self.send(200, hpage("<a rel='nofollow ugc' href='/h/rnf-target'>x</a>"
                                        "<a href='/h/rf-target'>y</a>"))
        if p == "/h/canon":
            return self.send(200, hpage("text",
                                        "<link rel='canonical' href='/h/canonical-page'>"))
        if p == "/h/refresh":
            return self.send(200, hpage("text", "<meta http-equiv='refresh' "
                                        "content='0; URL=\"/h/refresh-target\"'>"))
        return self.send(200, hpage("target " + p))

    def redirect(self, loc):
        self.send_response(302)
        self.send_header("Location", loc)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        p = self.path
        with lock:
            counts[p] = counts.get(p, 0) + 1
            n = counts[p]
        if p == "/_counts":
            return self.send(200, json.dumps(counts).encode(), "application/json")
        if p == "/_log":
            with lock:
                return self.send(200, json.dumps(notes).encode(), "application/json")
        if p.startswith("/h/"):
            return self.hostile(p)
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

if "--bomb" in sys.argv[2:]:
    make_bomb()
http.server.ThreadingHTTPServer.daemon_threads = True
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1], "w") as fh:
    fh.write(str(srv.server_address[1]))
# A safety net for a server its test failed to stop (every test kills it
# on exit): e2e-hostile needs it for about 2 minutes, longer on a loaded
# machine, so it stops by itself only after 10.
threading.Timer(600, srv.shutdown).start()
srv.serve_forever()
