#!/usr/bin/env python3
"""bigpages.py --out DIR [--host IP]: a site with two big index pages.

DIR/hosts/IP/ holds (served by shared/bench/serve.sh as host 1):
  /            links to /big3.html, /big9.html and /small.html
  /big3.html   about 3 MB, /big9.html about 9 MB (and /big3l.html, 3 MB in
               ISO-8859-1, so the charset conversion must cover the whole
               body, linking /s3l/N.html): dense table markup with
               links to small pages (/s3/N.html, /s9/N.html), each in a
               paragraph of text, spread evenly from the first bytes to
               the very last ones (the file ends with a link, no closing
               tags); between them comments, scripts and styles holding
               link-like text (some longer than a parse slice), which must
               not be followed
  /s3/N.html, /s9/N.html, /small.html  small pages, linking home
  /robots.txt  allows all of it
DIR/expected.txt lists every URL a crawl to depth 2 must fetch, one a line;
DIR/traps.txt the URLs that only appear inside comments and scripts.
"""
import argparse
import os

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--host", default="127.0.1.1")
ap.add_argument("--port", default="8080")
a = ap.parse_args()
root = os.path.join(a.out, "hosts", a.host)
os.makedirs(os.path.join(root, "s3"), exist_ok=True)
os.makedirs(os.path.join(root, "s9"), exist_ok=True)
os.makedirs(os.path.join(root, "s3l"), exist_ok=True)
base = "http://%s:%s" % (a.host, a.port)
expected = ["/", "/big3.html", "/big9.html", "/big3l.html", "/small.html"]
traps = []


def small(path, title):
    with open(os.path.join(root, path.lstrip("/")), "w") as f:
        f.write("<!doctype html><html><head><title>%s</title></head><body>"
                "<h1>%s</h1><p>A small page of the big-pages site.</p>"
                "<p><a href=\"/\">home</a></p></body></html>\n" % (title, title))


def filler(n, seed):
    """n bytes (about) of dense markup without links."""
    rows, size, i = [], 0, seed
    while size < n:
        r = ("<tr><td class=\"c%d\">entry %d</td><td><span>v</span> <b>%d</b>"
             "</td><td><code>x%d</code> &amp; text</td></tr>\n" % (i % 7, i, i * 7, i))
        rows.append(r)
        size += len(r)
        i += 1
    return "".join(rows)


def trap_block(name, k, big):
    t = "/trap/%s-%d.html" % (name, k)
    traps.append(t)
    body = ("<!-- <a href=\"%s\">in a comment</a> -->" % t +
            "<script>var html = '<a href=\"%s\">x</a>';\n" % t +
            "document.write('<div><a href=\"%s\">y</a></div>'); // </scrip\n" % t * (big // 60) +
            "</script>\n<style>/* <a href=\"%s\"> */ p {}</style>\n" % t)
    return "</table>" + body + "<table>"


def big(name, size, nlinks, charset="utf-8"):
    step = size // nlinks
    out = ["<!doctype html><html><head><title>%s</title>"
           "<meta charset=\"%s\"></head><body><h1>Index %s</h1>" % (name, charset, name)]
    total = len(out[0])
    for i in range(nlinks - 1):
        path = "/%s/%d.html" % (name, i)
        expected.append(path)
        small(path, "%s page %d" % (name, i))
        link = ("<p>Entry %d of the index: a page about item %d, with a short "
                "description so that the paragraph is text (caf\u00e9, "
                "na\u00efve). <a href=\"%s\">%s page %d</a></p>\n"
                % (i, i, path, name, i))
        if i % 150 == 75:
            link += trap_block(name, i, 300000 if i % 300 == 75 else 5000)
        room = (i + 1) * step - total - len(link)
        chunk = "<table>" + filler(room, i * 31) + "</table>" + link
        out.append(chunk)
        total += len(chunk)
    path = "/%s/last.html" % name
    expected.append(path)
    small(path, "%s last page" % name)
    pad = size - total - 200
    if pad > 0:
        out.append("<table>" + filler(pad, 7) + "</table>")
    out.append("<p>The last entry: <a href=\"%s\">last</a>" % path)
    with open(os.path.join(root, "%s.html" % name.replace("s", "big", 1)), "wb") as f:
        f.write("".join(out).encode(charset))


small("/small.html", "small")
with open(os.path.join(root, "robots.txt"), "w") as f:
    f.write("User-agent: *\nDisallow: /private/\n")
with open(os.path.join(root, "index.html"), "w") as f:
    f.write("<!doctype html><html><head><title>big pages</title></head><body>"
            "<p>This site has two big index pages that list small pages "
            "from their first bytes to their last ones: one of "
            "<a href=\"/big3.html\">3 MB</a> and one of <a href=\"/big9.html\">"
            "9 MB</a>, and <a href=\"/big3l.html\">one of 3 MB in ISO-8859-1</a> "
            "(converted to UTF-8 as a whole). There is also a <a href=\"/small.html\">small page</a> "
            "that links back here, as every listed page does.</p>"
            "</body></html>\n")
big("s3", 3 << 20, 600)
big("s9", 9 << 20, 1500)
big("s3l", 3 << 20, 300, "iso-8859-1")
with open(os.path.join(a.out, "expected.txt"), "w") as f:
    f.write("".join(base + p + "\n" for p in expected))
with open(os.path.join(a.out, "traps.txt"), "w") as f:
    f.write("".join(base + p + "\n" for p in sorted(set(traps))))
