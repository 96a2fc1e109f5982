#!/bin/sh
# demo-site: generate the bench site (gen_site.py, mounted at /bench from
# ../shared/bench) into /srv/site once, then serve it with nginx on :8080.
#
# Host names instead of IPs: the bench site names host i 127.0.1.(i+1),
# which means nothing on a compose network, so the site is generated with
# --ip-base demo- (hosts demo-1 .. demo-N, URLs http://demo-K:8080/...) and
# this container carries the network aliases demo-1 .. demo-N
# (docker-compose.yml); nginx picks the document root by Host header
# (docker/demo-site.conf). /srv/site/roots.txt holds the N root URLs, the
# seed service uploads them. /srv/site/.ready marks a complete site.
#
# Environment: DEMO_HOSTS (default 8, at most the aliases in the compose
# file), DEMO_PAGES (pages per host, default 200), DEMO_SEED (default 1).
set -eu
SITE=/srv/site
HOSTS=${DEMO_HOSTS:-8}
PAGES=${DEMO_PAGES:-200}
SEED=${DEMO_SEED:-1}
STAMP="$HOSTS $PAGES $SEED"
if [ ! -f "$SITE/.ready" ] || [ "$(cat "$SITE/.ready")" != "$STAMP" ]; then
    [ -f /bench/gen_site.py ] || { echo "demo-site: /bench/gen_site.py missing (mount ../shared/bench)" >&2; exit 1; }
    rm -rf "${SITE:?}"/* "$SITE/.ready"
    python3 /bench/gen_site.py --out "$SITE" --hosts "$HOSTS" --pages "$PAGES" \
        --seed "$SEED" --ip-base demo- --port 8080 >/tmp/gen.log
    echo "$STAMP" >"$SITE/.ready"
fi
echo "demo-site: $HOSTS hosts x $PAGES pages, roots:"
cat "$SITE/roots.txt"
exec nginx -c /etc/dcrawl/demo-site.conf -g 'daemon off;'
