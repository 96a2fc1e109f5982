#!/usr/bin/env bash
# noise-real.sh [DCRAWL] [DEPTH]: the noise filter on real documentation
# nobody here wrote. Installs Debian's python3.11-doc and postgresql-doc-15
# (apt-get, needs root or sudo), serves their HTML trees with a private
# nginx on 127.0.0.2:8090 and 127.0.0.3:8090 (config, pid and logs in
# /tmp/noise-real/), crawls each with noise off and with noise on under
# both block rules (noise.block_rule=ratio, the default, and repeated) to
# DEPTH (default 30) and prints pages reached and the share of the
# noise-off set that each noise-on crawl keeps (goal >= 95 %); a third
# noise-on crawl, repeated-nolook, shows the repeated rule with the cluster
# stage's look-alike drop turned off (noise.similarity=1).
set -uo pipefail
DCRAWL=${1:-$(dirname "$0")/../build/dcrawl}
DEPTH=${2:-30}
W=/tmp/noise-real
PY=/usr/share/doc/python3.11/html
PG=/usr/share/doc/postgresql-doc-15/html
SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
if [ ! -d "$PY" ] || [ ! -d "$PG" ]; then
    $SUDO apt-get install -y python3.11-doc postgresql-doc-15 >/dev/null || exit 1
fi
PY=$(readlink -f "$PY"); PG=$(readlink -f "$PG")
rm -rf "$W"; mkdir -p "$W/tmp"
cat >"$W/nginx.conf" <<CONF
worker_processes 2;
pid $W/nginx.pid;
error_log $W/error.log;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $W/tmp; proxy_temp_path $W/tmp;
  fastcgi_temp_path $W/tmp; uwsgi_temp_path $W/tmp; scgi_temp_path $W/tmp;
  server { listen 127.0.0.2:8090; root $PY; index index.html; }
  server { listen 127.0.0.3:8090; root $PG; index index.html; }
}
CONF
nginx -c "$W/nginx.conf" -p "$W" || exit 1
trap 'kill "$(cat "$W/nginx.pid")" 2>/dev/null' EXIT
crawl() { # name url mode (off, ratio, repeated or repeated-nolook)
    local set="--set noise.enabled=false"
    [ "$3" != off ] && set="--set noise.enabled=true --set noise.block_rule=${3%-nolook}"
    # repeated-nolook: the cluster stage's look-alike drop off (similarity 1
    # joins only equal URLs), to show what the block rule alone keeps
    [ "$3" = repeated-nolook ] && set="$set --set noise.similarity=1"
    echo "$2" >"$W/$1.seeds"
    # shellcheck disable=SC2086
    timeout 600 "$DCRAWL" crawl --seeds "$W/$1.seeds" --depth "$DEPTH" \
        --out "$W/$1-$3" --set politeness.delay=0 $set \
        >"$W/$1-$3.log" 2>&1 || { cat "$W/$1-$3.log"; return 1; }
    grep "noise:" "$W/$1-$3.log" | sed "s/^/  $1 $3:/"
}
for site in python:http://127.0.0.2:8090/ postgres:http://127.0.0.3:8090/; do
    name=${site%%:*}; url=${site#*:}
    crawl "$name" "$url" off || exit 1
    for rule in ratio repeated repeated-nolook; do
        crawl "$name" "$url" "$rule" || exit 1
        python3 - "$name block_rule=$rule" "$W/$name-$rule/merged/pages.jsonl" \
            "$W/$name-off/merged/pages.jsonl" <<'PY'
import json, sys
def ok(path):
    s = set()
    for line in open(path):
        p = json.loads(line)
        if p.get("status") == 200 and not p["url"].endswith("/robots.txt"):
            s.add(p["url"])
    return s
on, off = ok(sys.argv[2]), ok(sys.argv[3])
print("%s: noise off %d pages, noise on %d pages; noise on keeps %.4f of the noise-off set (%d missing)"
      % (sys.argv[1], len(off), len(on), len(on & off) / max(1, len(off)), len(off - on)))
PY
    done
done
