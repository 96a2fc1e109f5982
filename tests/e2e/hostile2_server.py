#!/usr/bin/python3
"""hostile2_server.py PORT_FILE CERT KEY: the hostile servers of hostile2.sh,
each on its own free port of 127.0.0.1 (its own robots.txt host), written
to PORT_FILE as JSON {name: port}:

  plain       HTTP/1.1: /robots.txt allows all; /ok, /ok2 normal pages;
              /cookies answers 200 with 10,000 Set-Cookie headers (~400 KB);
              /longloc answers 302 with a Location header 1 MiB long.
  robots      HTTP/1.1: a robots.txt of 100 MiB (Disallow: /private, then
              comment lines), streamed as fast as the client reads; / links
              /private/x and /fine.
  sitemap     HTTP/1.1: robots.txt lists /index.xml, a sitemap index that
              lists itself, /index-b.xml (which lists /index.xml again) and
              /pages.xml (which lists /from-sitemap).
  h2cont      HTTP/2 over TLS (ALPN h2, raw frames): robots.txt 404; any other
              path gets a HEADERS frame without END_HEADERS, then endless
              CONTINUATION frames of header fields (~11 KB each).
  h2settings  HTTP/2 over TLS: robots.txt 404; any other path gets an
              endless flood of SETTINGS frames, the client's ACKs unread.
  tlsstall    TCP: reads the TLS ClientHello and never answers it.

GET /_counts on `plain` returns every server's request counts by
"name path"; GET /_log the hostile handlers' notes (bytes sent, how long
the client stayed, by "name path" or "name conn"). Exits after 150 s at
most; a handler never runs longer than 60 s. Needs Debian's python3-hpack
(for /usr/bin/python3) to read the HTTP/2 requests' header blocks.
"""
import http.server, json, os, socket, ssl, struct, sys, threading, time

import hpack

counts, notes = {}, {}
lock = threading.Lock()
ports = {}
LIMIT = 60  # seconds a hostile handler runs at most


def count(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1


def note(key, **kw):
    with lock:
        notes[key] = kw


def page(links, text="page"):
    return ("<html><head><title>t</title></head><body><p>%s</p>%s</body></html>" % (
        text, "".join('<a href="%s">%s</a> ' % (l, l) for l in links))).encode()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    name = "?"

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
        if p == "/_counts":
            with lock:
                return self.send(200, json.dumps(counts).encode(), "application/json")
        if p == "/_log":
            with lock:
                return self.send(200, json.dumps(notes).encode(), "application/json")
        count(self.name + " " + p)
        getattr(self, "get_" + self.name)(p)

    def get_plain(self, p):
        if p == "/robots.txt":
            return self.send(200, b"User-agent: *\nAllow: /\n", "text/plain")
        if p == "/cookies":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            for i in range(10000):
                self.send_header("Set-Cookie", "c%d=%s; Path=/" % (i, "v" * 24))
            body = page(["/from-cookies"])
            self.send_header("Content-Length", str(len(body)))
            t0 = time.time()
            try:
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass
            note("plain /cookies", seconds=round(time.time() - t0, 2))
            self.close_connection = True
            return
        if p == "/longloc":
            self.send_response(302)
            self.send_header("Location", "/" + "a" * (1 << 20))
            self.send_header("Content-Length", "0")
            try:
                self.end_headers()
            except OSError:
                pass
            self.close_connection = True
            return
        if p == "/ok":
            return self.send(200, page(["/ok2"]))
        return self.send(200, page([], "plain " + p))

    def get_robots(self, p):
        if p == "/robots.txt":  # 100 MiB: the rules, then comment lines
            size, line = 100 << 20, b"# " + b"x" * 1021 + b"\n"
            head = b"User-agent: *\nDisallow: /private\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(size))
            t0, sent = time.time(), 0
            try:
                self.end_headers()
                self.wfile.write(head)
                sent = len(head)
                block = line * 64
                while sent + len(block) <= size and time.time() - t0 < LIMIT:
                    self.wfile.write(block)
                    sent += len(block)
                self.wfile.write(b"#" * (size - sent - 1) + b"\n")
                sent = size
            except OSError:
                pass
            note("robots /robots.txt", sent=sent, seconds=round(time.time() - t0, 2))
            self.close_connection = True
            return
        if p == "/":
            return self.send(200, page(["/private/x", "/fine"]))
        return self.send(200, page([], "robots " + p))

    def get_sitemap(self, p):
        base = "http://127.0.0.1:%d" % ports["sitemap"]
        if p == "/robots.txt":
            return self.send(200, ("User-agent: *\nAllow: /\nSitemap: %s/index.xml\n" %
                                   base).encode(), "text/plain")
        if p in ("/index.xml", "/index-b.xml"):
            kids = ["/index.xml", "/index-b.xml", "/pages.xml"] if p == "/index.xml" \
                else ["/index.xml"]
            body = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/'
                    'schemas/sitemap/0.9">%s</sitemapindex>' % "".join(
                        "<sitemap><loc>%s%s</loc></sitemap>" % (base, k) for k in kids))
            return self.send(200, body.encode(), "application/xml")
        if p == "/pages.xml":
            body = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/'
                    'sitemap/0.9"><url><loc>%s/from-sitemap</loc></url></urlset>' % base)
            return self.send(200, body.encode(), "application/xml")
        return self.send(200, page([], "sitemap " + p))


def http_server(name):
    cls = type("H_" + name, (H,), {"name": name})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), cls)
    srv.daemon_threads = True
    ports[name] = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()


# --- HTTP/2, raw frames (RFC 9113 §4.1: length 24 bits, type, flags, stream)
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS, CONTINUATION = 0, 1, 4, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 1, 1, 4, 8, 0x20


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream) + payload


def literal(name, value):
    """An HPACK literal field, never indexed, new name (RFC 7541 §6.2.3);
    name and value under 127 bytes."""
    return bytes([0x10, len(name)]) + name + bytes([len(value)]) + value


def read_request(conn, buf, dec):
    """Read frames until a request's HEADERS block; (stream, path, buf)."""
    while True:
        while len(buf) < 9:
            d = conn.recv(65536)
            if not d:
                raise OSError("closed")
            buf += d
        n = int.from_bytes(buf[:3], "big")
        while len(buf) < 9 + n:
            d = conn.recv(65536)
            if not d:
                raise OSError("closed")
            buf += d
        ftype, flags = buf[3], buf[4]
        stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
        payload, buf = buf[9:9 + n], buf[9 + n:]
        if ftype == SETTINGS and not flags & ACK:
            conn.sendall(frame(SETTINGS, ACK, 0))
        if ftype != HEADERS:
            continue
        if flags & PADDED:
            payload = payload[1:len(payload) - payload[0]]
        if flags & PRIORITY:
            payload = payload[5:]
        fields = dict(dec.decode(payload))
        return stream, fields.get(":path", ""), buf


def drain(conn):
    t0 = time.time()
    try:
        while time.time() - t0 < LIMIT and conn.recv(65536):
            pass
    except (OSError, ValueError):
        pass


def h2_conn(name, conn):
    t0, sent, key = time.time(), 0, name + " conn"
    enc, dec = hpack.Encoder(), hpack.Decoder()
    try:
        buf = b""
        while len(buf) < len(PREFACE):
            d = conn.recv(65536)
            if not d:
                raise OSError("closed")
            buf += d
        buf = buf[len(PREFACE):]
        conn.sendall(frame(SETTINGS, 0, 0))
        while time.time() - t0 < LIMIT:
            stream, path, buf = read_request(conn, buf, dec)
            count(name + " " + path)
            key = name + " " + path
            if path == "/robots.txt":
                conn.sendall(frame(HEADERS, END_STREAM | END_HEADERS, stream,
                                   enc.encode([(":status", "404")])))
                continue
            if name == "h2cont":
                conn.sendall(frame(HEADERS, 0, stream, enc.encode(
                    [(":status", "200"), ("content-type", "text/html")])))
                block = b"".join(literal(b"x-endless-%03d" % i, b"v" * 100)
                                 for i in range(100))
                piece = frame(CONTINUATION, 0, stream, block)
            else:
                piece = frame(SETTINGS, 0, 0, struct.pack(">HI", 3, 100))
                if path == "/drain":  # read (and drop) the client's ACKs
                    threading.Thread(target=drain, args=(conn,), daemon=True).start()
            conn.settimeout(5)
            while time.time() - t0 < LIMIT:
                conn.sendall(piece)
                sent += len(piece)
            break
    except (OSError, ValueError, hpack.HPACKError):
        pass
    note(key, sent=sent, seconds=round(time.time() - t0, 2))
    try:
        conn.close()
    except OSError:
        pass


def tls_conn(name, sock, ctx):
    try:
        sock.settimeout(10)
        conn = ctx.wrap_socket(sock, server_side=True)
        conn.settimeout(None)
    except (OSError, ssl.SSLError):
        sock.close()
        return
    h2_conn(name, conn)


def stall_conn(name, sock):
    """Read the ClientHello, answer nothing, until the client leaves."""
    t0, got = time.time(), 0
    sock.settimeout(0.2)
    while time.time() - t0 < LIMIT:
        try:
            d = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not d:
            break
        got += len(d)
    count(name + " conn")
    with lock:
        k = "%s conn %d" % (name, sum(1 for x in notes if x.startswith(name)))
        notes[k] = {"received": got, "seconds": round(time.time() - t0, 2)}
    sock.close()


def tcp_server(name, handler, *args):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    ports[name] = ls.getsockname()[1]

    def loop():
        while True:
            s, _ = ls.accept()
            threading.Thread(target=handler, args=(name, s) + args, daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
ctx.set_alpn_protocols(["h2"])
for n in ("plain", "robots", "sitemap"):
    http_server(n)
tcp_server("h2cont", tls_conn, ctx)
tcp_server("h2settings", tls_conn, ctx)
tcp_server("tlsstall", stall_conn)
with open(sys.argv[1] + ".tmp", "w") as fh:
    json.dump(ports, fh)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(900)  # the test stops it sooner (EXIT trap)
