#!/usr/bin/env bash
# e2e status: `dcrawl status` against a real crawl.
#  1. usage errors exit 2; an unreachable Redis and a Redis error reply
#     exit 1 with one line on stderr; an empty Redis shows "no crawl".
#  2. after `dcrawl seed`: --json shows the seed count queued at depth 0,
#     their hosts ready, 0 nodes, and the partitions with work unowned.
#  3. while `dcrawl node --id n1` crawls a slow loopback site
#     (tests/e2e/polite_server.py, 0.3 s per page and politeness.delay
#     0.8, so the crawl lasts ~9 s and a host spends most of it waiting on
#     politeness, which the samples, ~0.3-0.6 s apart under sanitizers
#     and load, must catch): URLs in flight are seen and done
#     grows; after it: done per depth equals the lines of the node's
#     depth-<d>/*.jsonl, nothing queued or in flight. Node n1 is live
#     with partitions while it runs, and its PAGES/S is its pages over the
#     time it has run (it runs for less than the 10 s window), not over a
#     10 s window it has not lived yet.
#  4. --watch 1 (table, then JSON lines): polled until 2 frames are out
#     (at most 30 s), then SIGINT: exit 0, every frame whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/polite-lib.sh"
unset DCRAWL_REDIS_URL

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECONDS pass (1)
wait_until() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.1
    done
}

# jq-like field read: jget FILE PYTHON-EXPR (d = the JSON object); a
# tuple prints as its items separated by spaces
jget() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, tuple) else r)' "$1" "$2"
}

# ---- 1. usage and Redis errors ----
redis_start status || exit 1
"$DCRAWL" status >/dev/null 2>"$WORK/e1"
check "no --redis: exit 2" [ $? -eq 2 ]
"$DCRAWL" status --redis "$R" --bogus >/dev/null 2>"$WORK/e2"
check "unknown option: exit 2" [ $? -eq 2 ]
"$DCRAWL" status --redis "$R" --watch 0 >/dev/null 2>"$WORK/e3"
check "--watch 0: exit 2" [ $? -eq 2 ]
"$DCRAWL" status --redis "$R" extra >/dev/null 2>"$WORK/e4"
check "stray argument: exit 2" [ $? -eq 2 ]
"$DCRAWL" status --redis "nosuch://x" >/dev/null 2>"$WORK/e5"
check "malformed Redis URL: exit 2" [ $? -eq 2 ]
"$DCRAWL" status --redis "unix://$WORK/nosuch.sock" >/dev/null 2>"$WORK/e6"
rc=$?
check "unreachable Redis: exit 1, one line on stderr" [ $rc -eq 1 -a "$(wc -l <"$WORK/e6")" -eq 1 ]
"$DCRAWL" status --redis "$R" --json >"$WORK/empty.json" 2>&1
check "empty Redis: exit 0, crawl false, no nodes" [ $? -eq 0 -a "$(jget "$WORK/empty.json" 'd["crawl"], len(d["nodes"])')" = "False 0" ]
"$DCRAWL" status --redis "$R" >"$WORK/empty.txt" 2>&1
check "empty Redis: the table says there is no crawl" grep -q "^no crawl in this Redis" "$WORK/empty.txt"
check "status wrote nothing into the empty Redis" [ "$(redis-cli -s "${R#unix://}" dbsize)" = 0 ]
# a Redis error reply: the nodes key of another type
redis_start wrongtype || exit 1
RW=$R
printf 'http://127.0.0.1:9/\n' >"$WORK/one.txt"
"$DCRAWL" seed --redis "$RW" "$WORK/one.txt" >/dev/null 2>&1
redis-cli -s "${RW#unix://}" set dc:nodes notazset >/dev/null
"$DCRAWL" status --redis "$RW" >/dev/null 2>"$WORK/e7"
rc=$?
check "Redis error reply: exit 1, one line on stderr" [ $rc -eq 1 -a "$(wc -l <"$WORK/e7")" -eq 1 ]
redis_start status2 || exit 1

# ---- 2. after seeding ----
site='{"origins": {'
for h in a b; do
    ip=127.0.0.8$([ $h = a ] && echo 1 || echo 2)
    site+="\"$h\": {\"ip\": \"$ip\", \"delay\": 0.3, \"pages\": {"
    site+='"/": {"links": ["/p1", "/p2", "/p3", "/p4", "/p5"]},'
    site+='"/p1": {"links": ["/q1", "/q2"]}, "/p2": {}, "/p3": {}, "/p4": {}, "/p5": {},'
    site+='"/q1": {}, "/q2": {}}},'
done
site=${site%,}'}}'
pserve site "$site" || exit 1
for h in a b; do echo "http://$(origin $h)/"; done >"$SDIR/seeds.txt"
nseeds=$(wc -l <"$SDIR/seeds.txt")
"$DCRAWL" seed --redis "$R" --depth 2 "$SDIR/seeds.txt" >"$WORK/seed.log" 2>&1
check "seed exits 0" [ $? -eq 0 ]
"$DCRAWL" status --redis "$R" --json >"$WORK/seeded.json" 2>"$WORK/seeded.err"
check "status --json after seeding exits 0" [ $? -eq 0 ]
check "queued at depth 0 = the $nseeds seeds, none in flight, none done" \
    [ "$(jget "$WORK/seeded.json" 'd["depths"][0]["queued"], d["depths"][0]["inflight"], d["total"]["done"]')" = "$nseeds 0 0" ]
check "their $nseeds hosts ready at depth 0" \
    [ "$(jget "$WORK/seeded.json" 'd["depths"][0]["hosts"], d["depths"][0]["hosts_ready"]')" = "$nseeds $nseeds" ]
check "0 nodes, depths 0..2 shown (max_depth 2)" \
    [ "$(jget "$WORK/seeded.json" 'd["nodes_live"], len(d["nodes"]), len(d["depths"]), d["max_depth"]')" = "0 0 3 2" ]
check "partitions with work and no owner: one per seed host (at most)" \
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not 1 <= d["partitions"]["unowned_pending"] <= int(sys.argv[2]))' "$WORK/seeded.json" "$nseeds"
"$DCRAWL" status --redis "$R" >"$WORK/seeded.txt" 2>&1
check "table: no nodes, and the stall says work is queued with no live node" \
    grep -q "^stalls: $nseeds URLs queued and no live node" "$WORK/seeded.txt"

# ---- 3. while a node crawls ----
out=$WORK/out
"$DCRAWL" node --redis "$R" --id n1 --out "$out" --exit-when-idle --set noise.enabled=false \
    --set politeness.delay=0.8 --set fetch.timeout=20 >"$WORK/node.log" 2>&1 &
NODE=$!
mkdir -p "$WORK/samples"
i=0
t_end=$((SECONDS + 120))
while kill -0 $NODE 2>/dev/null && [ $SECONDS -lt $t_end ] && [ $i -lt 600 ]; do
    "$DCRAWL" status --redis "$R" --json >"$WORK/samples/$i.json" 2>>"$WORK/samples.err" || echo "rc $?" >>"$WORK/samples.err"
    i=$((i + 1))
    sleep 0.2
done
kill -0 $NODE 2>/dev/null && { kill -INT $NODE; fail "node still running after 120 s"; }
wait $NODE
rc=$?
check "node exits 0" [ $rc -eq 0 ] || tail -5 "$WORK/node.log"
check "every status during the crawl exited 0" [ ! -s "$WORK/samples.err" ]
echo "    $i status samples during the crawl"
python3 - "$WORK/samples" "$i" >"$WORK/samples.txt" <<'EOF'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
s = []
for i in range(n):
    try:
        s.append(json.load(open(os.path.join(d, "%d.json" % i))))
    except (OSError, ValueError):
        pass  # the last sample may have been cut short; counted below
done = [x["total"]["done"] for x in s]
infl = [x["total"]["inflight"] for x in s]
print("parsed", len(s))
print("done", " ".join(map(str, done)))
print("inflight_max", max(infl) if infl else -1)
print("done_monotonic", int(all(a <= b for a, b in zip(done, done[1:]))))
print("done_values", len(set(done)))
print("have_nodes", int(any(x["nodes"] for x in s)))
n1 = [y for x in s for y in x["nodes"] if y["id"] == "n1" and y["live"]]
print("n1_live_parts", max((y["parts"] for y in n1), default=-1))
print("n1_state", int(any(y["state"] in ("fetching", "politeness", "idle", "level-wait", "draining") for y in n1)))
print("polite_seen", max((x["stalls"]["hosts_politeness"] for x in s), default=-1))
# PAGES/S while n1 has run for less than the 10 s window: its pages over
# the time it has run (the heartbeat writes pages, started_ms, updated_ms
# and pages_s together; pages_s has one decimal)
young = [y for y in n1 if y["pages"] and 1000 <= y["updated_ms"] - y["started_ms"] < 9000]
bad = [(y["pages"], y["updated_ms"] - y["started_ms"], y["pages_s"]) for y in young
       if abs(y["pages_s"] - y["pages"] * 1000.0 / (y["updated_ms"] - y["started_ms"])) > 0.1]
print("rate_young", len(young))
print("rate_bad", len(bad), *bad[:3])
EOF
val() { awk -v k="$1" '$1 == k {print $2}' "$WORK/samples.txt"; }
echo "    done over time: $(grep '^done ' "$WORK/samples.txt" | cut -d' ' -f2- | tr ' ' '\n' | uniq | tr '\n' ' ')"
check "status samples parsed (at least 5)" [ "$(val parsed)" -ge 5 ]
check "URLs in flight seen during the crawl" [ "$(val inflight_max)" -gt 0 ]
check "done grows during the crawl (never down, 3+ distinct values)" \
    [ "$(val done_monotonic)" = 1 -a "$(val done_values)" -ge 3 ]
check "hosts waiting on politeness seen during the crawl" [ "$(val polite_seen)" -gt 0 ]
check "membership: node n1 live with partitions > 0 while it ran" [ "$(val n1_live_parts)" -gt 0 ]
check "membership: node n1 reports a known state" [ "$(val n1_state)" = 1 ]
echo "    pages/s samples of n1 in its first 9 s: $(val rate_young); off: $(grep '^rate_bad ' "$WORK/samples.txt" | cut -d' ' -f2-)"
check "PAGES/S before 10 s = pages / time run so far (2+ samples)" \
    [ "$(val rate_young)" -ge 2 -a "$(val rate_bad)" = 0 ]

# ---- after the crawl ----
"$DCRAWL" status --redis "$R" --json >"$WORK/after.json" 2>&1
check "status after the crawl exits 0" [ $? -eq 0 ]
per_depth_ok=1
for d in 0 1 2; do
    lines=$(cat "$out/depth-$d"/*.jsonl 2>/dev/null | wc -l)
    got=$(jget "$WORK/after.json" "d['depths'][$d]['done'] + d['depths'][$d]['failed']")
    echo "    depth $d: status done+failed $got, jsonl lines $lines"
    [ "$got" = "$lines" ] && [ "$lines" -gt 0 ] || per_depth_ok=0
done
check "done + failed per depth = the node's jsonl lines per depth" [ $per_depth_ok = 1 ]
check "the site's 16 pages done (2 / 10 / 4 per depth), none failed" \
    [ "$(jget "$WORK/after.json" '[x["done"] for x in d["depths"]], d["total"]["failed"]')" = "[2, 10, 4] 0" ]
check "nothing queued or in flight after the crawl" \
    [ "$(jget "$WORK/after.json" 'd["total"]["queued"], d["total"]["inflight"], d["total"]["hosts"]')" = "0 0 0" ]
"$DCRAWL" status --redis "$R" >"$WORK/after.txt" 2>&1
check "table after the crawl: total line with 16 done" grep -Eq "^  total +0 +0 +0 +0 +0 +0 +16 +0 +0$" "$WORK/after.txt"
pstop

# ---- 4. --watch ----
# frames FILE PATTERN N: at least N lines of FILE match PATTERN
frames() { [ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ]; }
# watch_run OUT PATTERN ARGS...: `dcrawl status --watch 1 ARGS` until OUT
# holds 2 lines matching PATTERN (the last line of a frame) or 30 s pass,
# then SIGINT; returns its exit status
watch_run() {
    local out=$1 pat=$2 w
    shift 2
    "$DCRAWL" status --redis "$R" --watch 1 "$@" >"$out" 2>"$WORK/watch.err" &
    w=$!
    wait_until 30 frames "$out" "$pat" 2
    kill -INT $w
    wait $w
}
watch_run "$WORK/watch.txt" "^stalls: [0-9]* hosts waiting on politeness"
rc=$?
n=$(grep -c "^dcrawl status: " "$WORK/watch.txt")
echo "    --watch 1: $n frames"
check "--watch 1 ended by SIGINT: exit 0, >= 2 frames" [ $rc -eq 0 -a "$n" -ge 2 ]
watch_run "$WORK/watch.jsonl" '"roundtrips":[0-9]*}$' --json
rc=$?
check "--json --watch 1 ended by SIGINT: exit 0, >= 2 JSON lines, each a whole object" \
    python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
sys.exit(not (int(sys.argv[2]) == 0 and len(objs) >= 2 and all("depths" in o for o in objs)))' "$WORK/watch.jsonl" $rc

finish
