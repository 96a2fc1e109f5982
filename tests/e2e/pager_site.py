#!/usr/bin/env python3
"""pager_site.py OUT: a one-host site (OUT/hosts/127.0.1.1/) whose pages
link onward only from link-only paragraphs and lists, the blocks a plain
link-text ratio calls navigation:

  /                   some prose, then a list of the sections' first pages
  /blog/, page-N      a blog index: a list of posts, a numbered pager
                      paragraph "1 2 3 4 next"
  /blog/post-K.html   a post: prose, then "next previous" in one paragraph
  /chain/K.html       a story only reachable through "next" paragraphs
  /list/page-N.html   one sentence and a sliding numbered pager (N-2 .. N+2,
                      previous, next) in a <div>: nearly all links
  /docs/part-K.html   <main> with prose and a <nav> pager (previous, next)
                      inside main

Every page also carries a <header> with Home and About and a <footer>
with a Contact link: real navigation. OUT/content.txt lists the URLs of
every page reachable without the header and footer (all must be crawled);
OUT/navonly.txt the pages only they reach (about, contact).
"""
import os
import sys

HOST = "127.0.1.1:8080"
PROSE = ("This page has a paragraph of ordinary prose, the kind of text a "
         "reader comes for, long enough that a link inside it would be "
         "plain content. ")


def page(title, body, main=False):
    head = ('<header><a href="/">Home</a> <a href="/about.html">About</a>'
            '</header>')
    foot = '<footer><a href="/contact.html">Contact</a></footer>'
    if main:
        body = "<main>%s</main>" % body
    return ("<!DOCTYPE html><html><head><title>%s</title></head><body>%s"
            "<h1>%s</h1>%s%s</body></html>\n" % (title, head, title, body,
                                                foot))


def links(pairs, sep=" "):
    return sep.join('<a href="%s">%s</a>' % (h, t) for h, t in pairs)


def main():
    out = sys.argv[1]
    root = os.path.join(out, "hosts", "127.0.1.1")
    pages = {}
    posts, per, blog_pages = 20, 5, 4
    chain, lists, parts = 15, 10, 8
    pages["/"] = page("Home", "<p>%s</p><ul>%s</ul>" % (PROSE, "".join(
        "<li>%s</li>" % links([(h, t)]) for h, t in [
            ("/blog/", "Blog"), ("/chain/1.html", "A story"),
            ("/list/page-1.html", "The list"),
            ("/docs/part-1.html", "The manual")])))
    for n in range(1, blog_pages + 1):
        url = "/blog/" if n == 1 else "/blog/page-%d.html" % n
        items = "".join("<li>%s</li>" % links([("/blog/post-%d.html" % k,
                                                 "Post %d" % k)])
                        for k in range((n - 1) * per + 1, n * per + 1))
        pager = [("/blog/" if k == 1 else "/blog/page-%d.html" % k, str(k))
                 for k in range(1, blog_pages + 1)]
        if n < blog_pages:
            pager.append(("/blog/page-%d.html" % (n + 1), "next"))
        pages[url] = page("Blog page %d" % n, "<ul>%s</ul><p>%s</p>"
                          % (items, links(pager)))
    for k in range(1, posts + 1):
        nav = [("/blog/post-%d.html" % (k + 1), "next")] if k < posts else []
        nav += [("/blog/post-%d.html" % (k - 1), "previous")] if k > 1 else []
        pages["/blog/post-%d.html" % k] = page(
            "Post %d" % k, "<article><p>%s</p><p>%s</p></article>"
            % (PROSE, links(nav)))
    for k in range(1, chain + 1):
        nav = [("/chain/%d.html" % (k + 1), "next")] if k < chain else []
        nav += [("/chain/%d.html" % (k - 1), "previous")] if k > 1 else []
        pages["/chain/%d.html" % k] = page(
            "Chapter %d" % k, "<p>%s</p><p>%s</p>" % (PROSE, links(nav)))
    for n in range(1, lists + 1):
        nav = [("/list/page-%d.html" % (n - 1), "previous")] if n > 1 else []
        nav += [("/list/page-%d.html" % k, str(k))
                for k in range(max(1, n - 2), min(lists, n + 2) + 1)]
        nav += [("/list/page-%d.html" % (n + 1), "next")] if n < lists else []
        pages["/list/page-%d.html" % n] = page(
            "List %d" % n, "<p>Results, page %d.</p><div class=pager>%s</div>"
            % (n, links(nav)))
    for k in range(1, parts + 1):
        nav = [("/docs/part-%d.html" % (k - 1), "Previous")] if k > 1 else []
        nav += [("/docs/part-%d.html" % (k + 1), "Next")] if k < parts else []
        pages["/docs/part-%d.html" % k] = page(
            "Part %d" % k, "<p>%s</p><nav class=pager>%s</nav>"
            % (PROSE, links(nav)), main=True)
    content = sorted(pages)
    nav_only = ["/about.html", "/contact.html"]
    for p in nav_only:
        pages[p] = page(p, "<p>%s</p>" % PROSE)
    for p, html in pages.items():
        path = os.path.join(root, p.lstrip("/"))
        if p.endswith("/"):
            path = os.path.join(path, "index.html")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(html)
    with open(os.path.join(root, "robots.txt"), "w") as f:
        f.write("User-agent: *\nAllow: /\n")
    with open(os.path.join(out, "content.txt"), "w") as f:
        f.writelines("http://%s%s\n" % (HOST, p) for p in content)
    with open(os.path.join(out, "navonly.txt"), "w") as f:
        f.writelines("http://%s%s\n" % (HOST, p) for p in nav_only)


if __name__ == "__main__":
    main()
