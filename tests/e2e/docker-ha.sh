#!/usr/bin/env bash
# e2e docker-ha: the HA overlay's scripts (docker/docker-compose.ha.yml),
# run as processes since no container engine runs here: a master and a
# replica started by docker/redis-start.sh (the replica with
# REDIS_REPLICAOF), three sentinels by docker/sentinel-start.sh, all with
# the password of one secret file, as the compose services run them.
# Inside a network namespace of its own (unshare -n, loopback up; fixed
# ports); `hostname -I` is faked to answer 127.0.0.2, the "container
# address" the scripts bind next to 127.0.0.1.
# Checks: the replica syncs with the password (masterauth); the sentinels
# find the replica and each other; `dcrawl seed` through the sentinel URL
# waits for the replica ("seeds: on all 1 replicas"); the master gets
# kill -9 and the sentinels promote the replica; the same seeds uploaded
# again through the same URL are all "already seen" (they were on the
# replica); the old master, started again by redis-start.sh from its
# AOF, is turned into a replica of the promoted one and syncs; no
# command line holds the password, and the sentinel's file is mode 600.
if [ "${DOCKERHA_NS:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "FAIL - runs as root (unshare -n)"; exit 1; }
    DOCKERHA_NS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up || { echo "FAIL - loopback up in the namespace"; exit 1; }
. "$(dirname "$0")/lib.sh"
for t in redis-server redis-cli; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
unset DCRAWL_REDIS_URL DCRAWL_REDIS_PASSWORD DCRAWL_REDIS_USER
PW='Ha-S3cr3t pw'
MPORT=6701 RPORT=6702
SPORTS=(26701 26702 26703)
NAME=dcrawl
D=$WORK/ha
mkdir -p "$D/bin"
printf '#!/bin/sh\necho 127.0.0.2\n' >"$D/bin/hostname"
chmod +x "$D/bin/hostname"
printf '%s\n' "$PW" >"$D/secret"
chmod 600 "$D/secret"
export DCRAWL_REDIS_PASSWORD_FILE=$D/secret
declare -A PID=()

# server NAME PORT [REPLICAOF]: docker/redis-start.sh with conf/redis.conf
# (its dir and port changed; the module from this build)
server() {
    local dir=$D/$1
    mkdir -p "$dir"
    sed -e "s|^dir .*|dir $dir|" -e "s|^port .*|port $2|" \
        -e "s|^loadmodule .*|${SEEN_MODULE:+loadmodule $SEEN_MODULE}|" \
        "$SRC/conf/redis.conf" >"$dir/redis.conf"
    (close_fds; PATH=$D/bin:$PATH REDIS_CONF=$dir/redis.conf REDIS_PASSWORD_FILE=$D/secret \
        REDIS_REPLICAOF=${3:-} exec sh "$SRC/docker/redis-start.sh") >>"$dir/log" 2>&1 &
    PID[$1]=$!
    REDIS_PIDS+=($!)
}
sentinel() { # sentinel K
    local dir=$D/sentinel-$1
    mkdir -p "$dir"
    (close_fds; PATH=$D/bin:$PATH REDIS_PASSWORD_FILE=$D/secret SENTINEL_CONF=$dir/sentinel.conf \
        SENTINEL_PORT=${SPORTS[$1]} SENTINEL_MASTER="127.0.0.1 $MPORT" SENTINEL_DOWN_AFTER_MS=1000 \
        exec sh "$SRC/docker/sentinel-start.sh") >"$dir/log" 2>&1 &
    PID[sentinel-$1]=$!
    REDIS_PIDS+=($!)
}
secs_since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.3f", t1 - t0 }'; }
rc_() { REDISCLI_AUTH=$PW redis-cli "$@" 2>/dev/null | tr -d '\r'; }
info_field() { rc_ -p "$1" info replication | awk -F: -v f="$2" '$1 == f { print $2 }'; }
up() { [ "$(rc_ -p "$1" ping)" = PONG ]; }
synced() { [ "$(info_field "$1" master_link_status)" = up ]; }
master_is() { [ "$(redis-cli -p "${SPORTS[0]}" sentinel get-master-addr-by-name "$NAME" 2>/dev/null | tr '\n' ' ')" = "127.0.0.1 $1 " ]; }
replica_of() { [ "$(info_field "$1" role)" = slave ] && [ "$(info_field "$1" master_port)" = "$2" ] && synced "$1"; }
URL="redis-sentinel://127.0.0.1:${SPORTS[0]},127.0.0.1:${SPORTS[1]},127.0.0.1:${SPORTS[2]}/$NAME"

server master $MPORT
server replica $RPORT "127.0.0.1 $MPORT"
check "redis-start: master and replica answer with the password" wait_for 10 eval "up $MPORT && up $RPORT"
check "redis-start REDIS_REPLICAOF: the replica syncs with the password (masterauth)" wait_for 20 synced $RPORT
for k in 0 1 2; do sentinel $k; done
check "sentinel-start: 3 sentinels know the master, the replica and each other" wait_for 30 sentinels_ready "$NAME" "${SPORTS[@]}"
check "sentinel-start: its file (with the password) is mode 600" \
    [ "$(stat -c %a "$D/sentinel-0/sentinel.conf")" = 600 ]
check "sentinel-start: bound to the container address and 127.0.0.1" \
    eval '[ "$(redis-cli -h 127.0.0.2 -p ${SPORTS[0]} ping)" = PONG ]'

python3 -c 'for i in range(1, 301): print("http://127.0.1.%d:8080/p%d.html" % (i % 5 + 1, i))' >"$D/seeds.txt"
"$DCRAWL" seed --redis "$URL" --depth 2 "$D/seeds.txt" >"$D/seed1.log" 2>&1
check "seed through the sentinels: exit 0" [ $? -eq 0 ]
check "seed: 300 accepted, waited for the replica" \
    eval 'grep -q "^seeds: 300 accepted" "$D/seed1.log" && grep -q "^seeds: on all 1 replicas" "$D/seed1.log"'
cat "$D/seed1.log"

kill -9 "${PID[master]}"
wait "${PID[master]}" 2>/dev/null
t0=$(date +%s.%N)
check "failover: the sentinels promote the replica" wait_for 60 eval "master_is $RPORT && [ \"\$(info_field $RPORT role)\" = master ]"
echo "promoted $(secs_since "$t0") s after the kill"
"$DCRAWL" seed --redis "$URL" --depth 2 "$D/seeds.txt" >"$D/seed2.log" 2>&1
check "seed again through the same URL: exit 0" [ $? -eq 0 ]
check "the promoted replica had every seed (0 accepted, 300 already seen)" \
    grep -q "^seeds: 0 accepted, 300 already seen" "$D/seed2.log"
cat "$D/seed2.log"

server master $MPORT
# Sentinel converts it 8 s after it answers as a master (4 publish periods),
# ~10 s in a quiet run; a sentinel in TILT mode (its timer ran late, as
# on a loaded CI machine) acts on nothing for 30 s more: hence 120 s, and
# what the sentinels did when it still fails
t0=$(date +%s.%N)
if wait_for 120 replica_of $MPORT $RPORT; then
    ok "the old master, started again, becomes a replica of the promoted one and syncs"
    echo "converted and synced $(secs_since "$t0") s after its restart"
else
    fail "the old master, started again, becomes a replica of the promoted one and syncs"
    grep -h "tilt\|convert-to-slave\|sdown\|odown\|switch-master\|failover" "$D"/sentinel-*/log | tail -40
    tail -20 "$D/master/log"
fi
for p in "${PID[@]}"; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done >"$D/cmdlines"
check "no command line holds the password" eval '! grep -q "S3cr3t" "$D/cmdlines"'
check "the logs hold no password" eval '! grep -rq "S3cr3t" "$D"/*/log "$D"/seed*.log'
finish
