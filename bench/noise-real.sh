#!/usr/bin/env bash
# noise-real.sh [DCRAWL] [DEPTH] [--set k=v ...]: the noise filter on real
# documentation nobody here wrote. Serves bench/real-sites.sh's sites (fifteen
# Debian documentation packages, one generator each) with nginx on
# 127.0.3.1-15:8090 and crawls each from its seed to DEPTH (default 3)
# twice, with default settings except politeness.delay=0: once with
# noise.enabled=false, once with the noise filter as configured (the
# default rule, plus any --set given after DEPTH). Per site it prints the
# pages each crawl fetched (status 200), the share of the noise-off set the
# noise-on crawl keeps (the goal is >= 0.97), and the 10 most frequent URL
# patterns of the pages it dropped (digit runs -> N, the last path
# segment cut after its first word: sql-createtable.html -> sql-*.html),
# each with a count and one example, so a reader can judge whether they
# are boilerplate. SITES="python git" limits the run to those sites.
# NET=127.0.5 moves the servers off 127.0.3.x, W=DIR the work files. Work files in /tmp/noise-real/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DCRAWL=${1:-$HERE/../build-rel/dcrawl}
DEPTH=${2:-3}
shift $(($# < 2 ? $# : 2))
EXTRA=("$@")
W=${W:-/tmp/noise-real}
. "$HERE/real-sites.sh"
# NET=127.0.N serves the sites on other addresses than real-sites.sh's
# 127.0.3.x (when another run holds those)
if [ -n "${NET:-}" ]; then
    REAL_SITES_TABLE=${REAL_SITES_TABLE//127.0.3./$NET.}
    REAL_SITES=${REAL_SITES//127.0.3./$NET.}
fi
rm -rf "$W"; mkdir -p "$W"
real_sites_start "$W/nginx" || exit 1
trap real_sites_stop EXIT INT TERM
crawl() { # name url mode(off|on)
    local set=(--set noise.enabled=false)
    [ "$3" = on ] && set=("${EXTRA[@]}")
    echo "$2" >"$W/$1.seeds"
    timeout 900 "$DCRAWL" crawl --seeds "$W/$1.seeds" --depth "$DEPTH" \
        --out "$W/$1-$3" --set politeness.delay=0 "${set[@]}" \
        >"$W/$1-$3.log" 2>&1 || { cat "$W/$1-$3.log"; return 1; }
}
rc=0
while read -r name url; do
    [ -n "${SITES:-}" ] && [[ " $SITES " != *" $name "* ]] && continue
    crawl "$name" "$url" off || { rc=1; continue; }
    crawl "$name" "$url" on || { rc=1; continue; }
    python3 - "$name" "$W/$name-on/merged/pages.jsonl" \
        "$W/$name-off/merged/pages.jsonl" <<'PY' || rc=1
import collections, json, re, sys
from urllib.parse import urlsplit
def ok(path):
    s = set()
    for line in open(path):
        p = json.loads(line)
        if p.get("status") == 200 and not p["url"].endswith("/robots.txt"):
            s.add(p["url"])
    return s
def pattern(u):
    # digit runs -> N; the last segment keeps its first word (up to - _ .)
    path = re.sub(r"[0-9]+", "N", urlsplit(u).path)
    d, _, last = path.rpartition("/")
    if not last:
        return d + "/"
    stem, dot, ext = last.rpartition(".") if "." in last else (last, "", "")
    word = re.split(r"[-_.]", stem, 1)
    head = word[0] + "-*" if len(word) > 1 else "*"
    return d + "/" + head + dot + ext
name, on, off = sys.argv[1], ok(sys.argv[2]), ok(sys.argv[3])
miss = off - on
share = len(on & off) / max(1, len(off))
print("%s: noise off %d pages, noise on %d; kept %.4f of the noise-off set, %d dropped%s"
      % (name, len(off), len(on), share, len(miss), "" if share >= 0.97 else "  [below 0.97]"))
pats = collections.Counter(pattern(u) for u in miss)
ex = {}
for u in sorted(miss):
    ex.setdefault(pattern(u), u)
for p, n in pats.most_common(10):
    print("    %5d  %-40s e.g. %s" % (n, p, urlsplit(ex[p]).path))
PY
    grep -h "noise:" "$W/$name-on.log" | sed "s/^/    on: /"
done <<<"$REAL_SITES"
exit $rc
