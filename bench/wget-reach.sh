#!/usr/bin/env bash
# wget-reach.sh [SITE...]: does a noise-off `dcrawl crawl` reach every HTML
# page that `wget -r -l N` reaches with the same link rules?
#
# Sites: the real documentation sites of bench/real-sites.sh, plus
# "bigpages", tests/e2e/bigpages.py's site with a 3 MB and a 9 MB index
# page whose links run to their last bytes (a private nginx on
# 127.0.3.20:8090). Default: all of them; name some to run only those.
#
# Per site, both crawls start at the site's seed, depth DEPTH (default 3):
#   dcrawl crawl --depth N --set noise.enabled=false --set politeness.delay=0
#       --set scope.mode=host --set parse.threads=2
#     scope.mode=host: wget without -H stays on the seed's host; with the
#     default "any", dcrawl would follow the sites' links to python.org &c.,
#     which must not leave loopback and are not part of the comparison.
#   wget -r -l N -e robots=on --follow-tags=a,area,frame,iframe
#       -R <scope.skip_suffixes> --ignore-case
#     robots.txt obeyed, same host only (wget's default), no page
#     requisites, and only the tags dcrawl takes links from (wget's default
#     table also follows img, script, link, embed, ...).
# Then bench/wget_reach.py compares the sets of HTML pages each got with
# status 200, and prints per site: wget pages, dcrawl pages, both,
# only-wget (up to 10, each with a reason) and only-dcrawl. The dcrawl
# process's peak RSS (VmHWM, tests/e2e/peak_rss.py) is printed with each
# site, the embedded redis-server's apart.
#
# Environment: DCRAWL (default build-rel/dcrawl), DEPTH, WORK (default
# /tmp/wget-reach). Installs wget and the sites' packages when missing.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
DCRAWL=${DCRAWL:-$SRC/build-rel/dcrawl}
DEPTH=${DEPTH:-3}
WORK=${WORK:-/tmp/wget-reach}
. "$HERE/real-sites.sh"

[ -x "$DCRAWL" ] || { echo "wget-reach: no $DCRAWL (build build-rel first)" >&2; exit 1; }
if ! command -v wget >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wget >/dev/null ||
        { echo "wget-reach: cannot install wget" >&2; exit 1; }
fi

BIG_IP=127.0.3.20
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'real_sites_stop; bigpages_stop "$WORK/big"' EXIT INT TERM
real_sites_start "$WORK/real" || exit 1
bigpages_start "$WORK/big" $BIG_IP $REAL_SITES_PORT || exit 1
SITES="$REAL_SITES
bigpages http://$BIG_IP:$REAL_SITES_PORT/"

# wget rejects what dcrawl's defaults skip: read from the binary under
# test (`dcrawl config`), so a copy of this script outside the tree works
cfg=$("$DCRAWL" config) || { echo "wget-reach: $DCRAWL config failed" >&2; exit 1; }
suffixes=$(sed -n 's/^scope\.skip_suffixes=//p' <<<"$cfg")
rej=$(echo "$suffixes" | tr -s ' ' '\n' | sed -n 's/^\.//p' | paste -sd,)
maxrep=$(sed -n 's/^scope\.max_repeated_segments=//p' <<<"$cfg")
[ -n "$rej" ] && [ -n "$maxrep" ] ||
    { echo "wget-reach: no scope.skip_suffixes / max_repeated_segments in dcrawl config" >&2; exit 1; }

echo "depth $DEPTH; dcrawl $DCRAWL; wget $(wget --version | head -1)"
rows=()
while read -r name url; do
    [ -z "$name" ] && continue
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    d=$WORK/$name
    mkdir -p "$d"
    t0=$(date +%s%N)
    timeout 1800 python3 "$SRC/tests/e2e/peak_rss.py" "$d/rss" "$DCRAWL" crawl \
        --depth "$DEPTH" --out "$d/dcrawl" --set noise.enabled=false \
        --set politeness.delay=0 --set scope.mode=host --set parse.threads=2 \
        "$url" >"$d/dcrawl.log" 2>&1 || echo "$name: dcrawl exited $?" >&2
    t1=$(date +%s%N)
    timeout 1800 wget -r -l "$DEPTH" -nv -e robots=on --follow-tags=a,area,frame,iframe \
        -R "$rej" --ignore-case -P "$d/wget" -o "$d/wget.log" "$url"
    t2=$(date +%s%N)
    echo "== $name $url: dcrawl peak RSS $(awk '{printf "%s %s kB ", $1, $2}' "$d/rss"), $(( (t1 - t0) / 1000000 )) ms; wget $(( (t2 - t1) / 1000000 )) ms"
    python3 "$HERE/wget_reach.py" "$name" "$d/dcrawl/merged/pages.jsonl" "$d/wget.log" \
        "$d/wget" "${maxrep:-0}" | tee "$d/report"
    rows+=("$(head -1 "$d/report")")
done <<<"$SITES"
echo
echo "summary (HTML pages with status 200, depth $DEPTH):"
printf '%s\n' "${rows[@]}"
