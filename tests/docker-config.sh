#!/usr/bin/env bash
# docker-config.sh SRC: docker/ stays consistent with the repository (no
# Docker engine runs here, so images are never built; this checks what can
# be checked without one):
#  - docker-compose (Debian's 1.29) accepts docker/docker-compose.yml, and
#    with the HA overlay docker/docker-compose.ha.yml (replica, sentinels);
#  - the services redis, node, seed, demo-site, prometheus and grafana
#    exist; node has no container_name (node must scale); only prometheus
#    and grafana publish host ports, on 127.0.0.1 only; seed is one-shot
#    (restart "no"); redis, node and seed get the secret redis_password,
#    node and seed read it via DCRAWL_REDIS_PASSWORD_FILE, no Redis URL
#    holds a password; no depends_on waits for service_healthy (podman
#    never runs the healthchecks) and node and seed wait for Redis
#    themselves (DCRAWL_REDIS_CONNECT_WAIT);
#  - conf/redis.conf binds loopback only with protected-mode on, and
#    docker/redis-start.sh adds requirepass and protected-mode yes;
#  - monitoring agrees: node serves metrics on :9464
#    (DCRAWL_OUTPUT_METRICS_LISTEN), docker/prometheus.yml discovers the
#    service "node" on port 9464, every file the prometheus and grafana
#    services mount exists (the dashboard itself: tests/dashboard-check.py);
#  - every COPY source in docker/Dockerfile (not --from) exists in SRC,
#    every source directory of CMakeLists.txt is copied, and
#    conf/redis.conf loads the module from where the redis stage puts it;
#  - every apt package the Dockerfile installs exists in this machine's
#    apt lists (Debian 12), when apt lists are present (else it says so
#    and counts that check as skipped, not passed).
# The compose checks run first on broken copies of the config (a
# container_name added to node, grafana published on every address) to
# show they catch them.
set -uo pipefail
SRC=$1
DF=$SRC/docker/Dockerfile
YML=$SRC/docker/docker-compose.yml
PASS=0 FAIL=0 SKIP=0
ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }

# the block of one service in normalized `docker-compose config` output
service_block() { # service_block CONFIG NAME
    awk -v s="  $2:" '
        /^[^ ]/ { top = $0 }
        top == "services:" && $0 == s { on = 1; next }
        on && /^  [^ ]/ { on = 0 }
        on { print }' "$1"
}
# compose_checks CONFIG: prints problems, returns non-zero if any
compose_checks() {
    local cfg=$1 s rc=0
    for s in redis node seed demo-site prometheus grafana; do
        service_block "$cfg" "$s" | grep -q . || { echo "no service $s"; rc=1; }
    done
    if service_block "$cfg" node | grep -q '^    container_name:'; then
        echo "node has a container_name (cannot scale)"; rc=1
    fi
    for s in redis node seed demo-site; do
        if service_block "$cfg" "$s" | grep -q '^    ports:'; then
            echo "$s publishes host ports"; rc=1
        fi
    done
    for s in prometheus grafana; do
        if service_block "$cfg" "$s" | awk '/^    ports:/ { on = 1; next } /^    [^ -]/ { on = 0 }
                on && !/^    - "?127\.0\.0\.1:/ { bad = 1 } END { exit !bad }'; then
            echo "$s publishes a port on more than 127.0.0.1"; rc=1
        fi
    done
    service_block "$cfg" seed | grep -q "^    restart: \"\{0,1\}'\{0,1\}no" ||
        { echo "seed is not restart: \"no\""; rc=1; }
    for s in redis node seed; do
        service_block "$cfg" "$s" | grep -q '^    - source: redis_password$' ||
            { echo "$s lacks the secret redis_password"; rc=1; }
    done
    for s in node seed; do
        service_block "$cfg" "$s" |
            grep -q '^      DCRAWL_REDIS_PASSWORD_FILE: /run/secrets/redis_password$' ||
            { echo "$s does not read the password from the secret"; rc=1; }
    done
    # podman runs no healthchecks without systemd: such a dependency
    # would never start its service there
    if grep -q 'condition: service_healthy' "$cfg"; then
        echo "a depends_on waits for service_healthy"; rc=1
    fi
    for s in node seed; do
        service_block "$cfg" "$s" | grep -q "^      DCRAWL_REDIS_CONNECT_WAIT: '\{0,1\}[1-9]" ||
            { echo "$s does not wait for Redis (DCRAWL_REDIS_CONNECT_WAIT)"; rc=1; }
    done
    if grep -q 'redis[a-z-]*://[^ ]*@' "$cfg"; then
        echo "a Redis URL with a password in the compose file"; rc=1
    fi
    return $rc
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if docker-compose -f "$YML" config >"$WORK/config.yml" 2>"$WORK/err"; then
    ok "docker-compose config accepts docker/docker-compose.yml"
else
    cat "$WORK/err"
    bad "docker-compose config accepts docker/docker-compose.yml"
fi

# the checks catch a container_name on node
awk '{ print } $0 == "  node:" { print "    container_name: dcrawl-node" }' \
    "$WORK/config.yml" >"$WORK/broken.yml"
if compose_checks "$WORK/broken.yml" >/dev/null; then
    bad "compose checks reject a node with container_name"
else
    ok "compose checks reject a node with container_name"
fi
# ... and a password on a command line instead of the secret
sed 's|redis://redis:6379|redis://:hunter2@redis:6379|' "$WORK/config.yml" >"$WORK/broken2.yml"
if compose_checks "$WORK/broken2.yml" >/dev/null; then
    bad "compose checks reject a password in a Redis URL"
else
    ok "compose checks reject a password in a Redis URL"
fi
# ... and grafana published on every address
sed 's/^    - 127\.0\.0\.1:3000:3000/    - 3000:3000/' "$WORK/config.yml" >"$WORK/broken3.yml"
if cmp -s "$WORK/config.yml" "$WORK/broken3.yml" || compose_checks "$WORK/broken3.yml" >/dev/null; then
    bad "compose checks reject grafana published beyond 127.0.0.1"
else
    ok "compose checks reject grafana published beyond 127.0.0.1"
fi
what="services redis, node, seed, demo-site, prometheus, grafana; node scalable; ports on 127.0.0.1 only; seed one-shot"
if out=$(compose_checks "$WORK/config.yml"); then
    ok "$what"
else
    echo "$out"
    bad "$what"
fi

# the HA overlay (docker/docker-compose.ha.yml) merges with the base file:
# the same checks hold, plus a replica and three sentinels (their start
# scripts are in the redis image), no port of theirs published, and node
# and seed find the master through the sentinels (no password in the URL)
HA=$SRC/docker/docker-compose.ha.yml
if docker-compose -f "$YML" -f "$HA" config >"$WORK/ha.yml" 2>"$WORK/err"; then
    ok "docker-compose config accepts docker-compose.yml + docker-compose.ha.yml"
    what="HA overlay: redis-replica, sentinel-1..3 (sentinel-start), nothing of theirs published; node and seed on redis-sentinel://"
    out=$(compose_checks "$WORK/ha.yml")
    for s in redis-replica sentinel-1 sentinel-2 sentinel-3; do
        service_block "$WORK/ha.yml" "$s" | grep -q . || out="$out no service $s;"
        service_block "$WORK/ha.yml" "$s" | grep -q '^    ports:' && out="$out $s publishes ports;"
    done
    for s in sentinel-1 sentinel-2 sentinel-3; do
        service_block "$WORK/ha.yml" "$s" | grep -q -- '- sentinel-start' || out="$out $s does not run sentinel-start;"
    done
    for s in node seed; do
        service_block "$WORK/ha.yml" "$s" |
            grep -q -- '- redis-sentinel://sentinel-1:26379,sentinel-2:26379,sentinel-3:26379/dcrawl' ||
            out="$out $s is not on the sentinels;"
    done
    grep -q '^COPY docker/sentinel-start.sh /usr/local/bin/sentinel-start' "$DF" ||
        out="$out the redis image lacks sentinel-start;"
    if [ -z "$out" ]; then ok "$what"; else echo "$out"; bad "$what"; fi
else
    cat "$WORK/err"
    bad "docker-compose config accepts docker-compose.yml + docker-compose.ha.yml"
fi

# monitoring: the port the nodes serve metrics on is the one Prometheus
# discovers, and what prometheus and grafana mount exists
mport=$(service_block "$WORK/config.yml" node | awk '$1 == "DCRAWL_OUTPUT_METRICS_LISTEN:" { n = split($2, a, ":"); gsub(/"/, "", a[n]); print a[n] }')
pyml=$SRC/docker/prometheus.yml
if [ -n "$mport" ] && grep -q "names: \[node\]" "$pyml" && grep -q "type: A" "$pyml" &&
    grep -q "port: $mport\$" "$pyml"; then
    ok "prometheus.yml discovers the node service on its metrics port $mport"
else
    bad "prometheus.yml discovers the node service on its metrics port (node: '${mport}')"
fi
missing=0
for f in prometheus.yml grafana/provisioning/datasources grafana/provisioning/dashboards \
    grafana/dashboards/dcrawl.json; do
    [ -e "$SRC/docker/$f" ] || { echo "missing docker/$f"; missing=1; }
done
if [ $missing = 0 ] && service_block "$WORK/config.yml" grafana | grep -q "docker/grafana/provisioning:/etc/grafana/provisioning"; then
    ok "the files prometheus and grafana mount exist"
else
    bad "the files prometheus and grafana mount exist"
fi

# COPY sources exist (paths relative to the build context, the repo root)
missing=0 n=0
while read -r src; do
    n=$((n + 1))
    [ -e "$SRC/$src" ] || { echo "COPY source missing: $src"; missing=1; }
done < <(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' "$DF")
if [ "$missing" = 0 ] && [ "$n" -gt 0 ]; then
    ok "all $n COPY sources of the Dockerfile exist"
else
    bad "COPY sources of the Dockerfile exist ($n found)"
fi

# every source directory CMakeLists.txt builds from (add_library /
# add_executable sources, add_subdirectory) is copied into the build stage
copied=$(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' "$DF")
used=$( { grep -oE '^\s*add_(library|executable)\([A-Za-z0-9_-]+( [A-Z]+)? +[a-z]+/' "$SRC/CMakeLists.txt" |
          awk '{ print $NF }'; grep -oE 'add_subdirectory\([a-z]+' "$SRC/CMakeLists.txt" |
          sed 's/.*(//'; } | sed 's,/$,,' | sort -u)
uncopied=$(for d in $used; do grep -qx "$d" <<<"$copied" || echo "$d"; done | tr '\n' ' ')
if [ -n "$used" ] && [ -z "$uncopied" ]; then
    ok "the Dockerfile copies every source directory CMakeLists.txt uses ($(wc -w <<<"$used"))"
else
    bad "the Dockerfile does not copy: ${uncopied:-(no directories found in CMakeLists.txt)}"
fi

# conf/redis.conf loads the module from where the redis stage copies it
mod=$(awk '$1 == "loadmodule" { print $2 }' "$SRC/conf/redis.conf")
if [ -n "$mod" ] && grep -q "^COPY --from=build /src/build/dcrawl-seen.so $mod\$" "$DF"; then
    ok "conf/redis.conf loadmodule $mod is where the redis stage puts it"
else
    bad "conf/redis.conf loadmodule '$mod' matches the Dockerfile"
fi

# conf/redis.conf: loopback only and protected-mode on by default (the
# compose service adds its network address and a password, redis-start.sh)
rc_bind=$(awk '$1 == "bind"' "$SRC/conf/redis.conf")
if grep -q '^protected-mode yes$' "$SRC/conf/redis.conf" &&
    ! grep -q '^protected-mode no' "$SRC/conf/redis.conf" &&
    [ "$rc_bind" = "bind 127.0.0.1 -::1" ]; then
    ok "conf/redis.conf: bind 127.0.0.1 -::1, protected-mode yes"
else
    bad "conf/redis.conf must bind loopback only with protected-mode yes (got '$rc_bind')"
fi
if grep -q '^requirepass "$pw"$' "$SRC/docker/redis-start.sh" &&
    grep -q '^protected-mode yes' "$SRC/docker/redis-start.sh" &&
    grep -q '^CMD \["redis-start"\]' "$DF" &&
    grep -q '^/docker/secrets/$' "$SRC/.gitignore"; then
    ok "compose redis: requirepass from the secret, protected-mode yes; docker/secrets/ not in git"
else
    bad "compose redis: requirepass from the secret, protected-mode yes; docker/secrets/ not in git"
fi

# apt packages: the words after "apt-get install" up to the next &&
pkgs=$(awk '
    {
        i = 1
        if (!on) {
            for (; i <= NF; i++)
                if ($i == "install" && $(i - 1) == "apt-get") break
            if (i > NF) next
            on = 1; i++
        }
        for (; i <= NF; i++) {
            if ($i == "&&") { on = 0; break }
            if ($i ~ /^[a-z0-9][a-z0-9.+-]+$/) print $i
        }
    }' "$DF" | sort -u)
if [ -z "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ]; then
    SKIP=$((SKIP + 1))
    echo "skip - apt lists absent: package names not checked"
else
    # one apt-cache call; a name it has no record for is missing
    found=$(apt-cache show $pkgs 2>/dev/null | awk '$1 == "Package:" { print $2 }' | sort -u)
    gone=$(comm -23 <(echo "$pkgs") <(echo "$found") | tr '\n' ' ')
    gone=${gone:+ $gone}
    if [ -z "$gone" ] && [ -n "$pkgs" ]; then
        ok "all $(echo "$pkgs" | wc -l) apt packages of the Dockerfile exist"
    else
        bad "apt packages missing:$gone"
    fi
fi
echo "docker-config: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -eq 0 ]
