#!/usr/bin/env python3
"""make-corpus.py: (re)build the seed corpora of tests/fuzz/corpus/ from
../shared/conformance (URL, robots.txt, sitemap and WARC test data), the
merge fixture (data/merge/) and a few handmade inputs. Each seed starts
with the harness's option byte (see the harness's top comment), except
for fuzz-conf and fuzz-merge-lines, which take the file as it is.

    python3 tests/fuzz/make-corpus.py [SHARED_DIR]

Seeds are small (large files are cut), so the corpora stay well under
2 MB in git. The sources and their licenses: corpus/NOTICE.
"""
import gzip
import hashlib
import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared")
CONF = os.path.join(SHARED, "conformance")
MAX_SEED = 16384


def put(harness, data, opt=None):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if opt is not None:
        data = bytes([opt]) + data
    data = data[:MAX_SEED]
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def url_seeds():
    tests = json.load(open(os.path.join(CONF, "url", "urltestdata.json")))
    n = 0
    for t in tests:
        if not isinstance(t, dict) or n >= 350:
            continue
        inp, base = t.get("input", ""), t.get("base")
        if base and base.startswith("http"):
            put("url", base + "\n" + inp, 0x02)
        else:
            put("url", inp, 0x00)
        n += 1
    for f in ("crawler_commons_normalizer_cases.json", "nutch_normalizer_cases.json"):
        for i, t in enumerate(json.load(open(os.path.join(CONF, "url", f)))):
            if i % 2 == 0:
                put("url", t["input"], 0x01 if i % 4 == 0 else 0x00)
    put("url", "http://EXAMPLE.com:80/a/./b/../index.html?q=%7e#f", 0x01)
    put("url", "https://example.com/" + "a" * 3000, 0x04)
    put("url", "http://a.test/dir/page.html\n../x/%2e%2E/y?z#w", 0x02)


def robots_seeds():
    for f, step in (("google_robotstxt_cases.json", 1), ("crawler_commons_cases.json", 3)):
        seen = set()
        for i, t in enumerate(json.load(open(os.path.join(CONF, "robots", f)))):
            body = t.get("robots_txt", "")
            if i % step or body in seen:
                continue
            seen.add(body)
            put("robots", body + "\0" + t.get("url", ""), 0x00 if i % 2 else 0x01)
    put("robots", "User-agent: dcrawl\nDisallow: /a*b$\nAllow: /a/index.html\n"
        "Crawl-delay: 2.5\nSitemap: http://x.test/s.xml\n\0http://x.test/a/\n/a/xb", 0x01)
    put("robots", b"\xff\xfeU\0s\0e\0r\0-\0a\0g\0e\0n\0t\0:\0 \0*\0\n\0D\0i\0s\0a\0l\0l\0o\0w\0:\0 \0/\0", 0x00)


HTML = [
    '<html><head><base href="http://other.test/b/"><link rel=canonical href="/c">'
    '<meta http-equiv="refresh" content="0; url=/r"></head><body><nav><a href="/n1">'
    'Home</a><a href=/n2>About</a></nav><main><p>Some text <a href="x?y=1#f">in</a>'
    ' the <a rel=nofollow href="/nf">body</a></p></main><footer><a href="/f">f</a>'
    '</footer><iframe src="/if"></iframe><area href="/ar"></body></html>',
    '<meta charset="shift_jis"><a href="/\x82\xa0">\x82\xa0</a>',
    '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><a href=/k>\xc1</a>',
    '<meta name="robots" content="noindex,nofollow"><a href=/x>x</a>',
    '<meta name="dcrawl" content="none"><a href=/x>x</a>',
    '<table><tr><td><a href=1>1</a><td><a href=2>2</a></table><script>var a="<a href=/s>";'
    '</script><style>a{}</style><!-- <a href=/c> --><template><a href=/t></a></template>',
    '<div role=navigation><ul><li><a href=/l1>l1</a><li><a href=/l2>l2</a></ul></div>'
    '<article><header><a href=/h>h</a></header><p>text text text</p></article>',
    "<a href='javascript:x()'>j</a><a href='mailto:a@b'>m</a><a href='//h.test/p'>p</a>"
    "<a href=' http://h.test/\t\n q '>q</a><frame src=/fr>",
]


def html_seeds():
    for i, h in enumerate(HTML):
        data = h.encode("latin-1")
        for opt in (0x00, 0x01, 0x03, 0x04 | (i % 15) << 3):
            put("html", data, opt)
    big = ("<p>" + "<a href=/p%d>x</a> " * 300 + "</p>") % tuple(range(300))
    put("html", big, 0x03)
    put("html", "\ufeff<a href=/bom>bom</a>".encode("utf-8"), 0x00)
    put("html", "<a href=/u16>x</a>".encode("utf-16"), 0x00)


def sitemap_seeds():
    d = os.path.join(CONF, "sitemaps")
    for root, _, files in os.walk(d):
        for f in files:
            if f in ("LICENSE", "manifest.json", "do-not-visit.txt"):
                continue
            data = open(os.path.join(root, f), "rb").read()[:8192]
            put("sitemap", data, 0x04)
            if not f.endswith(".gz"):
                put("sitemap", data[:4096], 0x05 | 0xf0)
    put("sitemap", '<?xml version="1.0"?><urlset><url><loc>http://a.test/&amp;x</loc>'
        '</url><url><loc> http://a.test/y </loc></url></urlset>', 0x06)
    put("sitemap", '<sitemapindex><sitemap><loc>http://a.test/s1.xml</loc></sitemap>'
        '</sitemapindex>', 0x02)
    put("sitemap", '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><urlset><url>'
        '<loc>&e;</loc></url></urlset>', 0x04)


def inflate_seeds():
    text = b"hello hello hello sitemap robots page " * 20
    put("inflate", gzip.compress(text), 0x0e)
    put("inflate", gzip.compress(text) + gzip.compress(b"second member"), 0x0e)
    put("inflate", zlib.compress(text), 0x08)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    put("inflate", c.compress(text) + c.flush(), 0x09)
    put("inflate", gzip.compress(b"\0" * 100000), 0x04)  # a small bomb
    put("inflate", gzip.compress(text)[:40], 0x0e)       # cut short
    for f in ("xmlSitemap.gz", "sitemap.txt.gz"):
        put("inflate", open(os.path.join(CONF, "sitemaps", f), "rb").read(), 0x0e)


def warc_seeds():
    d = os.path.join(CONF, "warc", "samples")
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            continue
        data = open(os.path.join(d, f), "rb").read()[:12288]
        put("warc", data, 0x00)
        if data[:2] != b"\x1f\x8b" and data.startswith(b"WARC/"):
            put("warc", data[:6000], 0x01 | 0xf0)
            put("warc", data[:6000], 0x01 | 0xa0)
    put("warc", open(os.path.join(HERE, "data", "merge", "n-00000.warc.gz"), "rb").read(), 0x00)


def merge_seeds():
    lines = open(os.path.join(HERE, "data", "merge", "n-00000.jsonl"), "rb").read()
    put("merge-lines", lines)
    out = []
    for ln in lines.splitlines():
        o = json.loads(ln)
        o.pop("warc_length", None)  # older output: located by inflating
        out.append(json.dumps(o, separators=(",", ":")).encode())
    put("merge-lines", b"\n".join(out) + b"\n")
    put("merge-lines", b'{"url":"http://e.test/","fetched_at":"2023-11-14T22:13:25.5Z",'
        b'"depth":1,"status":0,"skipped":"robots","outlinks":[]}\n'
        b'{"url":"http://a.test/","fetched_at":"2024-01-01T00:00:00Z","depth":0,'
        b'"status":404,"warc_file":"../x","warc_offset":1,"warc_length":2}\n'
        b'not json\n{"url":"\\u00e9\\ud83d\\ude00","fetched_at":"x"}\n')


CONFS = [
    "[fetch]\nuser_agent = dcrawl/0.1 (+http://x.test)\ntimeout = 10.5\n",
    "[crawl]\nmax_depth = 3\n[politeness]\nhost_connections = 2 ; comment\n# c\n",
    "[scope]\nmode = domain\ninclude = ^https?://[^/]*\\.test/\nskip_suffixes = .jpg .css\n",
    "[redis]\nurl = unix:///tmp/r.sock?db=2\nprefix = dc\nretry = 0\n[unknown]\nx=1\n",
    "[frontier]\npartitions = 99999999999999999999\n",
]


def conf_seeds():
    for c in CONFS:
        put("conf", c)
    full = open(os.path.join(ROOT, "conf", "dcrawl.conf"), "rb").read()
    put("conf", full[:MAX_SEED])


def resp(*items):
    return "".join(items)


def bulk(s):
    return "$%d\r\n%s\r\n" % (len(s.encode()), s)


def redis_seeds():
    ok = ":1\r\n"
    # admit: one reply per partition call, then the seen check
    put("redis-reply", resp("*3\r\n:1\r\n:0\r\n:1\r\n", "*3\r\n:1\r\n:1\r\n:0\r\n",
                            ok, ok, ok), 0x01)
    lease = "*6\r\n" + bulk("e1") + bulk("http://a.test/x") + bulk("a.test") + ":0\r\n:0\r\n:0\r\n"
    put("redis-reply", resp("*2\r\n:1\r\n" + lease, "*2\r\n:0\r\n:-1\r\n",
                            "*1\r\n" + lease, ok, ok, ok), 0x02)
    put("redis-reply", resp(ok, ":3\r\n", "*2\r\n:1\r\n:2\r\n", ":5\r\n", "*4\r\n" + bulk("admitted")
                            + bulk("7") + bulk("seen") + bulk("2")), 0x04)
    put("redis-reply", resp(":1\r\n", "*4\r\n" + bulk("partitions") + bulk("4") + bulk("max_depth")
                            + bulk("3"), "*2\r\n" + bulk("node-1") + bulk("99999"), ":2\r\n"), 0x08)
    put("redis-reply", resp("*2\r\n$-1\r\n" + bulk("\x00\x01blob"), "*2\r\n$-1\r\n$-1\r\n", bulk("3"),
                            "*2\r\n:1\r\n*2\r\n" + bulk("http://o.test/") + ":5\r\n"), 0x10)
    put("redis-reply", resp(ok, "*0\r\n", "*2\r\n" + bulk("node-1") + bulk("1"), ok, ok, ok), 0x20)
    put("redis-reply", resp("*2\r\n" + bulk("0") + "*2\r\n" + bulk("dc:{0}:s:1") + bulk("dc:{1}:s:2"),
                            ":10\r\n:20\r\n:96\r\n:128\r\n"), 0x40)
    put("redis-reply", resp("-ERR fake\r\n", "-NOSCRIPT No matching script\r\n", ok), 0x7f)
    put("redis-reply", resp("+PONG\r\n", bulk("x" * 40) * 9, "*1\r\n*1\r\n" + bulk("dcseen.add"),
                            ok * 4, bulk("4"), bulk("md5"), bulk("mod-u64"), ok, bulk("ip")), 0x81)


def main():
    url_seeds()
    robots_seeds()
    html_seeds()
    sitemap_seeds()
    inflate_seeds()
    warc_seeds()
    merge_seeds()
    conf_seeds()
    redis_seeds()


if __name__ == "__main__":
    main()
