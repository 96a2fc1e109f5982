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
. "$(dirname "$0")/redis-common.sh"
common_password redis-start
common_addrs redis-start
# exec: redis-server becomes this process (PID 1 gets SIGTERM, shuts down
# cleanly); the heredoc is its standard input
exec redis-server "${REDIS_CONF:-/etc/dcrawl/redis.conf}" - <<END
bind $addrs 127.0.0.1
protected-mode yes
requirepass "$pw"
masterauth "$pw"
${REDIS_REPLICAOF:+replicaof $REDIS_REPLICAOF}
END
