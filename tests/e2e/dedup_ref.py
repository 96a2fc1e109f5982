#!/usr/bin/env python3
"""dedup_ref.py: inputs for tests/e2e/dedup.sh and the output `dcrawl dedup`
must print for them, computed here without dcrawl.

  dedup_ref.py DIR

Canonical URLs are of one shape, http(s)://hN.test/a/ID.html, already in
canonical form; a line is one of them spelled as the canonicalizer folds it
(upper-case scheme or host, explicit default port, #fragment, blanks
around), or a blank line, a # comment or a bad line. Writes (seeded, the
same every run):
  DIR/a.txt   300,000 lines over 40,000 canonical URLs (several chunks)
  DIR/b.txt   50,000 lines: URLs of a.txt and 10,000 others
  DIR/a.want, DIR/b.want  the new URLs in input order, canonical, when a.txt
              then b.txt are checked against an empty seen-set
  DIR/a.bad, DIR/b.bad  "NAME.txt:LINE: reason: text" of the bad lines
"""
import os
import random
import sys


def canon(k):
    return "%s://h%d.test/a/%d.html" % ("https" if k % 3 == 0 else "http",
                                        k % 97, k)


def spell(rng, k):
    u = canon(k)
    scheme, rest = u.split("://", 1)
    host, path = rest.split("/", 1)
    r = rng.random()
    if r < 0.1:
        scheme = scheme.upper()
    elif r < 0.2:
        host = host.upper()
    elif r < 0.3:
        host += ":443" if scheme == "https" else ":80"
    elif r < 0.4:
        path += "#frag%d" % rng.randrange(9)
    elif r < 0.45:
        return "  %s://%s/%s \t" % (scheme, host, path)
    return "%s://%s/%s" % (scheme, host, path)


def write(dirname, name, lines, seen):
    want = []
    bad = []
    with open(os.path.join(dirname, name + ".txt"), "w") as f:
        for no, (line, k) in enumerate(lines, 1):
            f.write(line + "\n")
            if k == "bad":
                bad.append("%s.txt:%d: not a crawlable http(s) URL: %s"
                           % (name, no, line))
            elif k is not None and k not in seen:
                seen.add(k)
                want.append(canon(k))
    with open(os.path.join(dirname, name + ".want"), "w") as f:
        f.write("".join(u + "\n" for u in want))
    with open(os.path.join(dirname, name + ".bad"), "w") as f:
        f.write("".join(b + "\n" for b in bad))


def lines_of(rng, n, ids):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.01:
            out.append(("", None))
        elif r < 0.015:
            out.append(("# comment http://x.test/", None))
        elif r < 0.02:
            out.append((rng.choice(["garbage", "ftp://h1.test/f",
                                    "javascript:void(0)"]), "bad"))
        else:
            k = rng.choice(ids)
            out.append((spell(rng, k), k))
    return out


def main():
    d = sys.argv[1]
    rng = random.Random(14)
    seen = set()
    write(d, "a", lines_of(rng, 300000, list(range(40000))), seen)
    write(d, "b", lines_of(rng, 50000, list(range(35000, 45000)) +
                           list(range(100000, 105000))), seen)


if __name__ == "__main__":
    main()
