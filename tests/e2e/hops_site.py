#!/usr/bin/env python3
"""hops_site.py OUT: a one-host site (OUT/hosts/127.0.1.1/) whose site map
is one menu hop from the home page but three content hops away, as
ImageMagick's and IPython's documentation are built:

  /              prose that links to /a1.html and to four leaves
                 /bK.html; a <header> menu of About, Contact and Site map
                 (/map.html), which the default noise rule drops (a small
                 menu beside a page whose text leads on is navigation on
                 the first page too)
  /a1.html       prose linking to /a2.html
  /a2.html       prose linking to /map.html
  /map.html      prose linking to /m1.html and /m2.html
  /mK.html       prose linking to /mK/deep.html
  /mK/deep.html  prose linking to /mK/deeper.html
  /robots.txt    allows everything

Every page carries the <header>. Over all links, /map.html is 1 hop from
the seed, /mK.html 2, /mK/deep.html 3, /mK/deeper.html 4. A crawl to
depth 3 with the noise filter must fetch map, mK and mK/deep at those
depths (the menu link still tells the distance it hides) but not
mK/deeper (4 hops over any path) nor about and contact (no content link
reaches them). OUT/depths.txt lists "URL DEPTH" for the pages that must
be fetched, OUT/absent.txt the pages that must not.
"""
import os
import sys

from site_files import write_files, write_list

HOST = "127.0.1.1:8080"
PROSE = ("This page has a paragraph of ordinary prose, the kind of text a "
         "reader comes for, long enough to be content on its own. ")


def page(title, body):
    return ("<!doctype html><html><head><title>%s</title></head><body>\n"
            "<header><a href=\"/about.html\">About</a> "
            "<a href=\"/contact.html\">Contact</a> "
            "<a href=\"/map.html\">Site map</a></header>\n"
            "<div class=\"content\"><h1>%s</h1><p>%s</p></div>\n"
            "</body></html>\n" % (title, title, body))


def prose_to(*links):
    return PROSE + "".join('Read on in <a href="%s">%s</a>. %s'
                           % (u, u, PROSE) for u in links)


def main():
    out = sys.argv[1]
    root = os.path.join(out, "hosts", "127.0.1.1")
    files, depths = {}, {}
    files["index.html"] = page("Home", prose_to(
        "/a1.html", "/b1.html", "/b2.html", "/b3.html", "/b4.html"))
    depths["/"] = 0
    for k in range(1, 5):
        files["b%d.html" % k] = page("B%d" % k, prose_to())
        depths["/b%d.html" % k] = 1
    files["a1.html"] = page("A1", prose_to("/a2.html"))
    depths["/a1.html"] = 1
    files["a2.html"] = page("A2", prose_to("/map.html"))
    depths["/a2.html"] = 2
    files["map.html"] = page("Site map", prose_to("/m1.html", "/m2.html"))
    depths["/map.html"] = 1
    for k in (1, 2):
        files["m%d.html" % k] = page("M%d" % k, prose_to("/m%d/deep.html" % k))
        depths["/m%d.html" % k] = 2
        files["m%d/deep.html" % k] = page("Deep", prose_to("/m%d/deeper.html"
                                                           % k))
        depths["/m%d/deep.html" % k] = 3
        files["m%d/deeper.html" % k] = page("Deeper", prose_to())
    for name in ("about", "contact"):
        files[name + ".html"] = page(name.title(), prose_to())
    files["robots.txt"] = "User-agent: *\nDisallow:\n"
    write_files(root, files)
    write_list(os.path.join(out, "depths.txt"),
               ["http://%s%s %d" % (HOST, u, d)
                for u, d in sorted(depths.items())])
    write_list(os.path.join(out, "absent.txt"),
               ["http://%s%s" % (HOST, u) for u in
                ("/about.html", "/contact.html", "/m1/deeper.html",
                 "/m2/deeper.html")])


if __name__ == "__main__":
    main()
