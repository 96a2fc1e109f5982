#!/usr/bin/env bash
# e2e noise-state: the repeated rule's per-host state survives the host's
# partition moving to another node (<prefix>:{p}:noise in Redis).
#
# A one-host site (nginx on 127.0.1.1): every page has the same <nav> menu
# of MENU links and a paragraph of prose; index.html also links a.html.
# Node A (noise.block_rule=repeated) crawls from / to depth 2: its first
# page keeps the menu, the later ones drop it. Then b.html is seeded
# and node B, a new process with another id, crawls it: b.html is B's
# first page of the host. Three trials:
#   handover  A exits when idle (clean stop: state saved, partition
#             released); B must drop b.html's menu (MENU links dropped by
#             block) and say it took the host's state from Redis;
#   kill      A runs as a daemon and is killed with SIGKILL 1.5 s after its
#             pages are done (the state was saved by the periodic flush);
#             B takes the partition once A's lease lapses: the same;
#   control   as handover, but the noise hash is deleted before B starts:
#             B keeps b.html's menu (0 dropped), which shows that the
#             first two trials' drops come from the stored state.
# Each node run is bounded (60 s) and the whole test takes about 20 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
MENU=6
NODE_SET=(--set politeness.delay=0 --set noise.block_rule=repeated --set fetch.concurrency=4)

S=$WORK/site
H=127.0.1.1
mkdir -p "$S/hosts/$H"
printf 'User-agent: *\nAllow: /\n' >"$S/hosts/$H/robots.txt"
page() { # page NAME [EXTRA-HTML]
    local i nav=""
    for i in $(seq 1 $MENU); do nav="$nav<a href=/m$i.html>Menu $i</a> "; done
    cat >"$S/hosts/$H/$1.html" <<EOF
<!doctype html><html><head><title>$1</title></head><body>
<nav>$nav</nav>
<p>This is the page called $1. It holds a long paragraph of ordinary prose
that talks about its subject at some length, the way the body of a real
page does, so that the block is well below the link ratio. ${2:-}</p>
</body></html>
EOF
}
page index "Read on in <a href=/a.html>the first article</a>."
for i in $(seq 1 $MENU); do page "m$i"; done
page a
page b
echo "http://$H:8080/" >"$S/seeds1.txt"
echo "http://$H:8080/b.html" >"$S/seeds2.txt"
serve "$S" || exit 1

# dropped_block OUT URL: noise_dropped_block of URL's line in OUT's pages.jsonl
dropped_block() {
    "$DCRAWL" merge "$1" >/dev/null 2>&1 || { echo "merge $1 failed" >&2; return 1; }
    python3 - "$1/merged/pages.jsonl" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    if p["url"] == sys.argv[2]:
        print(p["noise_dropped_block"])
        break
else:
    print("absent")
PY
}

trial() { # trial MODE
    local mode=$1 i pend keys
    redis_start "$mode" || return 1
    OUTS=$WORK/$mode
    mkdir -p "$OUTS"
    "$DCRAWL" seed --redis "$R" --depth 2 "$S/seeds1.txt" >"$OUTS/seed1.log" 2>&1
    check "$mode: seed 1" [ $? -eq 0 ]
    if [ "$mode" = kill ]; then
        node_start A
        for i in $(seq 1 300); do # bounded: 30 s
            pend=$(frontier_pending "$R")
            [ "$pend" = 0 ] && [ "$(rcli "$R" --scan --pattern "$PREFIX:{*}:noise" | wc -l)" -gt 0 ] && break
            sleep 0.1
        done
        sleep 1.5 # more than one flush period after the last page
        node_kill9 A
        echo "$mode: node A killed (pending ${pend:-?})"
    else
        timeout 60 "$DCRAWL" node --redis "$R" --id A --out "$OUTS/A" --exit-when-idle \
            "${NODE_SET[@]}" "${CLUSTER_SET[@]}" >"$OUTS/A.log" 2>&1
        check "$mode: node A exits 0" [ $? -eq 0 ]
        grep "noise" "$OUTS/A.log"
        check "$mode: node A saved the host's noise state" \
            grep -Eq "noise state: 0 hosts taken from Redis, [1-9][0-9]* saved, 0 failed" "$OUTS/A.log"
    fi
    keys=$(rcli "$R" --scan --pattern "$PREFIX:{*}:noise")
    check "$mode: a noise hash holds the host ($keys)" \
        [ "$(for k in $keys; do rcli "$R" hexists "$k" "$H:8080"; done | grep -c 1)" = 1 ]
    for k in $keys; do
        echo "$mode: $k: HLEN $(rcli "$R" hlen "$k"), HSTRLEN $(rcli "$R" hstrlen "$k" "$H:8080")" \
            "bytes, MEMORY USAGE $(rcli "$R" memory usage "$k") bytes"
    done
    # the blob's page counter (byte 3, "dn" 1 <pages> ...): every page A
    # judged is in the stored state, the last ones included
    local judged stored
    "$DCRAWL" merge "$OUTS/A" >/dev/null 2>&1
    judged=$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["noise_seen"] > 0))' \
        "$OUTS/A/merged/pages.jsonl")
    stored=$(for k in $keys; do rcli "$R" hget "$k" "$H:8080"; done |
        python3 -c 'import sys; b = sys.stdin.buffer.read(); print(b[3] if len(b) > 3 and b[:3] == b"dn\x01" else -1)')
    check "$mode: the stored state counts all $judged pages A judged ($stored)" [ "$stored" = "$judged" ]
    check "$mode: A dropped the menu from its second page on (a.html)" \
        [ "$(dropped_block "$OUTS/A" "http://$H:8080/a.html")" = $MENU ]
    check "$mode: A kept the menu on its first page (index.html)" \
        [ "$(dropped_block "$OUTS/A" "http://$H:8080/")" = 0 ]
    if [ "$mode" = control ]; then
        for k in $keys; do rcli "$R" del "$k" >/dev/null; done
    fi
    "$DCRAWL" seed --redis "$R" "$S/seeds2.txt" >"$OUTS/seed2.log" 2>&1
    check "$mode: seed 2" [ $? -eq 0 ]
    timeout 60 "$DCRAWL" node --redis "$R" --id B --out "$OUTS/B" --exit-when-idle \
        "${NODE_SET[@]}" "${CLUSTER_SET[@]}" >"$OUTS/B.log" 2>&1
    check "$mode: node B exits 0" [ $? -eq 0 ]
    grep -E "noise|cluster:" "$OUTS/B.log"
    local got
    got=$(dropped_block "$OUTS/B" "http://$H:8080/b.html")
    if [ "$mode" = control ]; then
        check "$mode: B, with no stored state, keeps b.html's menu (dropped $got)" [ "$got" = 0 ]
        check "$mode: B took no state from Redis" \
            grep -q "noise state: 0 hosts taken from Redis" "$OUTS/B.log"
    else
        check "$mode: B drops b.html's menu, learned by A (dropped $got of $MENU)" [ "$got" = $MENU ]
        check "$mode: B took the host's state from Redis" \
            grep -q "noise state: 1 hosts taken from Redis" "$OUTS/B.log"
    fi
}

trial handover
trial kill
trial control
serve_stop
finish
