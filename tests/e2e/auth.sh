#!/usr/bin/env bash
# auth.sh: dcrawl against Redis servers that want credentials.
#  1. A TCP Redis with requirepass and an ACL user "crawler": a missing
#     password (NOAUTH), a wrong one, a wrong user password, a user without
#     any password, an unreadable redis.password_file: exit 2 with one line
#     on stderr naming the address, never the password; for status, seed,
#     node, dedup and crawl --redis. Percent-decoded userinfo ('@', ':',
#     '/' and ' ' in passwords) logs in.
#  2. A crawl: `dcrawl seed` with DCRAWL_REDIS_PASSWORD (default user),
#     `dcrawl node` as the ACL user with its password in
#     redis.password_file (not on its command line: /proc/PID/cmdline is
#     read while it runs); every client connection is killed mid-crawl and
#     the node logs in again as crawler (CLIENT LIST) and completes the
#     crawl. `dcrawl crawl --redis URL-with-password` prints its summary.
#     `dcrawl crawl` without --redis ignores the credential settings (its
#     embedded Redis has none).
#     Neither password appears in stdout/stderr, `dcrawl status` (table
#     and JSON), `dcrawl config`, any depth-*/*.jsonl, merged pages.jsonl
#     or WARC file (decompressed).
#  3. A unix socket with requirepass: unix://crawler:PW@/path,
#     unix:///path + DCRAWL_REDIS_PASSWORD.
#  4. A 3-master Redis Cluster with requirepass on every master and the
#     ACL user on each: seed + node crawl with
#     redis-cluster://crawler:PW@... (every master logged in), a slot
#     resharded mid-crawl (MOVED), a wrong password exits 2.
#  5. docker/redis-start.sh: Redis started from a password file, with
#     protected-mode on, bound to the given addresses, no command line
#     holding the password, NOAUTH without it.
# Args as lib.sh. Uses tests/e2e/polite_server.py (no nginx).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rcluster-lib.sh"
source "$(dirname "$0")/polite-lib.sh"   # its EXIT trap stops everything
unset DCRAWL_REDIS_URL DCRAWL_REDIS_PASSWORD DCRAWL_REDIS_PASSWORD_FILE DCRAWL_REDIS_USER

# Markers: every check greps for "S3cr3t" / "Cr4wl3r", which every raw or
# percent-encoded form of the passwords contains.
PW='Pw-S3cr3t@:/x'
UPW='Cr4wl3r p@ss:/%'
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
EPW=$(enc "$PW")
EUPW=$(enc "$UPW")
leaks() { grep -rlaE 'S3cr3t|Cr4wl3r' "$@" 2>/dev/null; }
no_leak() { # no_leak WHAT FILES...: neither password in FILES
    local what=$1 found
    shift
    found=$(leaks "$@")
    check "no password in $what${found:+ (found in: $found)}" test -z "$found"
}
# one_line_err FILE: exactly one line, and no password
one_line_err() { [ "$(wc -l <"$1")" -eq 1 ] && [ -z "$(leaks "$1")" ]; }

# start_auth_redis NAME ARGS...: redis-server with requirepass PW (given
# on standard input) and the ACL user crawler (password UPW); sets RDIR
start_auth_redis() {
    RDIR=$WORK/redis-$1
    shift
    mkdir -p "$RDIR"
    printf 'requirepass "%s"\n' "$PW" >"$RDIR/auth.conf"
    (close_fds; exec redis-server - --dir "$RDIR" --save '' --appendonly no \
        --daemonize no --set-max-intset-entries 8192 "$@" \
        ${SEEN_MODULE:+--loadmodule "$SEEN_MODULE"} <"$RDIR/auth.conf") >"$RDIR/log" 2>&1 &
    REDIS_PIDS+=($!)
}
acl_user() { # acl_user redis-cli-args...: create the ACL user crawler
    REDISCLI_AUTH=$PW redis-cli "$@" ACL SETUSER crawler on ">$UPW" '~*' '&*' '+@all' >/dev/null
}

# ---- 1. a TCP Redis with requirepass and an ACL user: errors ----
PORT=$(rcluster_free_port)
start_auth_redis tcp --port "$PORT" --bind 127.0.0.1
for i in $(seq 1 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
acl_user -p "$PORT"
check "ACL user crawler created" test "$(REDISCLI_AUTH=$PW redis-cli -p "$PORT" ACL WHOAMI)" = default
TCP=redis://127.0.0.1:$PORT
echo "http://127.0.0.1:1/" >"$WORK/one.txt"
mkdir -p "$WORK/e"

expect2() { # expect2 NAME PATTERN CMD...: exit 2, one clean line matching PATTERN
    local name=$1 pat=$2 rc
    shift 2
    "$@" >"$WORK/e/$name.out" 2>"$WORK/e/$name.err" </dev/null
    rc=$?
    check "$name: exit 2, one line, no password ($(head -c 160 "$WORK/e/$name.err"))" \
        eval '[ $rc -eq 2 ] && one_line_err "$WORK/e/$name.err" && grep -q -- "$pat" "$WORK/e/$name.err"'
}
noauth="redis 127.0.0.1:$PORT: authentication required (NOAUTH)"
expect2 status-noauth "$noauth" "$DCRAWL" status --redis "$TCP"
expect2 seed-noauth "$noauth" "$DCRAWL" seed --redis "$TCP" "$WORK/one.txt"
expect2 node-noauth "$noauth" "$DCRAWL" node --redis "$TCP" --out "$WORK/o-noauth"
expect2 dedup-noauth "$noauth" "$DCRAWL" dedup --redis "$TCP" "$WORK/one.txt"
expect2 crawl-noauth "$noauth" "$DCRAWL" crawl --redis "$TCP" --out "$WORK/o-crawl-noauth" http://127.0.0.1:1/
wrong="redis 127.0.0.1:$PORT: authentication failed (WRONGPASS"
expect2 status-wrong "$wrong" env DCRAWL_REDIS_PASSWORD=S3cr3t-wrong "$DCRAWL" status --redis "$TCP"
expect2 node-wrong "$wrong" env DCRAWL_REDIS_PASSWORD=S3cr3t-wrong "$DCRAWL" node --redis "$TCP" --out "$WORK/o-wrong"
expect2 seed-wrong-user "authentication failed (user crawler: WRONGPASS" \
    "$DCRAWL" seed --redis "redis://crawler:Cr4wl3r-no@127.0.0.1:$PORT" "$WORK/one.txt"
expect2 dedup-wrong-user "authentication failed (user crawler: WRONGPASS" \
    "$DCRAWL" dedup --redis "redis://crawler:Cr4wl3r-no@127.0.0.1:$PORT" "$WORK/one.txt"
expect2 crawl-wrong "$wrong" "$DCRAWL" crawl --redis "redis://:S3cr3t-no@127.0.0.1:$PORT" \
    --out "$WORK/o-crawl-wrong" http://127.0.0.1:1/
expect2 user-no-password "user crawler has no password" "$DCRAWL" status --redis "redis://crawler@127.0.0.1:$PORT"
expect2 password-file-missing "redis.password_file $WORK/nosuch: No such file" \
    "$DCRAWL" status --redis "$TCP" --set "redis.password_file=$WORK/nosuch"
: >"$WORK/empty-pw"
expect2 password-file-empty "is empty" "$DCRAWL" status --redis "$TCP" --set "redis.password_file=$WORK/empty-pw"
expect2 malformed-url "malformed redis URL" "$DCRAWL" status --redis "redis://:S3cr3t/x@127.0.0.1:$PORT"
expect2 bad-escape "malformed redis URL" "$DCRAWL" status --redis "redis://:S3cr3t%zz@127.0.0.1:$PORT"

# the good forms
"$DCRAWL" status --redis "redis://:$EPW@127.0.0.1:$PORT" >"$WORK/e/st-url.out" 2>&1
check "status with the default user's password in the URL (percent-encoded)" test $? -eq 0
"$DCRAWL" status --redis "redis://crawler:$EUPW@127.0.0.1:$PORT/0" >"$WORK/e/st-user.out" 2>&1
check "status as ACL user crawler (URL)" test $? -eq 0
check "status shows the URL with *** for the password" \
    grep -q "redis://crawler:\*\*\*@127.0.0.1:$PORT/0" "$WORK/e/st-user.out"
printf '%s\n' "$UPW" >"$WORK/upw"
chmod 600 "$WORK/upw"
DCRAWL_REDIS_USER=crawler DCRAWL_REDIS_PASSWORD_FILE=$WORK/upw \
    "$DCRAWL" status --redis "$TCP" --json >"$WORK/e/st-file.json" 2>&1
check "status --json as crawler, password from redis.password_file" test $? -eq 0
DCRAWL_REDIS_PASSWORD=$PW "$DCRAWL" config --show-origin \
    --set "redis.url=redis://crawler:$EUPW@h:1/2" >"$WORK/e/config.out" 2>&1
check "config shows redis.password and the URL's password as ***" \
    eval 'grep -q "^env:DCRAWL_REDIS_PASSWORD	redis.password=\*\*\*$" "$WORK/e/config.out" &&
          grep -q "redis.url=redis://crawler:\*\*\*@h:1/2$" "$WORK/e/config.out"'
"$DCRAWL" status --redis "$TCP" --set "redis.password=$PW" --set "redis.password_file=$WORK/upw" \
    >/dev/null 2>"$WORK/e/both.err"
rc=$?
check "redis.password and redis.password_file together: exit 2" \
    eval '[ $rc -eq 2 ] && grep -q "not both" "$WORK/e/both.err"'
no_leak "the error and status outputs" "$WORK/e"

# ---- 2. a crawl with credentials ----
site='{"origins": {
 "a": {"ip": "127.0.0.111", "delay": 0.15, "pages": {"/": {"links": ["/p1", "/p2", "/p3", "{b}/", "{c}/"]},
   "/p1": {"links": ["/p4"]}, "/p2": {}, "/p3": {}, "/p4": {"links": ["/p5"]}, "/p5": {}}},
 "b": {"ip": "127.0.0.112", "delay": 0.15, "pages": {"/": {"links": ["/q1", "/q2"]}, "/q1": {"links": ["/q3"]},
   "/q2": {}, "/q3": {}}},
 "c": {"ip": "127.0.0.113", "delay": 0.15, "pages": {"/": {"links": ["/r1"]}, "/r1": {"links": ["/r2"]}, "/r2": {}}}}}'
pserve site "$site" || { fail "site server"; finish; }
echo "http://$(origin a)/" >"$SDIR/seeds.txt"
set_=(--set politeness.delay=0.2 --set noise.enabled=false --set crawl.node_id=n1)
want_pages='
want = {"a": ["/", "/p1", "/p2", "/p3", "/p4", "/p5"], "b": ["/", "/q1", "/q2", "/q3"], "c": ["/", "/r1", "/r2"]}
for o, ps in want.items():
    got = sorted(p for p in paths(o) if p != "/robots.txt")
    if got != sorted(ps): print(o, got)'
DCRAWL_REDIS_PASSWORD=$PW "$DCRAWL" seed --redis "$TCP" --depth 3 "${set_[@]}" "$SDIR/seeds.txt" \
    >"$SDIR/seed.log" 2>&1
check "seed with DCRAWL_REDIS_PASSWORD (default user)" test $? -eq 0
DCRAWL_REDIS_USER=crawler timeout 120 "$DCRAWL" node --redis "$TCP" --out "$SDIR/out" --exit-when-idle \
    "${set_[@]}" --set "redis.password_file=$WORK/upw" >"$SDIR/node.log" 2>&1 &
NODE=$!
for i in $(seq 1 100); do [ -s "$SDIR/requests.jsonl" ] && break; sleep 0.05; done
tr '\0' ' ' </proc/$NODE/cmdline >"$SDIR/cmdline" 2>/dev/null
check "the running node's command line names no password ($(cat "$SDIR/cmdline"))" \
    eval '[ -s "$SDIR/cmdline" ] && [ -z "$(leaks "$SDIR/cmdline")" ]'
killed=$(REDISCLI_AUTH=$PW redis-cli -p "$PORT" CLIENT KILL USER crawler)
check "the node's connection killed mid-crawl ($killed)" test "${killed:-0}" -ge 1
relogin=0
for i in $(seq 1 100); do
    REDISCLI_AUTH=$PW redis-cli -p "$PORT" CLIENT LIST | grep -q ' user=crawler ' && { relogin=1; break; }
    kill -0 $NODE 2>/dev/null || break
    sleep 0.05
done
wait $NODE
rc=$?
pstop
check "node as crawler (redis.password_file) exits 0 (got $rc)" [ $rc -eq 0 ] || cat "$SDIR/node.log"
check "the node logged in again as crawler after the kill" test $relogin -eq 1
pycheck "every page fetched exactly once" "$want_pages"
"$DCRAWL" merge "$SDIR/out" >"$SDIR/merge.log" 2>&1
check "merge of the node's output" test $? -eq 0
DCRAWL_REDIS_PASSWORD=$PW "$DCRAWL" status --redis "$TCP" >"$SDIR/status.txt" 2>&1 &&
    "$DCRAWL" status --redis "redis://crawler:$EUPW@127.0.0.1:$PORT" --json >"$SDIR/status.json" 2>&1
check "status after the crawl (table, JSON)" test $? -eq 0
check "status counts the crawl's pages" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["total"]["done"] == 13 and d["redis"].startswith("redis://crawler:***@") else 1)' "$SDIR/status.json"
ls "$SDIR"/out/depth-*/*.jsonl "$SDIR"/out/merged/pages.jsonl >/dev/null 2>&1
check "depth-*/*.jsonl and merged/pages.jsonl exist" test $? -eq 0
mkdir -p "$SDIR/warc-text"
n=0
for w in $(find "$SDIR/out" -name '*.warc.gz'); do
    n=$((n + 1))
    zcat "$w" >"$SDIR/warc-text/$n.warc"
done
check "$n WARC files decompressed, warcinfo among them" \
    eval '[ $n -gt 0 ] && grep -qa "WARC-Type: warcinfo" "$SDIR"/warc-text/*.warc'
no_leak "node/seed logs, status, output, WARCs" "$SDIR"

# dcrawl crawl --redis with the password in the URL: the summary
pserve site2 "$site" || { fail "site server 2"; finish; }
echo "http://$(origin a)/" >"$SDIR/seeds.txt"
"$DCRAWL" crawl --redis "redis://crawler:$EUPW@127.0.0.1:$PORT/3" --out "$SDIR/out" --depth 1 \
    --set politeness.delay=0 --set noise.enabled=false --seeds "$SDIR/seeds.txt" >"$SDIR/crawl.out" 2>"$SDIR/crawl.err"
rc=$?
pstop
check "crawl --redis as crawler in db 3 exits 0 (got $rc)" [ $rc -eq 0 ] || cat "$SDIR/crawl.err"
check "crawl printed its summary" grep -q "pages" "$SDIR/crawl.out"
for w in $(find "$SDIR/out" -name '*.warc.gz'); do zcat "$w"; done >"$SDIR/crawl-warcs.txt"
no_leak "crawl's summary, output and WARCs" "$SDIR"

# dcrawl crawl without --redis: its embedded Redis has no password, so the
# credential settings (meant for an external Redis) are not used on it
pserve site4 "$site" || { fail "site server 4"; finish; }
echo "http://$(origin a)/" >"$SDIR/seeds.txt"
DCRAWL_REDIS_USER=crawler DCRAWL_REDIS_PASSWORD=$PW "$DCRAWL" crawl --out "$SDIR/out" --depth 1 \
    --set politeness.delay=0 --set noise.enabled=false --seeds "$SDIR/seeds.txt" \
    >"$SDIR/crawl.out" 2>"$SDIR/crawl.err"
rc=$?
pstop
check "crawl with its embedded Redis and DCRAWL_REDIS_PASSWORD set exits 0 (got $rc)" [ $rc -eq 0 ] ||
    cat "$SDIR/crawl.err"
no_leak "the embedded crawl's summary and output" "$SDIR"

# ---- 3. a unix socket with requirepass ----
start_auth_redis unix --port 0 --unixsocket "$WORK/redis-unix/r.sock" --unixsocketperm 700
for i in $(seq 1 100); do [ -S "$WORK/redis-unix/r.sock" ] && break; sleep 0.05; done
acl_user -s "$WORK/redis-unix/r.sock"
"$DCRAWL" status --redis "unix://crawler:$EUPW@$WORK/redis-unix/r.sock?db=2" >"$WORK/e/unix1.out" 2>&1
check "unix://crawler:PW@/path?db=2" test $? -eq 0
check "unix status shows ***" grep -q "unix://crawler:\*\*\*@$WORK/redis-unix/r.sock?db=2" "$WORK/e/unix1.out"
DCRAWL_REDIS_PASSWORD=$PW "$DCRAWL" seed --redis "unix://$WORK/redis-unix/r.sock" "$WORK/one.txt" \
    >"$WORK/e/unix2.out" 2>&1
check "unix:///path + DCRAWL_REDIS_PASSWORD" test $? -eq 0
expect2 unix-noauth "redis $WORK/redis-unix/r.sock: authentication required" \
    "$DCRAWL" status --redis "unix:$WORK/redis-unix/r.sock"
no_leak "unix socket outputs" "$WORK/e"

# ---- 4. a Redis Cluster with requirepass and the ACL user ----
RC_PASS=$PW rcluster_start auth || { fail "cluster with requirepass starts"; finish; }
for p in "${RC_PORTS[@]}"; do acl_user -p "$p"; done
CURL=redis-cluster://crawler:$EUPW@${RC#redis-cluster://}
expect2 cluster-noauth "redis cluster 127.0.0.1:[0-9]*: authentication required (NOAUTH)" \
    "$DCRAWL" status --redis "$RC"
expect2 cluster-wrong "authentication failed (user crawler: WRONGPASS" \
    "$DCRAWL" seed --redis "redis-cluster://crawler:Cr4wl3r-no@${RC#redis-cluster://}" "$WORK/one.txt"
pserve site3 "$site" || { fail "site server 3"; finish; }
echo "http://$(origin a)/" >"$SDIR/seeds.txt"
"$DCRAWL" seed --redis "$CURL" --depth 3 "${set_[@]}" "$SDIR/seeds.txt" >"$SDIR/seed.log" 2>&1
check "seed on the cluster as crawler" test $? -eq 0
timeout 120 "$DCRAWL" node --redis "$CURL" --out "$SDIR/out" --exit-when-idle "${set_[@]}" \
    >"$SDIR/node.log" 2>&1 &
NODE=$!
for i in $(seq 1 100); do [ -s "$SDIR/requests.jsonl" ] && break; sleep 0.05; done
logged=0
for p in "${RC_PORTS[@]}"; do
    REDISCLI_AUTH=$PW redis-cli -p "$p" CLIENT LIST | grep -q ' user=crawler ' && logged=$((logged + 1))
done
check "the node is logged in as crawler on every master ($logged of 3)" test $logged -eq 3
# move 200 slots from the first master to the second while the node runs:
# its next commands on them get MOVED and go to the other master
REDISCLI_AUTH=$PW redis-cli --cluster reshard "127.0.0.1:${RC_PORTS[0]}" \
    --cluster-from "$(REDISCLI_AUTH=$PW redis-cli -p "${RC_PORTS[0]}" CLUSTER MYID)" \
    --cluster-to "$(REDISCLI_AUTH=$PW redis-cli -p "${RC_PORTS[1]}" CLUSTER MYID)" \
    --cluster-slots 200 --cluster-yes >"$SDIR/reshard.log" 2>&1
check "200 slots resharded mid-crawl" test $? -eq 0 || tail -5 "$SDIR/reshard.log"
wait $NODE
rc=$?
pstop
check "node on the cluster as crawler exits 0 (got $rc)" [ $rc -eq 0 ] || cat "$SDIR/node.log"
pycheck "every page fetched exactly once (cluster)" "$want_pages"
"$DCRAWL" status --redis "$CURL" >"$SDIR/status.txt" 2>&1
check "status on the cluster as crawler" test $? -eq 0
for w in $(find "$SDIR/out" -name '*.warc.gz'); do zcat "$w"; done >"$SDIR/warcs.txt"
no_leak "cluster crawl's logs, status, output, WARCs" "$SDIR"

# ---- 5. docker/redis-start.sh ----
D=$WORK/docker-redis
mkdir -p "$D/bin"
# the container's address: a fake `hostname -I` answering 127.0.0.2
printf '#!/bin/sh\necho 127.0.0.2\n' >"$D/bin/hostname"
chmod +x "$D/bin/hostname"
DPORT=$(rcluster_free_port)
sed -e "s|^dir .*|dir $D|" -e "s|^port .*|port $DPORT|" -e '/^loadmodule/d' \
    "$SRC/conf/redis.conf" >"$D/redis.conf"
printf '%s\n' "$PW" >"$D/secret"
(close_fds; PATH=$D/bin:$PATH REDIS_CONF=$D/redis.conf REDIS_PASSWORD_FILE=$D/secret \
    exec sh "$SRC/docker/redis-start.sh") >"$D/log" 2>&1 &
DPID=$!
REDIS_PIDS+=($DPID)
for i in $(seq 1 100); do redis-cli -h 127.0.0.2 -p "$DPORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
check "redis-start: NOAUTH without the password" \
    eval 'redis-cli -h 127.0.0.2 -p "$DPORT" ping 2>&1 | grep -q NOAUTH'
check "redis-start: PONG with it on 127.0.0.2 and 127.0.0.1" \
    eval '[ "$(REDISCLI_AUTH=$PW redis-cli -h 127.0.0.2 -p "$DPORT" ping)" = PONG ] &&
          [ "$(REDISCLI_AUTH=$PW redis-cli -h 127.0.0.1 -p "$DPORT" ping)" = PONG ]'
check "redis-start: protected-mode yes, bind 127.0.0.2 127.0.0.1" \
    eval '[ "$(REDISCLI_AUTH=$PW redis-cli -p "$DPORT" CONFIG GET protected-mode | tail -1)" = yes ] &&
          [ "$(REDISCLI_AUTH=$PW redis-cli -p "$DPORT" CONFIG GET bind | tail -1)" = "127.0.0.2 127.0.0.1" ]'
tr '\0' ' ' </proc/$DPID/cmdline >"$D/cmdline"
check "redis-start: redis-server is the process itself, its command line holds no password" \
    eval 'grep -q "^redis-server" "$D/cmdline" && [ -z "$(leaks "$D/cmdline")" ]'
rm -f "$D/secret"
(PATH=$D/bin:$PATH REDIS_CONF=$D/redis.conf REDIS_PASSWORD_FILE=$D/secret \
    sh "$SRC/docker/redis-start.sh") >"$D/nopw.out" 2>&1
rc=$?
check "redis-start without a password file: exit 2" \
    eval '[ $rc -eq 2 ] && grep -q "no password" "$D/nopw.out"'
finish
