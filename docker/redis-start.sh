#!/bin/sh
# redis-start: the compose redis service's command. Starts redis-server
# with conf/redis.conf (/etc/dcrawl/redis.conf) plus, read from standard
# input so they never show on a command line:
#   - requirepass, the password in the compose secret redis_password
#     (REDIS_PASSWORD_FILE, default /run/secrets/redis_password);
#   - bind: this container's own addresses (`hostname -I`: its compose
#     network) and 127.0.0.1 for the healthcheck; never a published port;
#   - masterauth, the same password, for when this server is (or Sentinel
#     makes it) a replica; REDIS_REPLICAOF ("host port") starts it as a
#     replica of that master (docker/docker-compose.ha.yml).
# Refuses to start without a password (docker/make-secret.sh makes one).
# REDIS_CONF overrides the configuration file (tests/e2e/auth.sh).
set -eu
file=${REDIS_PASSWORD_FILE:-/run/secrets/redis_password}
if [ ! -f "$file" ] || [ ! -s "$file" ]; then
    echo "redis-start: no password in $file (run docker/make-secret.sh" \
         "before docker compose up)" >&2
    exit 2
fi
addrs=$(hostname -I 2>/dev/null || true)
if [ -z "$addrs" ]; then
    echo "redis-start: this container has no network address" >&2
    exit 2
fi
# redis.conf quoting: "..." with \\ and \" escaped; first line only
pw=$(head -n 1 "$file" | tr -d '\r' | sed 's/\\/\\\\/g; s/"/\\"/g')
# exec: redis-server becomes this process (PID 1 gets SIGTERM, shuts down
# cleanly); the heredoc is its standard input
exec redis-server "${REDIS_CONF:-/etc/dcrawl/redis.conf}" - <<END
bind $addrs 127.0.0.1
protected-mode yes
requirepass "$pw"
masterauth "$pw"
${REDIS_REPLICAOF:+replicaof $REDIS_REPLICAOF}
END
