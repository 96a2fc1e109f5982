#!/usr/bin/env python3
"""toc_site.py OUT: a one-host documentation site (OUT/hosts/127.0.1.1/)
built the way Erlang/OTP's documentation is: its guides and their chapters
are linked only from side menus, never from the text.

  /                 prose; a <header> with About and Contact; an <aside>
                    <nav> menu of the GUIDES guides (the site's table of
                    contents, GUIDES >= NOISE_TOC_MIN links)
  /gK/index.html    a guide's first page: prose, and an <aside><nav>
                    outline of its chapters: per chapter "cN.html" and
                    links to its sections "cN.html#sM"
  /gK/cN.html       a chapter: prose and the same outline
  /book/            linked from the index's prose: a book whose <nav>
                    sidebar lists its BOOK chapters (plain links, as
                    mdBook writes them), not on the host's first page
  /book/chN.html    a chapter: prose and the same sidebar
  /docs/            linked from the index's prose: a documentation home
                    page as pydata-sphinx-theme builds it, a top <nav> bar
                    of four sections and a <main> of cards for three of
                    them; the fourth, /docs/release.html (which lists
                    /docs/vN.html), is linked from the bar only (the bar
                    copies the page's content: its new links are kept)
  /land/            linked from the index's prose: a landing page whose
                    text links only to itself and to the host's root, and
                    an <aside><nav> of two pages (/land/a.html, b.html):
                    only navigation leads on, so it is followed
  /robots.txt       allows everything

Every page carries the <header>. OUT/content.txt lists the URLs of every
page but the two the header alone links to (all must be crawled);
OUT/navonly.txt those two (about, contact), which the default noise rule
still drops: a small menu is navigation on the host's first page too.
"""
import os
import sys

from site_files import write_files, write_list

HOST = "127.0.1.1:8080"
GUIDES = 36
CHAPTERS = 3
BOOK = 40
SECTIONS = 3
PROSE = ("This page has a paragraph of ordinary prose, the kind of text a "
         "reader comes for, long enough to be content on its own. ")


def page(title, nav, body):
    return ("<!doctype html><html><head><title>%s</title></head><body>\n"
            "<header><a href=\"/about.html\">About</a> "
            "<a href=\"/contact.html\">Contact</a></header>\n"
            "<aside><nav>%s</nav></aside>\n"
            "<div class=\"content\"><h1>%s</h1><p>%s</p></div>\n"
            "</body></html>\n" % (title, nav, title, body))


def outline(k):
    items = []
    for c in range(1, CHAPTERS + 1):
        subs = "".join('<li><a href="c%d.html#s%d">Section %d</a></li>'
                       % (c, s, s) for s in range(1, SECTIONS + 1))
        items.append('<li><a href="c%d.html">Chapter %d</a><ul>%s</ul></li>'
                     % (c, c, subs))
    return '<p>Guide %d</p><ul>%s</ul>' % (k, "".join(items))


def main():
    out = sys.argv[1]
    root = os.path.join(out, "hosts", "127.0.1.1")
    files, content = {}, ["/"]
    menu = "<ul>%s</ul>" % "".join(
        '<li><a href="/g%d/index.html">Guide %d</a></li>' % (k, k)
        for k in range(1, GUIDES + 1))
    files["index.html"] = page(
        "Documentation", menu,
        PROSE * 3 + 'There is also <a href="/book/">a book</a>. ' + PROSE +
        'See <a href="/docs/">the manual</a> and <a href="/land/">the '
        'project</a>. ' + PROSE)
    bar = "".join('<li><a href="/docs/%s.html">%s</a></li>' % (n, n.title())
                  for n in ("start", "guide", "api", "release"))
    cards = "".join('<div class="card"><a href="/docs/%s.html">%s</a>'
                    '<p>%s</p></div>' % (n, n.title(), PROSE)
                    for n in ("start", "guide", "api"))
    files["docs/index.html"] = (
        "<!doctype html><html><head><title>Manual</title></head><body>\n"
        "<nav class=\"navbar\"><ul>%s</ul></nav>\n"
        "<main><h1>Manual</h1>%s</main>\n</body></html>\n" % (bar, cards))
    content.append("/docs/")
    for n in ("start", "guide", "api"):
        files["docs/%s.html" % n] = page(n.title(), "", PROSE * 2)
        content.append("/docs/%s.html" % n)
    files["docs/release.html"] = page(
        "Release notes", "", PROSE + "".join(
            '<a href="/docs/v%d.html">Version %d</a> ' % (v, v)
            for v in (1, 2)) + PROSE)
    content.append("/docs/release.html")
    for v in (1, 2):
        files["docs/v%d.html" % v] = page("Version %d" % v, "", PROSE)
        content.append("/docs/v%d.html" % v)
    files["land/index.html"] = page(
        "The project", '<a href="/land/a.html">A</a> '
        '<a href="/land/b.html">B</a>',
        PROSE + 'Back <a href="/">home</a>, or read <a href="/land/">this '
        'page</a> again. ' + PROSE)
    content.append("/land/")
    for n in ("a", "b"):
        files["land/%s.html" % n] = page(n.upper(), "", PROSE)
        content.append("/land/%s.html" % n)
    sidebar = "<ol>%s</ol>" % "".join(
        '<li><a href="/book/ch%d.html">Chapter %d</a></li>' % (n, n)
        for n in range(1, BOOK + 1))
    files["book/index.html"] = page("The book", sidebar, PROSE * 2)
    content.append("/book/")
    for n in range(1, BOOK + 1):
        files["book/ch%d.html" % n] = page("Chapter %d" % n, sidebar,
                                          PROSE * 3)
        content.append("/book/ch%d.html" % n)
    for k in range(1, GUIDES + 1):
        files["g%d/index.html" % k] = page("Guide %d" % k, outline(k),
                                           PROSE * 2)
        content.append("/g%d/" % k)  # url.strip_index_html
        for c in range(1, CHAPTERS + 1):
            files["g%d/c%d.html" % (k, c)] = page(
                "Guide %d, chapter %d" % (k, c), outline(k), PROSE * 4)
            content.append("/g%d/c%d.html" % (k, c))
    for name in ("about", "contact"):
        files[name + ".html"] = page(name.title(), "", PROSE)
    files["robots.txt"] = "User-agent: *\nDisallow:\n"
    write_files(root, files)
    write_list(os.path.join(out, "content.txt"),
               ["http://%s%s" % (HOST, u) for u in content])
    write_list(os.path.join(out, "navonly.txt"),
               ["http://%s/about.html" % HOST, "http://%s/contact.html" % HOST])


if __name__ == "__main__":
    main()
