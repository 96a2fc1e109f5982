#!/bin/sh
# sentinel-start: a Redis Sentinel of the HA overlay
# (docker/docker-compose.ha.yml): it watches the master (SENTINEL_MASTER,
# "host port", default "redis 6379") under the name SENTINEL_NAME (default
# dcrawl, the name in the nodes' redis-sentinel:// URL) and promotes its
# replica when SENTINEL_QUORUM (default 2) sentinels find it down for
# SENTINEL_DOWN_AFTER_MS (default 5000).
#
# Sentinel rewrites its configuration file (what it learns: replicas,
# other sentinels, the current master), so the file is written here only
# when absent (SENTINEL_CONF, default /data/sentinel.conf, on the
# service's volume) and a restarted sentinel goes on from what it knew.
# The master's password (the compose secret redis_password,
# REDIS_PASSWORD_FILE) goes into that file only (mode 600), never on a
# command line. Sentinels themselves take no password: they hold no
# crawl data, only the master's address (dcrawl asks them without
# credentials). Compose service names are resolved (resolve-hostnames)
# and announced as names (announce-hostnames), so a restarted container
# with a new address is still found.
set -eu
. "$(dirname "$0")/redis-common.sh"
conf=${SENTINEL_CONF:-/data/sentinel.conf}
name=${SENTINEL_NAME:-dcrawl}
common_password sentinel-start
common_addrs sentinel-start
if [ ! -f "$conf" ]; then
    umask 077
    cat >"$conf" <<END
port ${SENTINEL_PORT:-26379}
bind $addrs 127.0.0.1
protected-mode no
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel monitor $name ${SENTINEL_MASTER:-redis 6379} ${SENTINEL_QUORUM:-2}
sentinel auth-pass $name "$pw"
sentinel down-after-milliseconds $name ${SENTINEL_DOWN_AFTER_MS:-5000}
sentinel failover-timeout $name 30000
sentinel parallel-syncs $name 1
END
fi
# redis-server in sentinel mode (Debian's redis-server has no separate
# redis-sentinel binary without the redis-sentinel package)
exec redis-server "$conf" --sentinel
