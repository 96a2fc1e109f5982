#!/usr/bin/env python3
"""wget_reach.py: compare the HTML pages a dcrawl crawl and a wget -r crawl
of one site fetched (bench/wget-reach.sh runs both).

  wget_reach.py NAME PAGES_JSONL WGET_LOG WGET_DIR MAX_REPEATED

dcrawl side: pages.jsonl lines with status 200 and an HTML media type.
wget side: the "URL:... [n/n] -> file" lines of its -nv log; a page counts
as HTML by the media type nginx gives its name (/etc/nginx/mime.types;
a path ending in '/' is a directory index, HTML). robots.txt is left out
of both. Both sides are normalized alike: fragment dropped, a last path
segment index.html cut (dcrawl's url.strip_index_html), percent-encoding
made uniform.

Prints one table row, then how many only-wget pages are byte-identical
to a page dcrawl archived (a copy: dcrawl archives a content duplicate as
a revisit and does not follow its links, so a tree of copies, such as
the Apache manual's language directories of symlinks, is not walked),
then up to 10 only-wget pages with a reason: the URL was fetched by
dcrawl with another status, is dropped by dcrawl's repeated-segment
guard (scope.max_repeated_segments), is such a copy, or else where wget
found it (a saved page holding its last path segment), to be looked at.
"""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from urllib.parse import quote, unquote, urlsplit, urlunsplit

name, jsonl, wlog, wdir, maxrep = sys.argv[1:6]
maxrep = int(maxrep)

mime = {}
try:
    text = open("/etc/nginx/mime.types").read()
    for m in re.finditer(r"([\w.+-]+/[\w.+-]+)\s+([^;{}]+);", text):
        for ext in m.group(2).split():
            mime[ext.lower()] = m.group(1)
except OSError:
    pass


def is_html_path(path):
    last = path.rsplit("/", 1)[-1]
    if last == "":
        return True
    if "." not in last:
        return False  # nginx's default_type: application/octet-stream
    return mime.get(last.rsplit(".", 1)[-1].lower(), "") in (
        "text/html", "application/xhtml+xml")


SAFE = "/:@!$&'()*+,;=~-._"


def norm(u):
    s = urlsplit(u)
    path = quote(unquote(s.path), safe=SAFE) or "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    query = quote(unquote(s.query), safe=SAFE + "?")
    return urlunsplit((s.scheme.lower(), s.netloc.lower(), path, query, ""))


dc, dc_other, dc_digests = set(), {}, set()
for line in open(jsonl):
    p = json.loads(line)
    u = norm(p["url"])
    if u.endswith("/robots.txt"):
        continue
    if p.get("status") == 200 and p.get("digest"):
        dc_digests.add(p["digest"])
    ct = (p.get("content_type") or "").split(";")[0].strip().lower()
    if p.get("status") == 200 and ct in ("text/html", "application/xhtml+xml"):
        dc.add(u)
    else:
        dc_other[u] = "%s %s" % (p.get("status"), p.get("error") or
                                 p.get("redirect_to") or ct)

wg, wfile = set(), {}
for line in open(wlog, errors="replace"):
    m = re.search(r"URL:\s*(\S+) \[.*?\] -> \"(.*)\"", line)
    if not m:
        continue
    u = norm(m.group(1))
    if u.endswith("/robots.txt") or not is_html_path(urlsplit(u).path):
        continue
    wg.add(u)
    wfile[u] = m.group(2)


def is_copy(u):
    """Is wget's copy of u byte-identical to a page dcrawl archived?"""
    try:
        with open(wfile.get(u, ""), "rb") as f:
            d = hashlib.sha1(f.read()).digest()
    except OSError:
        return False
    return "sha1:" + base64.b32encode(d).decode() in dc_digests


def repeated(path):
    segs = [x for x in path.split("/") if x]
    return any(segs.count(x) > maxrep for x in set(segs)) if maxrep > 0 else False


def where(u):
    last = urlsplit(u).path.rstrip("/").rsplit("/", 1)[-1] or "/"
    try:
        out = subprocess.run(["grep", "-rlF", "--include=*.htm*", last, wdir],
                             capture_output=True, text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:
        return "?"
    files = out.split()
    return files[0][len(wdir):] if files else "?"


only_w = sorted(wg - dc)
only_d = sorted(dc - wg)
print("%-10s wget %6d  dcrawl %6d  both %6d  only-wget %5d  only-dcrawl %5d"
      % (name, len(wg), len(dc), len(wg & dc), len(only_w), len(only_d)))
copies = sum(1 for u in only_w if u not in dc_other and is_copy(u))
if only_w:
    print("    only-wget pages byte-identical to a page dcrawl archived: %d of %d"
          % (copies, len(only_w)))
for u in only_w[:10]:
    if u in dc_other:
        why = "dcrawl fetched it: " + dc_other[u]
    elif repeated(urlsplit(u).path):
        why = "scope.max_repeated_segments"
    elif is_copy(u):
        why = ("a copy of a page dcrawl archived, linked from copies, whose "
               "links dcrawl does not follow; wget saw it in " + where(u))
    else:
        why = "not reached by dcrawl; wget saw it in " + where(u)
    print("    only-wget   %s  (%s)" % (u, why))
for u in only_d[:5]:
    print("    only-dcrawl %s" % u)
